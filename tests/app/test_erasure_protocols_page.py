"""The Interventions page's erasure sweep states both protocols through the sentences made
from the committed run's numbers (probing.interventions.erasure_summary), not by hand."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from probing.interventions.erasure_summary import has_heldout, summary_sentences

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def local_mode(monkeypatch):
    monkeypatch.delenv("CONTEXTLENS_DEMO", raising=False)


# The 6-layer and the 12-layer masked LMs with committed sweeps (mpnet-base-mlm: issue 43).
@pytest.mark.parametrize("model", ["minilm-l6-mlm", "mpnet-base-mlm"])
def test_the_sweep_shows_the_sentences_its_numbers_make(model):
    result = json.loads(
        (ROOT / f"results/interventions/{model}__ud-ewt__pos__erase-leace.json").read_text()
    )
    assert result["spec"]["model"] == model
    at = AppTest.from_file(str(ROOT / "pages" / "8_Interventions.py"), default_timeout=300)
    at.session_state["models"] = [model]
    at.run()
    assert not at.exception, at.exception
    shown = " ".join(m.value for m in at.markdown).replace("\\", "")
    for sentence in summary_sentences(result):
        assert sentence in shown
    if has_heldout(result):
        assert "In-sample" in shown and "Held-out" in shown
        # the sweep, the fit-set curve, the recovery (where the run made it)
        assert len(at.get("plotly_chart")) >= 1 + bool(result["curve"]) + bool(result["recovery"])
    chart = json.loads(at.get("plotly_chart")[0].proto.spec)
    names = {t.get("name") for t in chart["data"]}
    assert "LEACE, in-sample probe" in names
    assert ("LEACE, held-out probe" in names) == has_heldout(result)
