"""Figures for fill-mask: top-k bars per mask, and the layer-by-layer ("logit lens") view.

Builders take :mod:`probing.analyses.fill_mask` results and return plotly figures; no Streamlit here.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape

import plotly.graph_objects as go

from probing.analyses.fill_mask import MaskLayers, MaskPrediction, piece_note

BAR_COLOR = "#4C78A8"
FINAL_COLOR = "#E45756"
_FONT = {"size": 13}


def mask_label(mask_index: int, word_index: int | None = None) -> str:
    """ "mask 1 (word 4)": 1-based for people; the word index is the text's word number."""
    where = f" (word {word_index + 1})" if word_index is not None else ""
    return f"mask {mask_index + 1}{where}"


def topk_bar(prediction: MaskPrediction, title: str | None = None) -> go.Figure:
    """Horizontal bars of one mask's top-k tokens, most probable on top.

    x: probability (0–1, shown as %); y: the k tokens, in the model's own piece convention
    (the y-axis title says how to read them). Height grows with k so that labels never
    overlap.
    """
    tokens = prediction.tokens
    probs = prediction.probabilities
    # Duplicate labels (e.g. two byte-level pieces that print the same) would merge into one
    # bar on a categorical axis; the zero-width suffix keeps them apart and prints nothing.
    seen: dict[str, int] = {}
    ys = []
    for t in tokens:
        seen[t] = seen.get(t, 0) + 1
        ys.append(t + "\u200b" * (seen[t] - 1))
    top = max(probs) if probs else 1.0
    x_max = min(1.0, top * 1.25) or 1.0
    # A label that would run past the axis's end (a 98.6 % guess on a 0–100 % axis was cut at
    # the figure's edge) goes inside its own bar, in white; the others just past their bar.
    inside = [p > 0.8 * x_max for p in probs]
    fig = go.Figure(
        go.Bar(
            x=probs,
            y=ys,
            orientation="h",
            marker_color=BAR_COLOR,
            text=[f"{p:.1%}" for p in probs],
            textposition=["inside" if i else "outside" for i in inside],
            insidetextanchor="end",
            textfont={"color": ["white" if i else "#262730" for i in inside]},
            cliponaxis=False,
            hovertemplate="%{y}: %{x:.2%}<extra></extra>",
        )
    )
    fig.update_layout(
        title=title or mask_label(prediction.mask_index, prediction.word_index),
        height=90 + 24 * len(tokens),
        margin={"l": 10, "r": 20, "t": 40, "b": 30},
        font=_FONT,
        bargap=0.25,
    )
    # Room on the right for the "12.3%" labels past the longest bar.
    # Whole percents repeat ("1%, 1%, 2%") when the longest bar is short.
    # How to read the pieces goes under the axis, across the chart's width: along the
    # y axis it ran into the title of a short chart (5 bars).
    note = piece_note(prediction.piece_convention, short=True)
    fig.update_xaxes(
        title_text="probability" + (f" · pieces: {note}" if note else ""),
        tickformat=".0%" if top >= 0.08 else ".1%",
        range=[0, x_max],
    )
    fig.update_yaxes(autorange="reversed", type="category")
    return fig


def layer_heatmap(
    mask: MaskLayers, layer_names: Sequence[str], title: str | None = None
) -> go.Figure:
    """Top-k tokens at every layer: rows = layers (embeddings at the bottom), columns = rank.

    Cell colour is the token's probability at that layer, cell text the token; the model's
    final answer is printed in bold wherever it appears, so one can see the layer where it
    enters the top-k.
    """
    probs = mask.probabilities  # (n_layers + 1, k)
    k = probs.shape[1]
    text = [
        [f"<b>{escape(t)}</b>" if t == mask.final_token else escape(t) for t in row]
        for row in mask.tokens
    ]
    fig = go.Figure(
        go.Heatmap(
            z=probs,
            x=list(range(1, k + 1)),
            y=list(layer_names),
            text=text,
            texttemplate="%{text}",
            textfont={"size": 12},
            colorscale="Blues",
            zmin=0.0,
            zmax=max(float(probs.max()), 1e-6),
            colorbar={"title": {"text": "p"}, "tickformat": ".0%", "thickness": 12},
            customdata=[[f"{p:.2%}" for p in row] for row in probs],
            hovertemplate="%{y}, rank %{x}: %{text} (%{customdata})<extra></extra>",
        )
    )
    fig.update_layout(
        title=title or f"Top {k} at each layer (final answer in bold: {mask.final_token})",
        height=110 + 30 * len(layer_names),
        margin={"l": 10, "r": 10, "t": 40, "b": 30},
        font=_FONT,
    )
    note = piece_note(mask.piece_convention)
    fig.update_xaxes(
        title_text="rank at that layer" + (f" · {note}" if note else ""),
        tickmode="linear",
        tick0=1,
        dtick=1,
    )
    fig.update_yaxes(type="category")
    return fig


def final_rank_line(
    mask: MaskLayers, layer_names: Sequence[str], title: str | None = None
) -> go.Figure:
    """Rank (log scale, 1 at the top) of the model's final top-1 token at each layer."""
    ranks = [int(r) for r in mask.final_rank]
    fig = go.Figure(
        go.Scatter(
            x=list(layer_names),
            y=ranks,
            mode="lines+markers+text",
            line={"color": FINAL_COLOR},
            text=[str(r) for r in ranks],
            textposition="top center",
            cliponaxis=False,
            customdata=[f"{p:.2%}" for p in mask.final_probability],
            hovertemplate="%{x}: rank %{y}, p = %{customdata}<extra></extra>",
        )
    )
    fig.update_layout(
        title=title or f"Rank of “{mask.final_token}” at each layer",
        height=300,
        margin={"l": 10, "r": 10, "t": 40, "b": 30},
        font=_FONT,
        showlegend=False,
    )
    # Rank 1 on top; log scale because ranks run from 1 to the vocabulary size. Ticks at
    # 1-2-5 steps only: plotly's own log ticks label the minor lines too and overlap.
    worst = max(ranks) if ranks else 1
    ticks = [m * 10**e for e in range(7) for m in (1, 2, 5) if m * 10**e <= max(worst, 2) * 2]
    fig.update_yaxes(
        type="log",
        range=[math.log10(max(worst, 2) * 1.6), math.log10(0.7)],  # reversed: rank 1 on top
        tickvals=ticks,
        ticktext=[f"{t:,}" for t in ticks],
        title_text="rank (1 = top)",
    )
    fig.update_xaxes(type="category")
    return fig
