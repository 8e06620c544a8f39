"""Figures for rollout and flow: the token × token mixing map of a layer, and the input
tokens that feed one token (rollout and flow side by side)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from probing.analyses.attention import AttentionMap
from probing.figures.attention import attention_heatmap_figure

COLOURS = {"rollout": "#1f77b4", "flow": "#ff7f0e"}


def mixing_map_figure(
    amap: AttentionMap, layer: int, method: str, focus: int | None = None
) -> go.Figure:
    """A one-head map (rollout or flow) at ``layer`` as a token × token heat map."""
    fig = attention_heatmap_figure(amap, layer, 0, focus=focus)
    fig.update_layout(
        title={
            "text": f"Attention {method} at layer {layer}"
            f"<br><sup>row: token at layer {layer}; column: input token it draws on"
            "<br>heads averaged, residual mixed in; rows sum to 1</sup>"
        }
    )
    fig.data[0].colorbar.title.text = "share"
    fig.update_layout(margin={"t": fig.layout.margin.t + 20})
    return fig


def feeders_figure(
    tokens: Sequence[str], query: int, layer: int, rows: dict[str, np.ndarray], top: int = 12
) -> go.Figure:
    """Horizontal bars: how much each input token feeds token ``query`` at ``layer``, one
    bar per method in ``rows`` (method -> (n,) shares); the ``top`` largest by the first."""
    first = next(iter(rows.values()))
    order = np.argsort(-first, kind="stable")[:top][::-1]  # largest at the top
    labels = [f"#{j} {tokens[j]}" for j in order]
    fig = go.Figure()
    for method, row in rows.items():
        fig.add_trace(
            go.Bar(
                x=row[order],
                y=labels,
                orientation="h",
                name=method,
                marker_color=COLOURS.get(method, "#7f7f7f"),
                hovertemplate="%{y}: %{x:.3f}<extra>" + method + "</extra>",
            )
        )
    fig.update_layout(
        title={
            "text": f"Which input tokens feed “{tokens[query]}” at layer {layer}"
            f"<br><sup>share of its mix per input token ({', '.join(rows)}); "
            f"top {len(order)}</sup>"
        },
        barmode="group",
        height=max(320, 34 * len(order) * max(1, len(rows)) // 2 + 160),
        width=620,
        margin={"l": 140, "r": 20, "t": 90, "b": 60},
        xaxis={"title": "share", "rangemode": "tozero"},
        legend={"orientation": "h", "y": -0.15, "x": 0.5, "xanchor": "center"},
        plot_bgcolor="white",
    )
    return fig
