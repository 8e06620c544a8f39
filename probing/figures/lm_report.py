"""The layer report's language-model figures, from a part's stored result
(:mod:`probing.report.lm_parts`): cloze accuracy per layer, and KL to the final distribution
per layer under the logit and the tuned lens, each with its 95 % interval."""

from __future__ import annotations

from typing import Any

import plotly.graph_objects as go

LOGIT_COLOR, TUNED_COLOR = "#4C78A8", "#E45756"


def _errors(values: list[float], ci: list[list[float]]) -> dict[str, Any]:
    lo, hi = ci
    return {
        "type": "data",
        "symmetric": False,
        "array": [h - v for v, h in zip(values, hi, strict=True)],
        "arrayminus": [v - low for v, low in zip(values, lo, strict=True)],
        "thickness": 1.2,
    }


def _layout(fig: go.Figure, names: list[str], y_title: str) -> go.Figure:
    fig.update_layout(
        height=380,
        margin={"l": 60, "r": 20, "t": 30, "b": 50},
        xaxis={"title": "layer", "tickvals": list(range(len(names))), "ticktext": names},
        yaxis={"title": y_title},
        legend={"orientation": "h", "y": 1.08},
        template="plotly_white",
    )
    return fig


def cloze_figure(payload: dict[str, Any]) -> go.Figure:
    """Top-1 accuracy of the MLM head read at each layer, with its interval; top-5 at the
    last layer as one marker."""
    values, names = payload["top1"], payload["layer_names"]
    x = list(range(len(values)))
    fig = go.Figure(
        go.Scatter(
            x=x,
            y=values,
            mode="lines+markers",
            name="top-1 (logit lens; last layer: the model)",
            line={"color": LOGIT_COLOR, "width": 3},
            error_y=_errors(values, payload["top1_ci"]),
        )
    )
    lo5, hi5 = payload["top5_last_ci"]
    top5 = payload["top5_last"]
    fig.add_trace(
        go.Scatter(
            x=[x[-1]],
            y=[top5],
            mode="markers",
            name="top-5 at the last layer",
            marker={"color": "#54A24B", "size": 10, "symbol": "diamond"},
            error_y=_errors([top5], [[lo5], [hi5]]),
        )
    )
    fig = _layout(fig, names, "cloze accuracy (masked words)")
    fig.update_yaxes(range=[0, 1])
    return fig


def lens_figure(payload: dict[str, Any]) -> go.Figure:
    """Mean KL(p_final ‖ p_layer) in nats per layer, logit vs tuned lens."""
    names = payload["layer_names"]
    fig = go.Figure()
    for key, label, color in (
        ("kl_logit", "logit lens", LOGIT_COLOR),
        ("kl_tuned", "tuned lens", TUNED_COLOR),
    ):
        fig.add_trace(
            go.Scatter(
                x=list(range(len(payload[key]))),
                y=payload[key],
                mode="lines+markers",
                name=label,
                line={"color": color, "width": 3},
                error_y=_errors(payload[key], payload[f"{key}_ci"]),
            )
        )
    return _layout(fig, names, "KL to the final distribution (nats)")


def agreement_figure(payload: dict[str, Any]) -> go.Figure:
    """Agreement accuracy overall, by attractors and by distance (words), each with its
    interval; chance (0.5) as a dotted line."""
    rows = [r for r in payload["rows"] if r["source"] == "ud-ewt"] or payload["rows"]
    label = {"all": "all", "attractors": "attractors {v}", "distance": "distance {v}"}
    names = [label[r["by"]].format(v=r["value"]) for r in rows]
    values = [r["accuracy"] for r in rows]
    fig = go.Figure(
        go.Bar(
            x=names,
            y=values,
            marker={"color": LOGIT_COLOR},
            error_y=_errors(
                values, [[r["accuracy_lo"] for r in rows], [r["accuracy_hi"] for r in rows]]
            ),
            text=[f"n={r['n']}" for r in rows],
            textposition="inside",
            name="accuracy",
        )
    )
    fig.add_hline(y=0.5, line={"dash": "dot", "color": "#888"}, annotation_text="chance")
    fig.update_layout(
        height=380,
        margin={"l": 60, "r": 20, "t": 30, "b": 60},
        yaxis={"title": "agreement accuracy", "range": [0, 1]},
        template="plotly_white",
        showlegend=False,
    )
    return fig
