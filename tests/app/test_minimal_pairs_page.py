"""The Interventions page's "Minimal pairs" tab through streamlit's AppTest: the committed
runs' accuracy per paradigm, and a typed pair scored piece by piece."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from streamlit.testing.v1 import AppTest

if TYPE_CHECKING:
    from streamlit.testing.v1 import AppTest

PAGES = Path(__file__).resolve().parents[2] / "pages"


@pytest.fixture(autouse=True)
def local_mode(monkeypatch):
    monkeypatch.delenv("CONTEXTLENS_DEMO", raising=False)


def _charts(at: AppTest) -> dict[str, dict]:
    charts = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    return {c["layout"]["title"]["text"]: c for c in charts}


@pytest.mark.parametrize("model", ["minilm-l6-mlm", "elmo-mini"])
def test_minimal_pairs_tab_shows_runs_and_scores_a_pair(model):
    at = AppTest.from_file(str(PAGES / "8_Interventions.py"), default_timeout=300)
    at.session_state["models"] = [model]
    at.run()
    assert not at.exception, at.exception
    charts = _charts(at)
    acc = next(c for t, c in charts.items() if t.startswith("Minimal pairs: accuracy"))
    paradigms = set(acc["data"][0]["y"])
    assert {"template: simple", "ud: determiner-noun number"} <= paradigms
    assert any("perplexity" in c.value for c in at.caption)
    at.text_input(key="mp_good").set_value("The authors are here.").run()
    at.text_input(key="mp_bad").set_value("The authors is here.").run()
    at.button(key="mp_score").click().run()
    assert not at.exception and not at.error, (at.exception, at.error)
    units = next(c for t, c in _charts(at).items() if t.startswith("Your pair"))
    good, bad = units["data"]
    # One bar per scored unit of each sentence: the words' pieces (ELMo: words + ends).
    assert len(good["x"]) == len(bad["x"]) >= 4
    assert any("nats" in m.value for m in at.markdown)
