"""The Interventions page and the head-importance toggle of the Attention page's model view,
driven by streamlit's AppTest with the real embedded models and the committed results."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from streamlit.testing.v1 import AppTest

if TYPE_CHECKING:
    from streamlit.testing.v1.element_tree import Selectbox

PAGES = Path(__file__).resolve().parents[2] / "pages"


@pytest.fixture(autouse=True)
def local_mode(monkeypatch):
    monkeypatch.delenv("CONTEXTLENS_DEMO", raising=False)


def test_interventions_page_opens_the_committed_sweep():
    at = AppTest.from_file(str(PAGES / "8_Interventions.py"), default_timeout=300)
    at.session_state["models"] = ["elmo-mini"]
    at.run()
    assert not at.exception, at.exception
    assert at.title[0].value == "Interventions"
    assert any("LEACE erasure fitted on 400 training sentences" in c.value for c in at.caption)
    assert len(at.get("plotly_chart")) >= 2  # the sweep and the recovery map


def test_interventions_page_patches_your_pair():
    at = AppTest.from_file(str(PAGES / "8_Interventions.py"), default_timeout=300).run()
    assert not at.exception, at.exception
    at.button(key="iv_patch").click().run()
    assert not at.exception and not at.error
    assert any("Fraction of the logit difference" in c.value for c in at.caption)


def _pair_chart(at: AppTest) -> dict:
    """The typed pair's layer × role map (its plotly JSON)."""
    charts = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    mine = [c for c in charts if "Your pair" in c["layout"]["title"]["text"]]
    assert len(mine) == 1, [c["layout"]["title"]["text"] for c in charts]
    return mine[0]


def _attractor_box(at: AppTest) -> Selectbox:
    boxes = [s for s in at.selectbox if s.label.startswith("Attractor")]
    assert len(boxes) == 1
    return boxes[0]


def _patch(a: str, b: str, attractor: int | None = None) -> AppTest:
    """Type the pair, mark the attractor (a word index; None: keep the page's preset),
    click "Check and patch"."""
    at = AppTest.from_file(str(PAGES / "8_Interventions.py"), default_timeout=300).run()
    at.text_input(key="iv_pair_a").set_value(a).run()
    at.text_input(key="iv_pair_b").set_value(b).run()
    if attractor is not None:
        _attractor_box(at).set_value(attractor).run()
    at.button(key="iv_patch").click().run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    return at


def _column(chart: dict, role: str) -> list[float]:
    heat = chart["data"][0]
    j = heat["x"].index(role)
    return [row[j] for row in heat["z"]]


def test_your_pair_measures_the_attractor_it_marks():
    """The page's pair: the attractor ("tables"/"table", a word that differs besides the
    subject) is preset and measured, not lumped into "other" at 0.00 on every layer; one
    pair's cells are point values, not "(x–x)" intervals."""
    at = AppTest.from_file(str(PAGES / "8_Interventions.py"), default_timeout=300).run()
    box = _attractor_box(at)
    assert box.value == 4 and "tables" in box.options[box.index]
    at.button(key="iv_patch").click().run()
    assert not at.exception and not at.error
    chart = _pair_chart(at)
    assert chart["data"][0]["x"] == ["subject", "attractor", "verb", "other"]
    assert any(abs(v) > 0.01 for v in _column(chart, "attractor"))
    assert chart["data"][0]["colorbar"]["title"]["text"] == "fraction moved"
    cells = [t for row in chart["data"][0]["text"] for t in row]
    assert cells and not any("(" in t or "–" in t for t in cells), cells[:3]
    said = " ".join(c.value for c in at.caption)
    assert "Attractor: “tables”" in said and "no interval" in said


def test_a_pair_with_no_attractor_marked_has_no_attractor_column():
    """Only the subject differs: nothing is preset, the column is left out and the caption
    says so; marking "cabinets" brings the column back, measured."""
    a, b = "The key to the cabinets [MASK] here.", "The keys to the cabinets [MASK] here."
    at = _patch(a, b)
    assert _attractor_box(at).value is None
    assert "attractor" not in _pair_chart(at)["data"][0]["x"]
    assert any("No attractor marked" in c.value for c in at.caption)
    at = _patch(a, b, attractor=4)
    assert any(abs(v) > 0.01 for v in _column(_pair_chart(at), "attractor"))


def test_a_pair_the_model_gets_wrong_is_not_shown_as_fractions():
    """minilm-l6-mlm prefers the wrong form on both sentences: d_source − d_base < 0. The
    page warns and draws the change in logits, not "fractions" of a negative number."""
    at = _patch("The picture of the cars [MASK] here.", "The pictures of the car [MASK] here.")
    assert sum("does not agree" in m.value for m in at.markdown) == 2
    warned = [w.value for w in at.warning if "Not shown as fractions" in w.value]
    assert len(warned) == 1 and "wrong sign" in warned[0]
    chart = _pair_chart(at)
    assert chart["data"][0]["colorbar"]["title"]["text"] != "fraction moved"
    assert any("Change of the logit difference" in c.value for c in at.caption)
    assert not any(c.value.startswith("Fraction") for c in at.caption)


