"""Figures of a "units that matter" run (:mod:`probing.interventions.neurons_run`): per k,
each ranking's top-k set against random k-sets, each with its 95 % interval."""

from __future__ import annotations

import plotly.graph_objects as go

COLOURS = {"probeless": "#4C78A8", "elastic_net": "#F58518", "random": "#9D9D9D"}
NAMES = {"probeless": "top k, probeless", "elastic_net": "top k, elastic net"}


def _trace(rows: list[dict], key: str, name: str, colour: str, dash: str = "solid") -> go.Scatter:
    return go.Scatter(
        x=[str(r["k"]) for r in rows],
        y=[r[key] for r in rows],
        error_y={
            "type": "data",
            "symmetric": False,
            "array": [r[f"{key}_hi"] - r[key] for r in rows],
            "arrayminus": [r[key] - r[f"{key}_lo"] for r in rows],
        },
        mode="lines+markers",
        name=name,
        line={"color": colour, "dash": dash},
    )


def _figure(rows: list[dict], rankings: list[str], measure: str, title: str, y: dict) -> go.Figure:
    fig = go.Figure()
    for r in rankings:
        fig.add_trace(_trace(rows, f"{r}_{measure}", NAMES.get(r, r), COLOURS.get(r, "#54A24B")))
    fig.add_trace(
        _trace(rows, f"random_{measure}", "random k (mean of draws)", COLOURS["random"], "dot")
    )
    fig.update_layout(
        title=title,
        xaxis={"title": "k (neurons kept / ablated)", "type": "category"},
        yaxis=y,
        height=420,
        margin={"t": 60, "b": 110},
        legend={"orientation": "h", "y": -0.25},
    )
    return fig


def probe_figure(result: dict, prefix: str = "") -> go.Figure:
    """Accuracy of a probe on the top-k neurons of each ranking and on random k."""
    return _figure(
        result["probes"]["rows"],
        list(result["rankings"]),
        "accuracy",
        f"{prefix}{result['model']}: {result['task']} probe on k neurons of hidden state "
        f"{result['layer']}",
        {"title": "test accuracy (95 % interval)", "tickformat": ".0%", "rangemode": "tozero"},
    )


def ablation_figure(result: dict, prefix: str = "") -> go.Figure:
    """The engine's paired differences of the masked-LM loss, top k ablated − random k
    ablated, per ranking and k, with their 95 % intervals (the absolute losses' intervals
    are wide by the sentences' spread, which the pairing removes)."""
    rows = result["ablation"]["comparisons"]["rows"]
    fig = go.Figure()
    for name in result["rankings"]:
        mine = [r for r in rows if r["a"].startswith(f"{name} top ")]
        fig.add_trace(
            go.Scatter(
                x=[r["a"].rsplit(" ", 1)[-1] for r in mine],
                y=[r["diff"] for r in mine],
                error_y={
                    "type": "data",
                    "symmetric": False,
                    "array": [r["ci_high"] - r["diff"] for r in mine],
                    "arrayminus": [r["diff"] - r["ci_low"] for r in mine],
                },
                mode="markers+lines",
                name=NAMES.get(name, name),
                line={"color": COLOURS.get(name, "#54A24B")},
            )
        )
    fig.add_hline(y=0, line={"color": "#9D9D9D", "dash": "dot"})
    fig.update_layout(
        title=f"{prefix}{result['model']}: masked-LM loss with k neurons of hidden state "
        f"{result['layer']} ablated, top k − random k",
        xaxis={"title": "k (neurons ablated)", "type": "category"},
        yaxis={"title": "loss difference, nats (paired 95 % interval)"},
        height=420,
        margin={"t": 60, "b": 110},
        legend={"orientation": "h", "y": -0.25},
    )
    return fig
