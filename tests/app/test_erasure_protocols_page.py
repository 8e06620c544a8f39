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


def test_the_sweep_shows_the_sentences_its_numbers_make():
    result = json.loads(
        (ROOT / "results/interventions/minilm-l6-mlm__ud-ewt__pos__erase-leace.json").read_text()
    )
    at = AppTest.from_file(str(ROOT / "pages" / "8_Interventions.py"), default_timeout=300)
    at.session_state["models"] = ["minilm-l6-mlm"]
    at.run()
    assert not at.exception, at.exception
    shown = " ".join(m.value for m in at.markdown).replace("\\", "")
    for sentence in summary_sentences(result):
        assert sentence in shown
    if has_heldout(result):
        assert "In-sample" in shown and "Held-out" in shown
        assert len(at.get("plotly_chart")) >= 3  # sweep, fit-set curve, recovery
    chart = json.loads(at.get("plotly_chart")[0].proto.spec)
    names = {t.get("name") for t in chart["data"]}
    assert "LEACE, in-sample probe" in names
    assert ("LEACE, held-out probe" in names) == has_heldout(result)
