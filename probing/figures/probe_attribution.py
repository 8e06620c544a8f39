"""Figures for probe attribution: per-word bars of which words a probe's label rests on,
and the probe faithfulness study's AOPC per method with intervals."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from probing.figures.attribution import WIDTH, aopc_figure

METHOD_LABELS = {
    "integrated_gradients": "Integrated Gradients",
    "integrated_gradients_pad": "Integrated Gradients ([PAD] baseline)",
    "gradient_x_input": "Gradient × input",
    "random": "Random order",
}


def probe_word_bars_figure(
    words: Sequence[str],
    scores: np.ndarray,
    word: int,
    label: str,
    layer: int,
    method: str,
    baseline: str = "",
) -> go.Figure:
    """Bars, one per word in reading order, of ``method``'s scores for the probe's ``label``
    on word ``word`` at ``layer``; the probed word's bar is outlined."""
    s = np.nan_to_num(np.asarray(scores, dtype=float))
    ticks = [f"{i}: {w}" for i, w in enumerate(words)]
    fig = go.Figure(
        go.Bar(
            x=ticks,
            y=s,
            marker={
                "color": ["#d62728" if v < 0 else "#1f77b4" for v in s],
                "line": {
                    "color": ["black" if i == word else "rgba(0,0,0,0)" for i in range(len(s))],
                    "width": 3,
                },
            },
            hovertemplate="%{x}: %{y:.4f}<extra></extra>",
        )
    )
    name = METHOD_LABELS.get(method, method)
    base = (
        f", [{baseline.upper()}] baseline" if baseline and method == "integrated_gradients" else ""
    )
    fig.update_layout(
        title={
            "text": f"Which words does “{label}” on “{words[word]}” rest on? {name}{base}, "
            f"layer {layer}"
            "<br><sup>the probe's logit for the label, attributed to each input word (sum over "
            "its pieces); blue supports the label, red speaks against it; outlined: the probed "
            "word</sup>"
        },
        xaxis={"title": "input word", "tickangle": -40},
        yaxis={"title": "attribution (logit)"},
        width=WIDTH,
        height=440,
        margin={"t": 90},
    )
    return fig


def probe_aopc_figure(means: Sequence[dict], task: str, layer: int) -> go.Figure:
    """AOPC of the probe's label probability per method (``summarise``'s ``means``)."""
    fig = aopc_figure(means)
    fig.for_each_trace(lambda t: t.update(x=[METHOD_LABELS.get(x, x) for x in t.x]))
    fig.update_layout(
        title={
            "text": f"Faithfulness of each method for the {task} probe at layer {layer}: AOPC "
            "of the label's probability<br><sup>words removed (deletion) or restored "
            "(insertion) in the method's order, [MASK] replacing a removed word; 95 % "
            "sentence-bootstrap intervals (paired comparisons: probe_faithfulness.json)</sup>"
        }
    )
    return fig
