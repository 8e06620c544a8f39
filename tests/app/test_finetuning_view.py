"""The Course Notes section "What fine-tuning changes", driven by AppTest on the committed
run in results/finetune/ (and without it)."""

from __future__ import annotations

import json
from pathlib import Path

from streamlit.testing.v1 import AppTest

RESULTS = Path(__file__).resolve().parents[2] / "results" / "finetune"


def _section() -> None:
    from ui.views import finetuning

    finetuning.render()


def _titles(at: AppTest) -> list[str]:
    return [json.loads(c.proto.spec)["layout"]["title"]["text"] for c in at.get("plotly_chart")]


def test_the_section_draws_the_committed_run():
    at = AppTest.from_function(_section, default_timeout=120)
    at.run()
    assert not at.exception, at.exception
    titles = _titles(at)
    assert any(t.startswith("linear CKA") for t in titles)
    assert any(t.startswith("mean cosine distance") for t in titles)
    assert any(t.startswith("UPOS probe accuracy") for t in titles)
    assert any(t.startswith("genre probe accuracy") for t in titles)
    # one sentence per row of every comparison family, each with its engine numbers
    comparisons = json.loads((RESULTS / "comparisons.json").read_text(encoding="utf-8"))
    text = "\n".join(m.value for m in at.markdown)
    for table in comparisons.values():
        for row in table["rows"]:
            assert f"{row['a']}" in text and f"{row['b']}" in text
            assert f"first − second {100 * row['diff']:+.2f} [{100 * row['ci_low']:+.2f}" in text
    card = json.loads((RESULTS / "card.json").read_text(encoding="utf-8"))
    captions = " ".join(c.value for c in at.caption)
    assert all(
        f"{key}: {run['n_train']} sentences" in captions for key, run in card["runs"].items()
    )


def test_without_a_run_the_section_says_how_to_make_one(tmp_path, monkeypatch):
    monkeypatch.setenv("CONTEXTLENS_RESULTS_DIR", str(tmp_path))
    at = AppTest.from_function(_section, default_timeout=60)
    at.run()
    assert not at.exception, at.exception
    assert any("results/finetune/make.py" in i.value for i in at.info)
    assert not at.get("plotly_chart")
