"""The layering figure of a sweep: one model, every task, score per layer across seeds.

x: layer (0 = the model's input layer); y: each task's headline score on the test split.
A line is the mean over seeds; the band spans the lowest lower and the highest upper end of
the seeds' 95 % bootstrap intervals, so it shows test-sample and seed variation together.
"""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from probing.probes.tasks import get_task

COLORS = ("#4c78a8", "#f58518", "#54a24b", "#e45756", "#72b7b2", "#b279a2", "#9d755d")


def layering_figure(table: pd.DataFrame, model: str) -> go.Figure:
    """One model's per-layer curves, one per (task, dataset).

    Args:
        table: the sweep's tidy table (:func:`probing.sweep.merge.merge_table`).
        model: the model to draw.
    """
    rows = table[(table["model"] == model) & table["layer"].notna()]
    fig = go.Figure()
    pairs = rows[["task", "dataset"]].drop_duplicates().itertuples(index=False)
    for i, (task, dataset) in enumerate(pairs):
        metric = get_task(task).metric
        sel = rows[(rows["task"] == task) & (rows["dataset"] == dataset)]
        sel = sel[(sel["metric"] == metric) & (sel["probe"].isin(["linear", "1nn"]))]
        agg = (
            sel.groupby("layer")
            .agg(
                value=("value", "mean"),
                lo=("ci_low", "min"),
                hi=("ci_high", "max"),
                seeds=("seed", "nunique"),
            )
            .reset_index()
        )
        x = [int(v) for v in agg["layer"]]
        color = COLORS[i % len(COLORS)]
        name = f"{task} · {dataset} ({metric})"
        fig.add_trace(
            go.Scatter(
                x=x + x[::-1],
                y=list(agg["hi"]) + list(agg["lo"])[::-1],
                fill="toself",
                mode="lines",
                line={"width": 0},
                fillcolor=_rgba(color, 0.15),
                hoverinfo="skip",
                showlegend=False,
                legendgroup=name,
            )
        )
        fig.add_trace(
            go.Scatter(
                x=x,
                y=list(agg["value"]),
                mode="lines+markers",
                name=name,
                legendgroup=name,
                line={"color": color},
                customdata=list(agg["seeds"]),
                hovertemplate="layer %{x}: %{y:.3f} (mean of %{customdata} seeds)<extra></extra>",
            )
        )
    fig.update_layout(
        title=f"{model}: what each layer knows (mean over seeds; band: 95 % CIs of all seeds)",
        xaxis={"title": "layer (0 = input)", "dtick": 1},
        yaxis={"title": "test score", "range": [0, 1]},
        template="plotly_white",
        legend={"orientation": "h", "yanchor": "top", "y": -0.2},
    )
    return fig


def _rgba(hex_color: str, alpha: float) -> str:
    r, g, b = (int(hex_color[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgba({r},{g},{b},{alpha})"
