"""The Fill Mask page, driven by streamlit's AppTest (no browser, offline).

A tiny random BertForMaskedLM saved to a folder stands in for a real checkpoint (picked
through the sidebar's "hub id or local folder" box), so these tests run whether or not the
embedded minilm-l6-mlm head has been trained; the tests that need that head skip without it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.library.test_fill_mask import SENTENCE, save_tiny_bert

PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "2_Fill_Mask.py")
CUSTOM = "Other (hub id or local folder)…"


@pytest.fixture(scope="module")
def tiny_folder(tmp_path_factory) -> str:
    return str(save_tiny_bert(tmp_path_factory.mktemp("page") / "tiny-bert"))


def _has_delta() -> bool:
    from probing.models.embedded import MINILM_MLM_DELTA

    return (MINILM_MLM_DELTA / "delta.safetensors").is_file()


def _page(models: list[str] | None = None, custom: str | None = None) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=120)
    if models is not None:
        at.session_state["models"] = models
    if custom is not None:
        at.session_state["models_custom"] = custom
    return at


def _charts(at: AppTest) -> list[dict]:
    """The plotly figures on the page, as JSON."""
    return [json.loads(el.proto.spec) for el in at.get("plotly_chart")]


def _messages(at: AppTest) -> str:
    return " ".join(m.value for m in [*at.error, *at.warning, *at.info])


def test_renders_bars_and_layer_views_for_a_model_with_a_head(tiny_folder):
    at = _page([CUSTOM], tiny_folder).run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    assert at.text_area[0].value == SENTENCE
    charts = _charts(at)
    # two masks: a top-k bar chart, a layer heatmap and a rank line for each
    kinds = [c["data"][0]["type"] for c in charts]
    assert kinds.count("bar") == 2 and kinds.count("heatmap") == 2 and kinds.count("scatter") == 2
    bar = next(c for c in charts if c["data"][0]["type"] == "bar")
    assert len(bar["data"][0]["y"]) == 10 and bar["data"][0]["orientation"] == "h"
    probs = bar["data"][0]["x"]
    assert probs == sorted(probs, reverse=True) and 0 < sum(probs) <= 1
    heat = next(c for c in charts if c["data"][0]["type"] == "heatmap")
    assert heat["data"][0]["y"] == ["embeddings", "layer 1", "layer 2"]
    assert "What the model reads" in " ".join(c.value for c in at.caption)
    # the provenance card
    assert "tiny-bert" in " ".join(m.value for m in at.markdown)


def test_top_k_and_layer_toggle(tiny_folder):
    at = _page([CUSTOM], tiny_folder).run()
    at.slider(key="fill_mask_top_k").set_value(3)
    at.toggle(key="fill_mask_layers").set_value(False)
    at.run()
    assert not at.exception
    charts = _charts(at)
    assert [c["data"][0]["type"] for c in charts] == ["bar", "bar"]
    assert all(len(c["data"][0]["y"]) == 3 for c in charts)


@pytest.mark.parametrize(
    ("text", "kind", "expected"),
    [
        ("The cat sat on the mat.", "warning", "no [MASK] in the text"),
        ("?!.", "warning", "no [MASK] in the text"),
        ("", "warning", "The text is empty"),
        ("[MASK] " * 5, "warning", "5 masks; at most 4"),
        ("word " * 600 + "[MASK].", "error", "this model takes at most"),
    ],
    ids=["no-mask", "only-punctuation", "empty", "five-masks", "600-words"],
)
def test_bad_inputs_give_one_clear_message(tiny_folder, text, kind, expected):
    at = _page([CUSTOM], tiny_folder).run()
    at.text_area(key="fill_mask_text").input(text).run()
    assert not at.exception, at.exception
    shown = [m.value for m in getattr(at, kind)]
    assert len(shown) == 1 and expected in shown[0], _messages(at)
    assert not _charts(at)
    assert "Traceback" not in _messages(at)


def test_first_visit_preselects_the_embedded_fill_mask_model():
    at = _page().run()
    assert not at.exception, at.exception
    assert at.sidebar.multiselect[0].value == ["minilm-l6-mlm"]
    if _has_delta():
        # per mask: top-k bars, layer heatmap, rank line, logit vs tuned lens
        assert not at.error and len(_charts(at)) == 8
    else:  # one readable message saying how to get the head
        assert len(at.error) == 1 and "minilm-l6-mlm" in at.error[0].value


def test_model_without_head_gets_an_info_and_the_fill_mask_model_instead():
    at = _page(["minilm-l6"]).run()
    assert not at.exception, at.exception
    (info,) = at.info
    assert "minilm-l6** has no masked-language-model head" in info.value
    assert "minilm-l6-mlm" in info.value
    assert [s.value for s in at.subheader] == ["minilm-l6-mlm"]
    # the button swaps the shared sidebar selection
    at.button[0].click().run()
    assert not at.exception
    assert at.sidebar.multiselect[0].value == ["minilm-l6-mlm"]
    assert not at.info


def test_head_less_model_next_to_one_with_a_head(tiny_folder):
    at = _page(["elmo-mini", CUSTOM], tiny_folder).run()
    assert not at.exception, at.exception
    assert any("elmo-mini** has no masked-language-model head" in i.value for i in at.info)
    # ELMo is not the encoder under minilm-l6-mlm: the page must not call it "the same"
    info = " ".join(i.value for i in at.info)
    assert "ELMo is a pair of language models" in info and "same embedded encoder" not in info
    assert [s.value for s in at.subheader] == [tiny_folder]
    assert len(_charts(at)) == 6


def test_two_models_side_by_side(tiny_folder):
    assert _has_delta()  # committed in models/minilm-l6-mlm
    at = _page(["minilm-l6-mlm", CUSTOM], tiny_folder).run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    assert [s.value for s in at.subheader] == ["minilm-l6-mlm", tiny_folder]
    assert len(_charts(at)) == 14  # the tiny model has no tuned lens: no lens charts
    cards = " ".join(c.value for c in at.caption)
    assert (
        "trained here by ContextLens" in cards
        and "Real BERT checkpoints predict far better" in cards
    )


def test_sidebar_choice_made_on_the_home_page_carries_over():
    at = AppTest.from_file(str(Path(PAGE).parent.parent / "app.py"), default_timeout=120).run()
    assert at.sidebar.multiselect[0].value == ["minilm-l6"]
    at.switch_page("pages/2_Fill_Mask.py").run()
    assert not at.exception, at.exception
    assert at.sidebar.multiselect[0].value == ["minilm-l6"]
    assert "minilm-l6** has no masked-language-model head" in at.info[0].value


def test_one_fill_mask_model_offline_says_how_to_get_a_second():
    at = _page(["minilm-l6-mlm"]).run()
    assert not at.exception, at.exception
    captions = " ".join(c.value for c in at.caption)
    assert "offline, only minilm-l6-mlm ships with a head" in captions
    assert "bert-base-uncased" in captions and "Hugging Face cache" in captions


def test_fill_mask_model_already_picked_is_not_asked_for_again():
    # "select all" in the picker keeps the first two: minilm-l6 and minilm-l6-mlm
    at = _page(["minilm-l6", "minilm-l6-mlm"]).run()
    assert not at.exception, at.exception
    (info,) = at.info
    assert "Pick it" not in info.value and "Shown: minilm-l6-mlm" in info.value
    assert not at.button
    assert [s.value for s in at.subheader] == ["minilm-l6-mlm"]
