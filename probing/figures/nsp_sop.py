"""The NSP-vs-SOP measurement as a figure: each head's accuracy on each kind of pair set,
with its 95 % bootstrap interval (``results/nsp-sop/summary.json``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import plotly.graph_objects as go

from probing.analyses.nsp_sop import HEAD_LABELS, SET_KINDS, SET_LABELS

COLOURS = {"nsp": "#1f77b4", "sop": "#ff7f0e", "sop-top2": "#2ca02c"}


def pair_head_accuracy_figure(rows: Sequence[Mapping]) -> go.Figure:
    """Grouped bars: x = the negatives of the set, one bar per head, error bars the
    interval; a dashed line at chance (50 %). ``rows``: ``summary.json``'s ``accuracies``."""
    fig = go.Figure()
    for head in HEAD_LABELS:
        mine = {r["set"]: r for r in rows if r["head"] == head}
        if not mine:
            continue
        kinds = [k for k in SET_KINDS if k in mine]
        acc = [100 * mine[k]["accuracy"] for k in kinds]
        fig.add_trace(
            go.Bar(
                name=HEAD_LABELS[head],
                x=[SET_LABELS[k] for k in kinds],
                y=acc,
                marker_color=COLOURS[head],
                text=[f"{a:.1f} %" for a in acc],
                textposition="outside",
                error_y={
                    "type": "data",
                    "symmetric": False,
                    "array": [
                        100 * mine[k]["ci_high"] - a for k, a in zip(kinds, acc, strict=True)
                    ],
                    "arrayminus": [
                        a - 100 * mine[k]["ci_low"] for k, a in zip(kinds, acc, strict=True)
                    ],
                },
            )
        )
    fig.add_hline(y=50, line_dash="dash", line_color="grey", annotation_text="chance")
    fig.update_layout(
        title="Pair heads on minilm-l6 (frozen, or top 2 layers tuned): test accuracy by kind "
        "of negative",
        barmode="group",
        yaxis={"title": "accuracy (%, 95 % interval)", "range": [0, 105]},
        xaxis={"title": "positives (the next sentence) + …"},
        height=380,
        margin={"l": 10, "r": 10, "t": 50, "b": 10},
        legend={"orientation": "h", "y": -0.3},
    )
    return fig
