"""Attention rollout and flow (Abnar & Zuidema 2020) on a 2-layer case computed by hand."""

from __future__ import annotations

import time

import numpy as np
import pytest

from probing.analyses.attention import AttentionMap, encode_attention, word_attention
from probing.analyses.rollout import feeders, flow_weights, rollout, rollout_weights
from probing.errors import InputTooLongError

# Two layers, two heads, two tokens. Head means: layer 1 [[.5,.5],[.5,.5]], layer 2
# [[1,0],[.5,.5]]; with the identity mixed in and rows renormalised:
# Â1 = [[.75,.25],[.25,.75]], Â2 = [[1,0],[.25,.75]].
TOY = np.array(
    [
        [[[1.0, 0.0], [0.5, 0.5]], [[0.0, 1.0], [0.5, 0.5]]],
        [[[1.0, 0.0], [1.0, 0.0]], [[1.0, 0.0], [0.0, 1.0]]],
    ]
)


def test_rollout_by_hand():
    r = rollout_weights(TOY)
    np.testing.assert_allclose(r[0], [[0.75, 0.25], [0.25, 0.75]])
    # Â2 · Â1: row 1 = .25·[.75,.25] + .75·[.25,.75] = [.375, .625]
    np.testing.assert_allclose(r[1], [[0.75, 0.25], [0.375, 0.625]])
    # Without the residual: head means multiplied, [[1,0],[.5,.5]]·[[.5,.5],[.5,.5]]
    np.testing.assert_allclose(rollout_weights(TOY, residual=False)[1], [[0.5, 0.5], [0.5, 0.5]])


def test_flow_by_hand():
    f = flow_weights(TOY, 2)
    # From token 1 at layer 2: to input 0 min(.25,.75) + min(.75,.25) = .5, to input 1
    # min(.25,.25) + min(.75,.75) = 1, normalised → 1/3, 2/3. From token 0: .75 and .25.
    np.testing.assert_allclose(f, [[0.75, 0.25], [1 / 3, 2 / 3]], atol=1e-5)
    np.testing.assert_allclose(flow_weights(TOY, 1), [[0.75, 0.25], [0.25, 0.75]], atol=1e-5)
    np.testing.assert_allclose(flow_weights(TOY, 2, query=1), [1 / 3, 2 / 3], atol=1e-5)


def test_flow_refuses_long_inputs_with_a_typed_error():
    w = np.full((2, 1, 30, 30), 1 / 30)
    with pytest.raises(InputTooLongError, match="attention flow"):
        flow_weights(w, 2)
    with pytest.raises(ValueError, match="layer"):
        flow_weights(TOY, 3)


def test_rollout_and_flow_on_the_real_model(minilm):
    amap = word_attention(
        encode_attention(minilm, "The animal didn't cross the street because it was tired.")
    )
    r = rollout(amap)
    assert r.weights.shape == (minilm.info.n_contextual_layers, 1, amap.n_tokens, amap.n_tokens)
    np.testing.assert_allclose(r.weights.sum(-1), 1.0, atol=1e-5)
    start = time.perf_counter()
    f = flow_weights(amap.weights, minilm.info.n_contextual_layers)
    assert time.perf_counter() - start < 10  # a page interaction, with slack for load
    np.testing.assert_allclose(f.sum(-1), 1.0, atol=1e-6)
    top = feeders(r.weights[-1, 0], amap.tokens, amap.tokens.index("it"), top=3)
    assert len(top) == 3 and top[0][2] >= top[1][2] >= top[2][2]


def test_rollout_keeps_word_bookkeeping():
    amap = AttentionMap(
        ["a", "b"], TOY.astype(np.float32), [0, 1], ["a", "b"], [0, 0], level="word"
    )
    out = rollout(amap)
    assert out.tokens == ["a", "b"] and out.level == "word" and out.n_heads == 1
