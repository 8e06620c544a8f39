"""The Attention page with the real default model, driven by streamlit's AppTest (no browser)."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "3_Attention.py")


def charts(at: AppTest) -> list:
    return list(at.get("plotly_chart"))


@pytest.fixture(autouse=True)
def local_mode(monkeypatch):
    """Local (not demo) limits: the demo's 2,000-character cap would stop the long input first."""
    monkeypatch.delenv("CONTEXTLENS_DEMO", raising=False)


@pytest.fixture
def page() -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=180).run()
    assert not at.exception, at.exception
    return at


def test_renders_default_model_with_head_view(page):
    assert page.title[0].value == "Attention"
    assert page.sidebar.multiselect[0].value == ["minilm-l6"]
    assert not page.error
    assert len(charts(page)) == 1  # the head view
    assert page.radio(key="attn_level").value == "word"
    labels = [b.label for b in page.get("download_button")]
    assert "CSV" in labels and ("PNG" in labels or "HTML" in labels)


def test_every_view_shows_figures(page):
    page.radio(key="attn_view").set_value("Model view").run()
    assert not page.exception and not page.error
    assert len(charts(page)) == 2  # the grid and the chosen head, large
    page.selectbox(key="attn_mv_layer").set_value(4)
    page.selectbox(key="attn_mv_head").set_value(7).run()
    assert not page.exception and len(charts(page)) == 2

    page.radio(key="attn_view").set_value("Head statistics").run()
    assert not page.exception and not page.error
    assert len(charts(page)) == 1


def test_levels_special_tokens_and_focus_token(page):
    page.multiselect(key="attn_focus").set_value([3]).run()
    assert not page.exception and len(charts(page)) == 1
    page.radio(key="attn_level").set_value("piece").run()
    page.toggle(key="attn_special").set_value(False).run()
    assert not page.exception and not page.error
    tokens = page.multiselect(key="attn_focus").options
    assert not any("[CLS]" in t or "[SEP]" in t for t in tokens)


def test_sentence_pair(page):
    page.text_input(key="attn_text_b").input("It was very tired indeed.").run()
    assert not page.exception and not page.error
    options = page.multiselect(key="attn_focus").options
    assert sum("[SEP]" in o for o in options) == 2 and any("indeed" in o for o in options)


def test_corpus_statistics_over_ud_ewt_dev(page):
    page.radio(key="attn_view").set_value("Head statistics").run()
    page.radio(key="attn_stats_source").set_value(
        page.radio(key="attn_stats_source").options[1]
    ).run()
    page.number_input(key="attn_n").set_value(10).run()
    assert len(charts(page)) == 0
    page.button(key="attn_run").click().run()
    assert not page.exception and not page.error
    assert len(charts(page)) == 1


def test_long_input_gives_one_clear_error(page):
    page.text_area(key="attn_text").input(" ".join(["word"] * 700)).run()
    assert not page.exception
    assert len(page.error) == 1
    assert "at most 512" in page.error[0].value and "Shorten" in page.error[0].value
    assert not charts(page)
    page.text_area(key="attn_text").input("  ").run()
    assert not page.exception and len(page.error) == 1 and "no words" in page.error[0].value


def test_elmo_gets_an_info_message_not_an_error(monkeypatch, data_dir):
    """The has_attention=False path, with AllenNLP's ELMo fixture standing in for elmo-mini."""
    import ui.common
    from probing.encoders.elmo import load_elmo

    folder = data_dir / "allennlp-elmo-fixture"
    elmo = load_elmo((folder / "options.json", folder / "lm_weights.hdf5"), name="elmo-mini")
    real = ui.common.load_model
    monkeypatch.setattr(
        ui.common, "load_model", lambda name: elmo if name == "elmo-mini" else real(name)
    )
    at = AppTest.from_file(PAGE, default_timeout=180).run()
    at.sidebar.multiselect[0].set_value(["elmo-mini"]).run()
    assert not at.exception and not at.error
    assert any("no attention" in i.value for i in at.info)
    assert not charts(at) and not at.text_area


def test_without_chrome_figures_download_as_html(monkeypatch):
    import probing.figures.export as export

    monkeypatch.setattr(export, "image_export_available", lambda: False)
    at = AppTest.from_file(PAGE, default_timeout=180).run()
    assert not at.exception and not at.error
    labels = [b.label for b in at.get("download_button")]
    assert "HTML" in labels and "PNG" not in labels and "CSV" in labels
    assert any("needs a Chrome" in c.value for c in at.caption)


def head_view_html(at: AppTest) -> str:
    """The HTML of the (first) head view on the page."""
    return at.get("iframe")[0].proto.srcdoc


def test_head_view_has_a_key_naming_each_head_colour(page):
    # issue 46: the head view's lines were coloured by head with nothing saying which is which
    import json
    import re

    from probing.figures.attention import head_colour

    page.multiselect(key="attn_hv_heads").set_value([2, 7]).run()
    assert not page.exception
    data = json.loads(re.search(r"const D = (\{.*?\});\n", head_view_html(page)).group(1))
    assert data["key"] == [["head 2", head_colour(2)], ["head 7", head_colour(7)]]
    assert "getElementById('key')" in head_view_html(page)  # drawn above the lines


def test_rollout_and_back_keeps_the_chosen_heads(page):
    # issue 46: rollout has one map per layer ("head 0"); coming back to raw weights found
    # head 0 instead of the head picked before
    page.multiselect(key="attn_hv_heads").set_value([3, 5]).run()
    page.radio(key="attn_weights").set_value("rollout").run()
    assert not page.exception and not page.error
    page.radio(key="attn_weights").set_value("raw").run()
    assert not page.exception
    assert page.multiselect(key="attn_hv_heads").value == [3, 5]

    page.radio(key="attn_view").set_value("Model view").run()
    page.selectbox(key="attn_mv_head").set_value(7).run()
    page.radio(key="attn_weights").set_value("rollout").run()
    assert not page.exception and not page.error
    assert len(charts(page)) == 2  # the grid (a tile a layer) and the layer's map
    page.radio(key="attn_weights").set_value("raw").run()
    assert not page.exception
    assert page.selectbox(key="attn_mv_head").value == 7
