"""Attention: two models side by side, clickable model-view tiles, a client-side head view."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

import probing
from probing.analyses.attention import attention_view, encode_attention
from probing.figures.attention import model_view_figure
from probing.figures.head_view_html import head_view_html

PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "3_Attention.py")


@pytest.fixture(scope="module")
def word_view(minilm):
    amap = encode_attention(minilm, "The animal didn't cross the street because it was tired.")
    return attention_view(amap, "word", True)


def test_two_models_are_shown_side_by_side(minilm, monkeypatch):
    monkeypatch.delenv("CONTEXTLENS_DEMO", raising=False)
    probing.load_encoder("minilm-l6-mlm")
    at = AppTest.from_file(PAGE, default_timeout=180)
    at.session_state["models"] = ["minilm-l6", "minilm-l6-mlm"]
    at.run()
    assert not at.exception, at.exception
    assert [s.value for s in at.subheader] == ["minilm-l6", "minilm-l6-mlm"]
    assert len(at.get("plotly_chart")) == 2  # one head view each
    at.radio(key="attn_view").set_value("Model view").run()
    assert not at.exception, at.exception
    assert len(at.get("plotly_chart")) == 4  # grid + chosen head, per model
    at.selectbox(key="attn_mv_head_1").set_value(5).run()
    assert at.selectbox(key="attn_mv_head").value == 0  # each model has its own choice


def test_model_view_tiles_carry_their_layer_and_head_for_a_click(word_view):
    fig = model_view_figure(word_view)
    targets = next(t for t in fig.data if t.type == "scatter")
    pairs = {tuple(int(v) for v in c) for c in targets.customdata}
    assert pairs == {(layer, head) for layer in range(1, 7) for head in range(12)}
    assert "click to open" in targets.hovertemplate


def test_html_head_view_is_self_contained_and_carries_the_weights(word_view):
    html = head_view_html(word_view, 3, [0, 5], focus=None)
    assert (
        "http://" not in html.replace("http://www.w3.org/2000/svg", "") and "https://" not in html
    )
    data = json.loads(html.split("const D = ", 1)[1].split(";\n", 1)[0])
    assert data["tokens"] == list(word_view.tokens)
    w = word_view.weights[2]
    for head_slot, i, j, weight in data["lines"][:50]:
        assert abs(w[[0, 5][head_slot], i, j] - weight) < 1e-3
    # a token can never end the script early
    hostile = head_view_html(
        type(word_view)(**{**word_view.__dict__, "tokens": ["</script><b>x"] * word_view.n_tokens}),
        1,
        [0],
    )
    assert "</script><b>" not in hostile
