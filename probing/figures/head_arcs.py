"""One attention head read as a parser, drawn on the user's sentence: an arc from each word
to the word the head picks as its head (see analyses.attention_parsers.sentence_arcs)."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go


def head_arcs_figure(words: list[str], arcs: list[tuple[int, int]], title: str = "") -> go.Figure:
    """Arcs above the words, an arrowhead at the predicted head; hover names the pair.

    Args:
        words: the sentence's words, left to right.
        arcs: (dependent, predicted head) word indices.
    """
    fig = go.Figure()
    span = max((abs(j - i) for i, j in arcs), default=1)
    for i, j in arcs:
        lo, hi = sorted((i, j))
        t = np.linspace(0, np.pi, 24)
        mid, half = (lo + hi) / 2, (hi - lo) / 2
        x = mid - half * np.cos(t)
        y = 0.15 + (0.3 + 0.6 * half / span) * np.sin(t)
        fig.add_trace(
            go.Scatter(
                x=x,
                y=y,
                mode="lines",
                line={"color": "#4C78A8", "width": 2},
                showlegend=False,
                hovertemplate=f"{words[i]} → {words[j]}<extra></extra>",
            )
        )
    heads = [j for _, j in arcs]
    fig.add_trace(
        go.Scatter(
            x=heads,
            y=[0.17] * len(heads),
            mode="markers",
            showlegend=False,
            hoverinfo="skip",
            marker={"symbol": "triangle-down", "size": 10, "color": "#4C78A8"},
        )
    )
    fig.add_trace(
        go.Scatter(
            x=list(range(len(words))),
            y=[0] * len(words),
            mode="text",
            text=words,
            textfont={"size": 14},
            showlegend=False,
            hoverinfo="skip",
        )
    )
    fig.update_layout(
        title=title,
        template="plotly_white",
        height=300,
        margin={"t": 50, "b": 10, "l": 10, "r": 10},
        xaxis={"visible": False, "range": [-0.7, len(words) - 0.3]},
        yaxis={"visible": False, "range": [-0.15, 1.15]},
    )
    return fig
