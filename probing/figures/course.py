"""Figures for the course-note views: sentence similarity, ELMo directions, pooling curves, NSP."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

_COLORS = {
    "cls": "#d62728",
    "mean": "#1f77b4",
    "attention": "#2ca02c",
    "max": "#9467bd",
    "forward": "#ff7f0e",
    "backward": "#17becf",
    "both": "#1f77b4",
    "fused": "#d62728",
}


def similarity_heatmap(matrix: np.ndarray, labels: Sequence[str], title: str) -> go.Figure:
    """(n, n) cosine similarities between sentences as a heatmap, values printed.

    Rows carry the sentence (numbered, up to 34 characters, the margin sized to fit them);
    columns only its number, so that a narrow figure keeps its cells and its labels whole.
    The full sentences are in the hover; a slim colour bar gives the scale (−1…1)."""
    rows = [f"{i + 1}. {s[:32]}…" if len(s) > 33 else f"{i + 1}. {s}" for i, s in enumerate(labels)]
    cols = [f"{i + 1}" for i in range(len(labels))]
    full = np.array([[f"{a}<br>{b}" for b in labels] for a in labels], dtype=object)
    fig = go.Figure(
        go.Heatmap(
            z=matrix,
            x=cols,
            y=rows,
            zmin=-1,
            zmax=1,
            colorscale="RdBu",
            reversescale=True,
            text=np.round(matrix, 2),
            texttemplate="%{text}",
            textfont={"size": 12},
            # a slim bar: the colours run −1…1 and the matrices side by side share it
            colorbar={"title": {"text": "cos", "side": "right"}, "thickness": 10, "len": 0.9},
            customdata=full,
            hovertemplate="%{customdata}<br>cosine %{z:.3f}<extra></extra>",
        )
    )
    fig.update_layout(
        title={"text": title, "font": {"size": 14}},
        height=120 + 34 * len(labels),
        margin={"l": 10, "r": 10, "t": 40, "b": 10},
        yaxis={"autorange": "reversed", "automargin": True, "tickfont": {"size": 12}},
        xaxis={"title": "sentence", "side": "bottom", "tickfont": {"size": 12}},
    )
    return fig


def direction_lines(table: pd.DataFrame, target: str) -> go.Figure:
    """Similarity of the target's two occurrences per layer, one line per model × view
    (rows of :func:`probing.analyses.elmo_directions.occurrence_similarity`)."""
    fig = go.Figure()
    for (model, view), rows in table.groupby(["model", "view"], sort=False):
        rows = rows.sort_values("layer")
        fig.add_trace(
            go.Scatter(
                x=rows["layer"],
                y=rows["similarity"],
                mode="lines+markers",
                name=f"{model} · {view}",
                line={"color": _COLORS.get(view)},
                customdata=rows[["layer_name", "sees"]],
                hovertemplate="%{customdata[0]} (%{customdata[1]}): %{y:.3f}<extra></extra>",
                line_dash="solid" if view != "fused" else "dot",
            )
        )
    fig.update_layout(
        title=f"cosine similarity of “{target}” in the two sentences",
        xaxis_title="layer",
        yaxis_title="cosine",
        height=360,
        margin={"l": 10, "r": 10, "t": 40, "b": 10},
    )
    return fig


def pooling_curves(curves: dict[str, pd.DataFrame], title: str) -> go.Figure:
    """Per-layer score with its interval, one line per pooling strategy.

    Args:
        curves: {strategy: rows with ``layer``, ``value``, ``ci_low``, ``ci_high``}.
    """
    fig = go.Figure()
    for strategy, rows in curves.items():
        rows = rows.sort_values("layer")
        color = _COLORS.get(strategy)
        fig.add_trace(
            go.Scatter(
                x=rows["layer"],
                y=rows["value"],
                mode="lines+markers",
                name=strategy,
                line={"color": color},
                error_y={
                    "type": "data",
                    "symmetric": False,
                    "array": rows["ci_high"] - rows["value"],
                    "arrayminus": rows["value"] - rows["ci_low"],
                },
            )
        )
    fig.update_layout(
        title=title,
        xaxis_title="layer",
        yaxis_title="test accuracy",
        height=360,
        margin={"l": 10, "r": 10, "t": 40, "b": 10},
    )
    return fig


def nsp_bar(
    is_next: float, not_next: float, labels: tuple[str, str] = ("IsNext", "NotNext")
) -> go.Figure:
    """P(IsNext) and P(NotNext) as two bars (they sum to 1); ``labels`` name the classes
    (an SOP head's are "in order" and "swapped")."""
    fig = go.Figure(
        go.Bar(
            x=[is_next, not_next],
            y=list(labels),
            orientation="h",
            text=[f"{is_next:.1%}", f"{not_next:.1%}"],
            textposition="auto",
            marker_color=["#2ca02c", "#d62728"],
        )
    )
    fig.update_layout(
        xaxis={"range": [0, 1], "title": "probability"},
        height=200,
        margin={"l": 10, "r": 10, "t": 10, "b": 10},
    )
    return fig
