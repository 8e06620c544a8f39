"""The Static vs Contextual page with the real default model, driven by streamlit's AppTest."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "1_Static_vs_Contextual.py")


def charts(at: AppTest) -> list:
    return list(at.get("plotly_chart"))


def errors(at: AppTest) -> list[str]:
    return [e.value for e in at.error]


@pytest.fixture
def page() -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=300).run()
    assert not at.exception, at.exception
    return at


def test_renders_default_model_offline(page):
    assert page.title[0].value == "Static vs Contextual"
    assert page.sidebar.multiselect[0].value == ["minilm-l6"]
    assert not page.error
    assert len(charts(page)) == 2  # similarity by layer + pair heatmap
    captions = " ".join(c.value for c in page.caption)
    assert "static vectors: cosine 1.000" in captions
    assert len(page.dataframe) == 1  # nearest neighbours, one row per layer + static
    nn = page.dataframe[0].value
    assert list(nn.index) == ["static", "embeddings", *(f"layer {k}" for k in range(1, 7))]
    assert nn.shape[1] == 4  # the four occurrences of "bank" in the default text


@pytest.mark.parametrize(
    ("text", "target", "message"),
    [
        ("", "bank", "two or more sentences"),
        ("Only one sentence about a bank.", "bank", "Only one sentence"),
        ("The river shore.\nA loan from the banks.", "bank", "does not occur"),
    ],
)
def test_bad_input_gives_one_clear_message(page, text, target, message):
    page.text_area(key="sc_text").input(text)
    page.text_input(key="sc_target").input(target).run()
    assert not page.exception
    assert len(page.error) == 1 and message in page.error[0].value
    assert not charts(page)


def test_picking_occurrences(page):
    picks = page.multiselect[0]
    assert len(picks.options) == 4
    picks.set_value([0, 1]).run()
    assert not page.exception and not page.error
    picks = page.multiselect[0]
    picks.set_value([0]).run()
    assert not page.exception and len(page.warning) == 1 and not charts(page)


def test_sense_geometry_view(page):
    page.radio(key="sc_view").set_value("Sense geometry").run()
    assert not page.exception and not page.error
    assert len(charts(page)) == 2  # the map and the separability curves
    table = page.dataframe[0].value
    assert table["layer_name"].tolist()[:2] == ["static", "embeddings"]
    assert any("SemCor occurrences" in c.value for c in page.caption)
    page.text_input(key="sc_lemma").input("wife").run()
    assert not page.exception
    assert len(page.error) == 1 and "needs two or more" in page.error[0].value


def test_contextuality_view(page):
    page.radio(key="sc_view").set_value("Contextuality").run()
    assert not page.exception and not charts(page)
    page.number_input(key="sc_ctx_n").set_value(30).run()
    page.button(key="sc_ctx_run").click().run()
    assert not page.exception and not page.error
    assert len(charts(page)) == 1
    assert page.dataframe[0].value["layer_name"].iloc[0] == "static"


def test_static_vectors_file(page, tmp_path):
    glove = tmp_path / "glove.txt"
    glove.write_text("bank 1 0 0.5\nriver 0.9 0.1 0.4\nmoney -1 0.5 0.5\nloan -0.8 0.6 0.4\n")
    page.radio(key="sc_view").set_value("GloVe / word2vec").run()
    page.text_input(key="sc_static_path").input(str(tmp_path / "missing.txt")).run()
    assert not page.exception and len(page.error) == 1 and "not found" in page.error[0].value
    page.text_input(key="sc_static_path").input(str(glove)).run()
    assert not page.exception and not page.error
    assert "4 words × 3 dims" in page.success[0].value
    assert any("account" in w.value for w in page.warning)  # said, not silently dropped
    # The loaded vectors join the other views: a reference note and a separability row.
    page.radio(key="sc_view").set_value("Compare occurrences").run()
    assert not page.exception and any("glove.txt" in c.value for c in page.caption)
    page.radio(key="sc_view").set_value("Sense geometry").run()
    assert not page.exception and "glove.txt" in page.dataframe[0].value["model"].tolist()


def test_demo_mode_has_no_file_path_input(monkeypatch):
    monkeypatch.setenv("CONTEXTLENS_DEMO", "1")
    at = AppTest.from_file(PAGE, default_timeout=300).run()
    at.radio(key="sc_view").set_value("GloVe / word2vec").run()
    assert not at.exception
    assert not at.text_input and "shared demo" in at.info[0].value


def test_two_models_of_different_depth_share_a_relative_depth_axis():
    at = AppTest.from_file(PAGE, default_timeout=300)
    at.session_state["sc_nn"] = False
    at.run()
    at.sidebar.multiselect[0].set_value(["minilm-l6", "elmo-mini"]).run()
    assert not at.exception and not at.error
    assert any("relative depth" in c.value for c in at.caption)
    fig = charts(at)[0]
    assert "relative depth" in fig.proto.spec
