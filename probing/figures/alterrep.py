"""AlterRep's figure: per layer, how often a push flips the model's agreement choice."""

from __future__ import annotations

import plotly.graph_objects as go

COLOURS = {"counterfactual": "#E45756", "random": "#9D9D9D"}


def flip_figure(result: dict, title: str = "") -> go.Figure:
    """Flip rate of the counterfactual push and of the random push of the same length per
    layer, each with its 95 % sentence-bootstrap interval."""
    rows = result["rows"]
    layers = [r["layer"] for r in rows]
    fig = go.Figure()
    for name, colour in COLOURS.items():
        key = f"flip_{name}"
        fig.add_trace(
            go.Scatter(
                x=layers,
                y=[r[key] for r in rows],
                error_y={
                    "type": "data",
                    "symmetric": False,
                    "array": [r[f"{key}_hi"] - r[key] for r in rows],
                    "arrayminus": [r[key] - r[f"{key}_lo"] for r in rows],
                },
                mode="lines+markers",
                name=f"{name} push",
                line={"color": colour},
            )
        )
    spec = result["spec"]
    fig.update_layout(
        title=title
        or (
            f"{spec['model']}: agreement choices flipped by a push of the {spec['where']}'s "
            f"number (α = {spec['alpha']:g}) at each layer"
        ),
        xaxis={"title": "layer pushed", "tickmode": "array", "tickvals": layers},
        yaxis={
            "title": "share of held-out cases flipped",
            "tickformat": ".0%",
            "rangemode": "tozero",
        },
        height=420,
        legend={"orientation": "h", "y": -0.2},
    )
    return fig
