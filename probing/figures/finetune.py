"""Per-layer figures of what fine-tuning changes (``results/finetune/layers.json``)."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

COLOURS = {"upos": "#1f77b4", "genre": "#d62728"}
TUNED = {"upos": "UPOS-tuned", "genre": "genre-tuned"}


def shift_figure(figures: dict, measure: str) -> go.Figure:
    """``measure`` ("cka" or "distance") per layer for every fine-tuned seed (thin lines)
    and each task's mean over seeds (thick)."""
    layers = figures["layers"]
    fig = go.Figure()
    for task, colour in COLOURS.items():
        runs = {k: v for k, v in figures[measure].items() if k.startswith(f"{task}-s")}
        for key, values in sorted(runs.items()):
            fig.add_trace(
                go.Scatter(
                    x=layers,
                    y=values,
                    mode="lines",
                    line={"color": colour, "width": 1},
                    opacity=0.45,
                    name=f"{TUNED[task]} seed {key.rsplit('s', 1)[-1]}",
                    legendgroup=task,
                    showlegend=False,
                )
            )
        if runs:
            fig.add_trace(
                go.Scatter(
                    x=layers,
                    y=np.mean(list(runs.values()), axis=0),
                    mode="lines+markers",
                    line={"color": colour, "width": 3},
                    name=f"{TUNED[task]} (mean of {len(runs)} seeds)",
                    legendgroup=task,
                )
            )
    label = "linear CKA, before vs after" if measure == "cka" else "mean cosine distance moved"
    fig.update_layout(
        title={"text": f"{label}, per layer"},
        xaxis={"title": "layer (0 = embeddings)", "dtick": 1},
        yaxis={"title": label},
        height=340,
        margin={"t": 50, "b": 40},
    )
    return fig


def probe_figure(figures: dict, task: str, tuned_on: str) -> go.Figure:
    """Accuracy of the ``task`` probe per layer on the pre-trained model and on the model
    tuned on ``tuned_on`` (one marker per fine-tuning seed, the line their mean)."""
    acc = figures["accuracy"][task]
    name = "UPOS" if task == "upos" else "genre"
    layers = figures["layers"]
    fig = go.Figure()
    before = [acc[f"{name} probe, pre-trained, layer {la}"][0] for la in layers]
    fig.add_trace(
        go.Scatter(
            x=layers, y=before, mode="lines+markers", name="pre-trained", line={"color": "#555"}
        )
    )
    after = [acc[f"{name} probe, {TUNED[tuned_on]}, layer {la}"] for la in layers]
    fig.add_trace(
        go.Scatter(
            x=layers,
            y=[float(np.mean(a)) for a in after],
            mode="lines",
            name=f"{TUNED[tuned_on]} (mean of seeds)",
            line={"color": COLOURS[tuned_on]},
        )
    )
    fig.add_trace(
        go.Scatter(
            x=[la for la, a in zip(layers, after, strict=True) for _ in a],
            y=[v for a in after for v in a],
            mode="markers",
            name=f"{TUNED[tuned_on]}, each seed",
            marker={"color": COLOURS[tuned_on], "size": 6, "opacity": 0.6},
        )
    )
    fig.update_layout(
        title={"text": f"{name} probe accuracy, pre-trained and {TUNED[tuned_on]}"},
        xaxis={"title": "layer (0 = embeddings)", "dtick": 1},
        yaxis={"title": "test accuracy"},
        height=340,
        margin={"t": 50, "b": 40},
    )
    return fig
