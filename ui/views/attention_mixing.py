"""The Attention page's "Context mixing" view: Value Zeroing (Mohebbi et al. 2023) and ALTI
(Ferrando et al. 2022) per layer or rolled out, beside the raw attention (heads averaged) of
the same layer, under the page's word/piece and [CLS]/[SEP] controls.

Computation in ``probing.attribution.mixing``; drawing in ``probing.figures.attribution``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import streamlit as st

from probing.analyses.attention import AttentionMap, attention_view
from probing.attribution.mixing import mixing_maps
from probing.figures.attribution import mixing_heatmap_figure
from ui.common import friendly_errors
from ui.state import as_bool, one_of, persist

if TYPE_CHECKING:
    from probing.encoders.base import Encoder

LABELS = {"value_zeroing": "Value Zeroing", "alti": "ALTI"}


@st.cache_data(max_entries=8, show_spinner=False)
def _maps(
    model: str, text: str, rolled: bool, _encoder: Encoder, _amap: AttentionMap
) -> dict[str, AttentionMap]:
    """Both methods' maps, cached per (model, text, rolled)."""
    return mixing_maps(_encoder, _amap, rolled)


def context_mixing_view(
    name: str, encoder, amap: AttentionMap, text: str, options: tuple[str, bool], k: str = ""
) -> None:
    """Heat maps of Value Zeroing / ALTI at a layer and the raw attention beside them."""
    level, show_special = options
    a, b, c = st.columns([2, 1, 1])
    method = a.radio(
        "Method",
        list(LABELS),
        format_func=LABELS.get,
        horizontal=True,
        key=persist(f"attn_mix_method{k}", "value_zeroing", f"mix{k}", valid=one_of(list(LABELS))),
        help="Value Zeroing: how much each token's output moves (cosine distance) when one "
        "token's value vector is zeroed in that layer. ALTI: each token's share of the layer's "
        "attention block output, residual and LayerNorm included (L1 distance). Rows sum to 1.",
    )
    rolled = c.toggle(
        "Rolled out",
        key=persist(f"attn_mix_rolled{k}", False, f"mix_rolled{k}", as_bool),
        help="Multiplied down the layers (no residual term: both maps include it already).",
    )
    layers = range(1, amap.n_attention_layers + 1)
    layer = b.selectbox(
        "Layer",
        layers,
        key=persist(f"attn_mix_layer{k}", 1, f"mix_layer{k}", int, layers.__contains__),
    )
    with friendly_errors("Context mixing"), st.spinner("Zeroing values…"):
        maps = _maps(name, text, rolled, encoder, amap)
        view = attention_view(maps[method], level, show_special)
        raw = attention_view(amap, level, show_special)
        left, right = st.columns(2)
        left.plotly_chart(
            mixing_heatmap_figure(view.weights[:, 0], view.tokens, layer, method, rolled),
            key=f"attn_mix_map{k}",
            width="content",
        )
        right.plotly_chart(
            mixing_heatmap_figure(np.mean(raw.weights, axis=1), raw.tokens, layer, "attention"),
            key=f"attn_mix_raw{k}",
            width="content",
        )
        st.caption(
            "Left: the chosen method; right: raw attention of the same layer, heads averaged. "
            "Hidden [CLS]/[SEP] drop their rows and columns and renormalise each row."
        )
