"""Inputs survive page changes and reloads (a permalink in the address), driven by AppTest."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

REPO = Path(__file__).resolve().parents[2]
APP = str(REPO / "app.py")


def test_typed_inputs_survive_page_changes(minilm):
    at = AppTest.from_file(APP, default_timeout=180).run()
    at.switch_page("pages/2_Fill_Mask.py").run()
    at.text_area(key="fill_mask_text").input("Paris is the [MASK] of France.").run()
    at.switch_page("pages/4_Probing.py").run()
    at.selectbox(key="probe_task").set_value("supersense").run()
    at.switch_page("pages/3_Attention.py").run()
    at.text_area(key="attn_text").input("The cat sat on the mat.").run()
    at.switch_page("pages/1_Static_vs_Contextual.py").run()
    at.text_input(key="sc_target").input("bank").run()
    at.switch_page("pages/2_Fill_Mask.py").run()
    assert not at.exception, at.exception
    assert at.text_area(key="fill_mask_text").value == "Paris is the [MASK] of France."
    at.switch_page("pages/4_Probing.py").run()
    assert at.selectbox(key="probe_task").value == "supersense"
    at.switch_page("pages/3_Attention.py").run()
    assert at.text_area(key="attn_text").value == "The cat sat on the mat."
    assert not at.exception and not at.warning, [w.value for w in at.warning]


def test_a_permalink_opens_with_its_model_sentence_layer_and_head(minilm):
    at = AppTest.from_file(str(REPO / "pages" / "3_Attention.py"), default_timeout=180)
    at.query_params["model"] = "minilm-l6"
    at.query_params["sentence"] = "The keys to the cabinet are on the table."
    at.query_params["layer"] = "5"
    at.query_params["head"] = "7"
    at.run()
    assert not at.exception, at.exception
    assert at.text_area(key="attn_text").value == "The keys to the cabinet are on the table."
    at.radio(key="attn_view").set_value("Model view").run()
    assert at.selectbox(key="attn_mv_layer").value == 5
    assert at.selectbox(key="attn_mv_head").value == 7
    # and the address follows the inputs: a link that reopens this view
    at.selectbox(key="attn_mv_head").set_value(3).run()
    params = dict(at.query_params)
    assert params["model"] == ["minilm-l6"] or params["model"] == "minilm-l6"
    assert "3" in str(params["head"]) and "5" in str(params["layer"])
    assert "cabinet" in str(params["sentence"])


def test_a_permalink_with_a_layer_the_model_lacks_falls_back(minilm):
    at = AppTest.from_file(str(REPO / "pages" / "3_Attention.py"), default_timeout=180)
    at.query_params["layer"] = "40"
    at.query_params["head"] = "x"
    at.run()
    at.radio(key="attn_view").set_value("Model view").run()
    assert not at.exception, at.exception
    assert at.selectbox(key="attn_mv_layer").value == 1
    assert at.selectbox(key="attn_mv_head").value == 0


def test_a_permalink_task_opens_the_probing_page_on_it(minilm):
    at = AppTest.from_file(str(REPO / "pages" / "4_Probing.py"), default_timeout=180)
    at.query_params["task"] = "wsd"
    at.run()
    assert not at.exception, at.exception
    assert at.selectbox(key="probe_task").value == "wsd"
