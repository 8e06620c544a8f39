"""The Attention page beyond raw weights: the raw / norm-weighted / rollout choice in every
view, the Rollout & flow view, several focus tokens, long inputs in the head view, and the
model view's message size at the 2,000-character limit (issue 32)."""

from __future__ import annotations

import json
import time

import numpy as np

from probing.analyses.attention import attention_view, encode_attention
from probing.figures.attention import model_view_figure
from probing.figures.head_view_html import MAX_TOKENS, head_view_html, token_window

# The Attention page tests' fixtures: local (not demo) limits, and the page run once.
from tests.app.test_attention_page import local_mode, page  # noqa: F401

LONG = " ".join(["The quick brown fox jumps over the lazy dog near the river bank."] * 30)


def _data(html: str) -> dict:
    return json.loads(html.split("const D = ", 1)[1].split(";\n", 1)[0])


def test_several_focus_tokens_are_summed(minilm):
    view = attention_view(encode_attention(minilm, "The animal didn't cross the street."))
    data = _data(head_view_html(view, 2, [0, 3], focus=[2, 6]))
    assert data["focus"] == [2, 6]
    w = view.weights[1]
    want = (w[[0, 3]][:, [2, 6]].sum(axis=1)).mean(axis=0)  # summed over tokens, mean over heads
    np.testing.assert_allclose(data["summed"], want, atol=1e-4)
    assert "Selected: animal, street" in data["hint"]
    assert _data(head_view_html(view, 2, [0], focus=None))["summed"] is None


def test_long_inputs_get_a_window_not_a_huge_frame(minilm):
    view = attention_view(encode_attention(minilm, LONG[:1500]))
    assert view.n_tokens > MAX_TOKENS
    part = token_window(view, 40)
    assert part.n_tokens == MAX_TOKENS and part.tokens == view.tokens[40 : 40 + MAX_TOKENS]
    np.testing.assert_array_equal(part.weights, view.weights[..., 40:120, 40:120])
    assert token_window(view, 10_000).tokens == view.tokens[-MAX_TOKENS:]  # clamped


def test_model_view_message_is_capped_at_the_input_limit(minilm):
    """Issue 32: 2,000 characters on a 6 × 12 model sent 11.8 MB; now under 1.5 MB."""
    view = attention_view(encode_attention(minilm, LONG[:2000]), "piece")
    assert view.n_tokens > 400
    size = len(model_view_figure(view, selected=(1, 0)).to_json())
    assert size < 1_500_000, size


def test_long_inputs_label_at_most_sixty_tokens_a_side(minilm):
    """433 rotated labels a side took Chromium ~30 s to lay out; the map itself stays whole."""
    from probing.figures.attention import attention_heatmap_figure

    view = attention_view(encode_attention(minilm, LONG[:2000]), "piece")
    fig = attention_heatmap_figure(view, 1, 0)
    assert len(fig.layout.xaxis.tickvals) <= 60 and len(fig.layout.yaxis.ticktext) <= 60
    assert fig.data[0].z.shape == (view.n_tokens, view.n_tokens)
    assert "every" in fig.layout.title.text
    short = attention_heatmap_figure(attention_view(encode_attention(minilm, "A cat sat.")), 1, 0)
    assert list(short.layout.xaxis.ticktext) == ["[CLS]", "A", "cat", "sat", ".", "[SEP]"]


def test_every_view_follows_the_weighting(page):  # noqa: F811
    page.radio(key="attn_weights").set_value("norm-weighted").run()
    assert not page.exception and not page.error
    assert any("Norm-weighted" in c.value for c in page.caption)
    page.radio(key="attn_view").set_value("Model view").run()
    assert not page.exception and not page.error and len(page.get("plotly_chart")) == 2
    page.radio(key="attn_weights").set_value("rollout").run()
    assert not page.exception and not page.error and len(page.get("plotly_chart")) == 2
    page.radio(key="attn_view").set_value("Head statistics").run()
    assert not page.exception and not page.error and len(page.get("plotly_chart")) == 1
    page.radio(key="attn_view").set_value("Head view").run()
    assert not page.exception and not page.error
    # rollout has one "head": no head picker, and the key names the map rollout
    assert not any(m.key == "attn_hv_heads" for m in page.multiselect)
    assert "rollout (heads averaged)" in page.get("iframe")[0].proto.srcdoc


def test_rollout_and_flow_view_and_its_length_limit(page):  # noqa: F811
    page.radio(key="attn_view").set_value("Rollout & flow").run()
    assert not page.exception and not page.error
    bars = page.get("plotly_chart")
    assert len(bars) == 2 and not page.info
    page.text_area(key="attn_text").input(LONG[:300]).run()
    assert not page.exception and not page.error
    assert len(page.get("plotly_chart")) == 2  # rollout still drawn
    assert any("attention flow" in i.value.lower() for i in page.info)


def test_long_sentence_head_view_has_a_window(page):  # noqa: F811
    page.text_area(key="attn_text").input(LONG[:1500]).run()
    assert not page.exception and not page.error
    slider = page.slider(key="attn_hv_window")
    slider.set_value(50).run()
    assert not page.exception and not page.error
    assert len(page.multiselect(key="attn_focus").options) == MAX_TOKENS


def test_interactions_are_quick_when_warm(page):  # noqa: F811
    page.radio(key="attn_weights").set_value("norm-weighted").run()  # warm the caches
    page.radio(key="attn_view").set_value("Rollout & flow").run()
    page.radio(key="attn_view").set_value("Head view").run()
    for action in (
        lambda: page.radio(key="attn_weights").set_value("rollout"),
        lambda: page.radio(key="attn_weights").set_value("norm-weighted"),
        lambda: page.radio(key="attn_view").set_value("Rollout & flow"),
        lambda: page.selectbox(key="attn_rf_layer").set_value(3),
    ):
        start = time.perf_counter()
        action().run()
        assert not page.exception and not page.error
        # 3 s on an idle machine; the shared CI box runs seven jobs at once
        assert time.perf_counter() - start < 6
