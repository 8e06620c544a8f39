"""The Attention page beyond raw weights: the raw / norm-weighted / rollout choice that the
head view, model view and head statistics follow, the "Rollout & flow" view, and the head
view's window over long inputs.

Computation in ``probing.analyses.attention_norms`` and ``probing.analyses.rollout``;
drawing in ``probing.figures.rollout``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import streamlit as st

from probing.analyses.attention import AttentionMap
from probing.analyses.attention_norms import norm_weighted, value_norms_of
from probing.analyses.rollout import FLOW_MAX_TOKENS, flow_weights, rollout
from probing.errors import InputTooLongError
from probing.figures.head_view_html import MAX_TOKENS as HEAD_VIEW_MAX_TOKENS
from probing.figures.head_view_html import token_window
from probing.figures.rollout import feeders_figure, mixing_map_figure
from ui.common import friendly_errors, user_message
from ui.state import one_of, persist

if TYPE_CHECKING:
    from probing.encoders.base import Encoder

WEIGHTINGS = ["raw", "norm-weighted", "rollout"]
HELP = (
    "raw: the attention weights α. norm-weighted (Kobayashi et al. 2020): each weight times "
    "the norm of the vector it moves, ‖α·f(x)‖, as shares of its row. rollout (Abnar & "
    "Zuidema 2020): heads averaged, the residual mixed in, multiplied down the layers — how "
    "much each input token feeds each token by layer l (one map per layer, no heads)."
)


def weighting_choice() -> str:
    """The weights every view draws (kept in the permalink as ``weights``)."""
    return st.radio(
        "Weights",
        WEIGHTINGS,
        horizontal=True,
        key=persist("attn_weights", WEIGHTINGS[0], "weights", valid=one_of(WEIGHTINGS)),
        help=HELP,
    )


@st.cache_data(max_entries=8, show_spinner=False)
def _value_norms(
    model: str, text: str, text_b: str | None, _encoder: Encoder, _amap: AttentionMap
) -> np.ndarray:
    """‖f_h(x_j)‖ of the input, cached per (model, text) like the raw map."""
    return value_norms_of(_encoder, _amap)


def weighted(
    name: str, encoder, amap: AttentionMap, text: str, text_b: str | None, weighting: str
) -> AttentionMap:
    """The piece-level map under ``weighting`` (raw maps pass through)."""
    if weighting == "norm-weighted":
        return norm_weighted(amap, _value_norms(name, text, text_b, encoder, amap))
    if weighting == "rollout":
        return rollout(amap)
    return amap


def weighting_note(weighting: str) -> None:
    """One line under the views saying what the colours mean now."""
    if weighting == "norm-weighted":
        st.caption(
            "Norm-weighted: each line / cell is the token's share of ‖Σ α·f(x)‖'s parts "
            "(α_ij‖f(x_j)‖ over the row); rows sum to 1 as raw maps do. Head statistics over "
            "the UD-EWT sample stay raw; raw vs norm on all of EWT dev is in results/attention-norms/ "
            "(`python -m probing attention-norms`)."
        )
    elif weighting == "rollout":
        st.caption(
            "Rollout: one map per layer (heads averaged, residual mixed in), shown as head 0; "
            "a row says which input tokens the token draws on by that layer. Head statistics "
            "over the UD-EWT sample stay raw."
        )


def rollout_flow_view(view: AttentionMap, k: str = "") -> None:
    """Rollout at every layer as a token × token map, and which input tokens feed a chosen
    token at layer l (rollout, and max-flow for short inputs)."""
    rolled = rollout(view)
    layers = range(1, rolled.n_attention_layers + 1)
    a, b = st.columns([1, 3])
    layer = a.selectbox(
        "Layer",
        layers,
        key=persist(
            f"attn_rf_layer{k}", rolled.n_attention_layers, f"rf_layer{k}", int, layers.__contains__
        ),
    )
    tokens = list(range(view.n_tokens))
    default = next((i for i, w in enumerate(view.word_ids) if w is not None), 0)
    query = b.selectbox(
        "Token",
        tokens,
        format_func=lambda i: f"#{i} {view.tokens[i]}",
        key=persist(f"attn_rf_token{k}", default, f"rf_token{k}", int, tokens.__contains__),
    )
    rows = {"rollout": rolled.weights[layer - 1, 0, query]}
    flow_note = ""
    try:
        rows["flow"] = flow_weights(view.weights, layer, query=query)
    except InputTooLongError as exc:
        flow_note = (
            f"Attention flow is computed for inputs of up to {FLOW_MAX_TOKENS} tokens (it solves "
            f"a max-flow problem per token pair): {user_message(exc)}"
        )
    left, right = st.columns(2)
    with left, friendly_errors("Rollout map"):
        st.plotly_chart(
            mixing_map_figure(rolled, layer, "rollout", focus=query),
            key=f"attn_rf_map{k}",
            width="content",
        )
    with right, friendly_errors("Feeding tokens"):
        st.plotly_chart(feeders_figure(view.tokens, query, layer, rows), key=f"attn_rf_bars{k}")
        if flow_note:
            st.info(flow_note)


def head_view_window(view: AttentionMap, k: str = "") -> AttentionMap:
    """The head view's tokens: all of them, or past ``MAX_TOKENS`` a window the user slides
    (a long input otherwise draws a frame thousands of pixels high with ~10⁵ lines)."""
    if view.n_tokens <= HEAD_VIEW_MAX_TOKENS:
        return view
    last = view.n_tokens - HEAD_VIEW_MAX_TOKENS
    start = st.slider(
        f"Window: the head view shows {HEAD_VIEW_MAX_TOKENS} of {view.n_tokens} tokens from",
        0,
        last,
        key=persist(f"attn_hv_window{k}", 0, None, int, lambda s: 0 <= s <= last),
        help="Attention to tokens outside the window is not drawn (rows are not renormalised).",
    )
    return token_window(view, start, HEAD_VIEW_MAX_TOKENS)