def test_bad_pair_is_a_message_not_a_traceback():
    at = AppTest.from_file(str(PAGES / "8_Interventions.py"), default_timeout=300).run()
    at.text_input(key="iv_pair_b").set_value("The many keys [MASK] here.").run()
    at.button(key="iv_patch").click().run()
    assert not at.exception
    assert at.error and "words" in at.error[0].value


def test_elmo_heads_tab_says_which_models_have_a_head():
    at = AppTest.from_file(str(PAGES / "8_Interventions.py"), default_timeout=300)
    at.session_state["models"] = ["elmo-mini"]
    at.run()
    assert not at.exception
    # An LSTM has no heads: a plain message (not an error box) naming models that have some.
    assert any("no attention heads" in i.value and "minilm-l6-mlm" in i.value for i in at.info)


def test_attention_model_view_draws_head_importance_on_request():
    if not (
        PAGES.parent / "results/interventions/minilm-l6-mlm__ud-ewt__ablate-heads.json"
    ).is_file():
        pytest.skip("the ablation run is not committed")
    at = AppTest.from_file(str(PAGES / "3_Attention.py"), default_timeout=180).run()
    at.radio(key="attn_view").set_value("Model view").run()
    n = len(at.get("plotly_chart"))
    at.toggle(key="attn_imp").set_value(True).run()
    assert not at.exception
    assert len(at.get("plotly_chart")) == n + 1


def test_elmo_mini_offers_its_lm_and_says_why_heads_do_not_apply():
    """elmo-mini: the erasure sweep with its bi-LM effect, agreement beside minilm-l6-mlm's,
    your pair patched with its forward LM, and a plain message instead of head toggles."""
    at = AppTest.from_file(str(PAGES / "8_Interventions.py"), default_timeout=300)
    at.session_state["models"] = ["elmo-mini"]
    at.run()
    assert not at.exception, at.exception
    assert any("bi-LM loss/top-1" in c.value for c in at.caption)
    assert any("is an LSTM (ELMo): it has no attention heads" in i.value for i in at.info)
    assert any("left context only" in c.value for c in at.caption)  # agreement side by side
    at.button(key="iv_patch").click().run()
    assert not at.exception and not at.error
    assert any("forward LM's log-probability difference" in c.value for c in at.caption)


@pytest.fixture
def streamlit_warnings(monkeypatch):
    """Streamlit's log warnings while a test runs (its loggers do not propagate, and it
    warns about a widget's value set twice only once per process: that flag is reset)."""
    import logging

    from streamlit.elements.lib import policies

    monkeypatch.setattr(policies, "_shown_default_value_warning", False)
    seen: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            seen.append(record.getMessage())

    handler = Keep(level=logging.WARNING)
    policies._LOGGER.addHandler(handler)
    yield seen
    policies._LOGGER.removeHandler(handler)


def test_sentence_boxes_raise_no_value_set_twice_warning(streamlit_warnings):
    """The page's persisted text boxes (iv_text, the pair) take their value from session
    state only: no "created with a default value but also had its value set via the
    Session State API" warning, on the first run or after a typed change."""
    at = AppTest.from_file(str(PAGES / "8_Interventions.py"), default_timeout=300).run()
    assert not at.exception, at.exception
    at.text_input(key="iv_text").set_value("The dogs near the car [MASK] loud.").run()
    assert not at.exception, at.exception
    twice = [m for m in streamlit_warnings if "Session State API" in m]
    assert not twice, twice


def test_fitting_the_eraser_runs_in_the_worker_and_comes_back_usable(monkeypatch):
    """The eraser fit is a background job in a worker process (not the server's threads,
    where it would share the cached model); its kit crosses the worker's pipe and the page
    then shows the labels before and after erasure."""
    from ui import background, worker

    monkeypatch.setenv("CONTEXTLENS_JOB_WORKERS", "1")
    assert worker.enabled()
    at = AppTest.from_file(str(PAGES / "8_Interventions.py"), default_timeout=300).run()
    at.button(key="iv_fit").click().run()
    runs = [r for r in background._runs().values() if r.label == "Erasure"]
    assert runs
    for run in runs:
        assert run.done.wait(300)
        assert run.error is None, run.error
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert any("erased at layer 3" in c.value for c in at.caption)
    assert len(at.dataframe) >= 2  # fill-mask before/after and the labels before/after
