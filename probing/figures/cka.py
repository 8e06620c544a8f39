"""Heat map of linear CKA between the layers of two models (or one with itself)."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from probing.analyses.cka import CKAResult


def cka_figure(result: CKAResult, title: str = "") -> go.Figure:
    """Layers of model A as rows (first at the top), model B's as columns; each cell its
    CKA printed, its 95 % interval in the hover."""
    a, b = result.layers_a, result.layers_b
    hover = np.array(
        [
            [
                f"{result.model_a} {la} × {result.model_b} {lb}<br>CKA {result.value[i, j]:.3f} "
                f"[{result.low[i, j]:.3f}, {result.high[i, j]:.3f}]"
                for j, lb in enumerate(b)
            ]
            for i, la in enumerate(a)
        ]
    )
    fig = go.Figure(
        go.Heatmap(
            z=result.value,
            x=list(range(len(b))),
            y=list(range(len(a))),
            zmin=0,
            zmax=1,
            colorscale="Viridis",
            text=hover,
            hovertemplate="%{text}<extra></extra>",
            texttemplate="%{z:.2f}",
            textfont={"size": 11},
            colorbar={"title": {"text": "CKA", "side": "right"}, "thickness": 12},
        )
    )
    cell = 56 if max(len(a), len(b)) <= 13 else 34
    margin = {"l": 120, "r": 90, "t": 125, "b": 110}
    fig.update_layout(
        title={
            "text": title
            or f"Linear CKA: {result.model_a} × {result.model_b}"
            f"<br><sup>{result.n_words} words of {result.n_sentences} "
            f"{str(result.meta.get('dataset', '')).upper()} {result.meta.get('split', '')} sentences; "
            # Two lines: at 7 × 7 layers the figure is ~660 px wide and one line was cut.
            f"unbiased HSIC<br>95 % sentence-bootstrap intervals ({result.n_boot} draws) "
            "in the hover</sup>"
        },
        width=len(b) * cell + margin["l"] + margin["r"] + 60,
        height=len(a) * cell + margin["t"] + margin["b"],
        margin=margin,
        xaxis={
            "tickvals": list(range(len(b))),
            "ticktext": b,
            "title": result.model_b,
            "tickangle": -30,
            "showgrid": False,
            "zeroline": False,
        },
        yaxis={
            "tickvals": list(range(len(a))),
            "ticktext": a,
            "title": result.model_a,
            "autorange": "reversed",
            "scaleanchor": "x",
            "constrain": "domain",
            "showgrid": False,
            "zeroline": False,
        },
        plot_bgcolor="white",
    )
    return fig
