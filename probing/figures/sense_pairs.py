"""Mean cosine of same-sense vs different-sense occurrence pairs per layer (one model or two)."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
import plotly.graph_objects as go

from probing.figures.contextual import (
    LAYOUT,
    MODEL_DASH,
    RELATION_COLOURS,
    by_depth,
    layer_axis,
    layer_x,
    legend_below,
)


def sense_pairs_figure(tables: Sequence[pd.DataFrame], height: int = 420) -> go.Figure:
    """Per model, the mean cosine of same-sense pairs and of different-sense pairs by layer;
    dotted: the same pairs' static-vector cosine (the context-free reference)."""
    depth = by_depth(tables)
    fig = go.Figure()
    for m, table in enumerate(tables):
        for relation, rows in table.groupby("relation", sort=False):
            model = rows["model"].iloc[0]
            colour = RELATION_COLOURS.get(relation, "#444")
            fig.add_trace(
                go.Scatter(
                    x=layer_x(rows, depth),
                    y=rows["cosine"],
                    mode="lines+markers",
                    name=f"{model}: {relation} ({int(rows['n_pairs'].iloc[0])} pairs)",
                    line=dict(color=colour, dash=MODEL_DASH[m % len(MODEL_DASH)], width=3),
                    customdata=rows[["layer_name", "sd"]].to_numpy(),
                    hovertemplate="%{customdata[0]}: mean cos %{y:.3f} (sd %{customdata[1]:.3f})<extra>"
                    + relation
                    + "</extra>",
                )
            )
            xs = layer_x(rows, depth)
            fig.add_trace(
                go.Scatter(
                    x=[xs.min(), xs.max()],
                    y=[rows["static_cosine"].iloc[0]] * 2,
                    mode="lines",
                    name=f"{model}: {relation}, static vectors",
                    line=dict(color=colour, dash="dot", width=1),
                    hovertemplate="static vectors: mean cos %{y:.3f}<extra>"
                    + relation
                    + "</extra>",
                )
            )
    fig.update_layout(
        title="Same sense vs different senses: mean cosine between occurrences, by layer",
        yaxis=dict(title="mean cosine similarity"),
        **LAYOUT,
    )
    legend_below(fig, plot_height=height - 140)
    layer_axis(fig, list(tables), depth, static=False)
    return fig
