"""The Interventions page and the head-importance toggle of the Attention page's model view,
driven by streamlit's AppTest with the real embedded models and the committed results."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

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
