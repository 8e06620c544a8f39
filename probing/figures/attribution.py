"""Figures for attribution: per-word bars for one method (which words a fill-mask guess
used), a context-mixing heat map per layer (Value Zeroing / ALTI), and the faithfulness
study's AOPC per method with intervals."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from probing.attribution.methods import LABELS

WIDTH = 1200  # reads at 1280 px


def word_bars_figure(
    words: Sequence[str], scores: np.ndarray, mask_word: int, target: str, method: str
) -> go.Figure:
    """Bars, one per word in reading order, of ``method``'s scores for ``target`` (the
    masked word has no bar: it is what is explained)."""
    s = np.asarray(scores, dtype=float)
    labels = [f"{i}: {'[MASK]' if i == mask_word else w}" for i, w in enumerate(words)]
    shown = np.where(np.isfinite(s), s, 0.0)
    colours = ["#d62728" if v < 0 else "#1f77b4" for v in shown]
    fig = go.Figure(
        go.Bar(
            x=labels,
            y=shown,
            marker_color=colours,
            hovertemplate="%{x}: %{y:.4f}<extra></extra>",
        )
    )
    name = LABELS.get(method, method)
    fig.update_layout(
        title={
            "text": f"Which words did it use for “{target}”? {name}"
            "<br><sup>score per word (sum over its pieces); blue supports the guess, red "
            "speaks against it; the [MASK] is what is explained</sup>"
        },
        xaxis={"title": "word", "tickangle": -40},
        yaxis={"title": "attribution"},
        width=WIDTH,
        height=440,
        margin={"t": 90},
    )
    return fig


def mixing_heatmap_figure(
    maps: np.ndarray, pieces: Sequence[str], layer: int, method: str, rolled: bool = False
) -> go.Figure:
    """(L, n, n) per-layer context-mixing map of ``method`` at ``layer`` (1-based) as a
    piece × piece heat map; rows: the token whose output is explained, columns: sources."""
    m = np.asarray(maps)[layer - 1]
    ticks = [f"{i} {p}" for i, p in enumerate(pieces)]
    fig = go.Figure(
        go.Heatmap(
            z=m,
            x=ticks,
            y=ticks,
            colorscale="Blues",
            zmin=0,
            colorbar={"title": "share"},
            hovertemplate="row %{y} ← %{x}: %{z:.3f}<extra></extra>",
        )
    )
    name = LABELS.get(method, method).replace(" (rollout)", "")
    what = "rolled out to the input" if rolled else "this layer alone"
    fig.update_layout(
        title={
            "text": f"{name} at layer {layer} ({what})"
            "<br><sup>row: token whose output is explained; column: token it draws on; rows "
            "sum to 1</sup>"
        },
        xaxis={"tickangle": -45},
        yaxis={"autorange": "reversed"},
        width=min(WIDTH, 320 + 36 * len(pieces)),
        height=min(900, 260 + 32 * len(pieces)),
        margin={"t": 90},
    )
    return fig


def aopc_figure(means: Sequence[dict]) -> go.Figure:
    """AOPC per method (deletion, insertion) with 95 % sentence-bootstrap intervals, from
    :func:`probing.attribution.study.summarise`'s ``means``."""
    fig = go.Figure()
    for metric, colour in (("aopc_deletion", "#1f77b4"), ("aopc_insertion", "#ff7f0e")):
        rows = [r for r in means if r["metric"] == metric]
        fig.add_trace(
            go.Bar(
                x=[LABELS.get(r["method"], r["method"]) for r in rows],
                y=[r["mean"] for r in rows],
                error_y={
                    "type": "data",
                    "symmetric": False,
                    "array": [r["mean_hi"] - r["mean"] for r in rows],
                    "arrayminus": [r["mean"] - r["mean_lo"] for r in rows],
                },
                name=metric.replace("aopc_", "AOPC, ").replace("_", " "),
                marker_color=colour,
            )
        )
    fig.update_layout(
        title={
            "text": "Faithfulness of each method: AOPC of the target's probability"
            "<br><sup>words removed (deletion) or restored (insertion) in the method's order; "
            "[MASK] replaces a removed word; 95 % sentence-bootstrap intervals of each method "
            "(differences are compared paired: faithfulness.json)</sup>"
        },
        barmode="group",
        yaxis={"title": "AOPC (probability)"},
        width=WIDTH,
        height=460,
        margin={"t": 90},
    )
    return fig
