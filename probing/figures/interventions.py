"""Figures of the interventions: erasure by layer, agreement by attractors/distance, the
patching heat map, head importance and the pruning curve (plotly; pages and CLI share them)."""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go
from plotly.subplots import make_subplots

_COLOURS = {
    "before": "#1f77b4",
    "erased": "#d62728",
    "random": "#7f7f7f",
    "majority": "#bcbd22",
    "heldout": "#ff7f0e",
}


def _error_y(rows: Sequence[dict], key: str) -> dict:
    """Asymmetric error bars from ``key_lo`` / ``key_hi`` around ``key``."""
    return {
        "type": "data",
        "symmetric": False,
        "array": [r[f"{key}_hi"] - r[key] for r in rows],
        "arrayminus": [r[key] - r[f"{key}_lo"] for r in rows],
    }


def _band(
    fig: go.Figure,
    x: Sequence[int],
    rows: Sequence[dict],
    key: str,
    name: str,
    colour: str,
    row: int = 1,
    col: int = 1,
    dash: str | None = None,
) -> None:
    fig.add_trace(
        go.Scatter(
            x=x,
            y=[r[key] for r in rows],
            name=name,
            mode="lines+markers",
            line={"color": colour, "dash": dash},
            error_y=_error_y(rows, key),
            legendgroup=name,
            showlegend=row == 1 and col == 1,
        ),
        row=row,
        col=col,
    )


def _lm_name(result: dict) -> str:
    """``bi-LM`` for an ELMo run's LM effect (its softmax), else ``masked-LM``."""
    return "bi-LM" if "bi-LM" in result.get("meta", {}).get("lm_effect", "") else "masked-LM"


def erasure_figure(result: dict) -> go.Figure:
    """Probe accuracy (left) and masked-LM loss (right, when measured) by erased layer,
    each with its 95 % CI; ``result`` is an ErasureResult's JSON. Accuracy after erasure
    under both protocols where the run has them: the in-sample probe (retrained on the
    eraser's own training words) and the held-out probe (trained on erased words the eraser
    never saw)."""
    rows = sorted(result["rows"], key=lambda r: r["layer"])
    x = [r["layer"] for r in rows]
    has_lm = bool(rows) and "lm_loss_clean" in rows[0]
    spec = result["spec"]
    fig = make_subplots(
        rows=1,
        cols=2 if has_lm else 1,
        subplot_titles=(
            ["probe accuracy on test", f"{_lm_name(result)} loss on held-out words (nats)"]
            if has_lm
            else ["probe accuracy on test"]
        ),
    )
    method = spec["method"].upper()
    held = bool(rows) and "acc_heldout" in rows[0]
    # Runs before issue 40 have the in-sample protocol only: its names say so all the same.
    _band(fig, x, rows, "acc_before", "before erasure", _COLOURS["before"])
    _band(fig, x, rows, "acc_erased", f"{method}, in-sample probe", _COLOURS["erased"])
    _band(
        fig,
        x,
        rows,
        "acc_random",
        "random subspace, in-sample probe",
        _COLOURS["random"],
        dash="dot",
    )
    if held:
        _band(fig, x, rows, "acc_heldout", f"{method}, held-out probe", _COLOURS["heldout"])
        _band(
            fig,
            x,
            rows,
            "acc_random_heldout",
            "random subspace, held-out probe",
            _COLOURS["random"],
            dash="dashdot",
        )
    _band(fig, x, rows, "majority", "majority baseline", _COLOURS["majority"], dash="dash")
    if has_lm:
        # The LM effect is the run's eraser's: the held-out probe's where the run has one
        # (its legend entry then stands for both), else the in-sample one.
        tag = "held-out probe" if held else "in-sample probe"
        colour = _COLOURS["heldout" if held else "erased"]
        _band(fig, x, rows, "lm_loss_clean", "before erasure", _COLOURS["before"], col=2)
        _band(fig, x, rows, "lm_loss_erased", f"{method}, {tag}", colour, col=2)
        _band(
            fig,
            x,
            rows,
            "lm_loss_random",
            f"random subspace, {tag}",
            _COLOURS["random"],
            col=2,
            dash="dashdot" if held else "dot",
        )
    fig.update_xaxes(title_text="erased layer", dtick=1)
    fig.update_layout(
        title=f"{result['meta']['model']}: erasing {spec['task']} ({method}) layer by layer",
        height=420,
        legend={"orientation": "h", "y": -0.2},
        margin={"t": 70},
    )
    return fig


def fit_curve_figure(result: dict) -> go.Figure:
    """Held-out probe accuracy − majority (95 % paired CI) against the eraser's fit-set size
    (words, log axis), one line per erased layer."""
    curve = result.get("curve") or []
    fig = go.Figure()
    for layer in sorted({c["layer"] for c in curve}):
        pts = sorted((c for c in curve if c["layer"] == layer), key=lambda c: c["n_fit_words"])
        fig.add_trace(
            go.Scatter(
                x=[c["n_fit_words"] for c in pts],
                y=[c["heldout_minus_majority"] for c in pts],
                name=f"layer {layer}",
                mode="lines+markers",
                error_y=_error_y(pts, "heldout_minus_majority"),
                customdata=[c["n_fit_sentences"] for c in pts],
                hovertemplate="%{x:,} words (%{customdata:,} sentences): %{y:+.3f}",
            )
        )
    fig.add_hline(y=0, line={"color": _COLOURS["majority"], "dash": "dash"})
    method = result["spec"]["method"].upper()
    fig.update_layout(
        title=f"Held-out probe after {method} as the eraser's fit set grows",
        xaxis={"title": "words the eraser is fitted on", "type": "log"},
        yaxis_title="held-out accuracy − majority",
        height=380,
    )
    return fig


def recovery_figure(result: dict) -> go.Figure:
    """Probe accuracy at later layers after erasing at each layer (heat map)."""
    rec = result["recovery"]
    erased = sorted({r["erased_layer"] for r in rec})
    probed = sorted({r["probed_layer"] for r in rec})
    z = [[None] * len(probed) for _ in erased]
    text = [[""] * len(probed) for _ in erased]
    for r in rec:
        i, j = erased.index(r["erased_layer"]), probed.index(r["probed_layer"])
        z[i][j] = r["acc_after"]
        text[i][j] = f"{r['acc_after']:.2f}<br>({r['acc_after_lo']:.2f}–{r['acc_after_hi']:.2f})"
    fig = go.Figure(
        go.Heatmap(
            z=z,
            x=[str(p) for p in probed],
            y=[str(e) for e in erased],
            text=text,
            texttemplate="%{text}",
            colorscale="Blues",
            colorbar={"title": "accuracy"},
            zmin=0,
            zmax=1,
        )
    )
    fig.update_layout(
        title="Does it come back? probe accuracy at later layers after erasing at one",
        xaxis_title="probed layer",
        yaxis_title="erased layer",
        height=360,
    )
    # "0".."6" read as numbers: plotly would label every second layer only
    fig.update_xaxes(dtick=1)
    fig.update_yaxes(dtick=1)
    return fig


def agreement_figure(rows: Sequence[dict], by: str) -> go.Figure:
    """Agreement accuracy with CIs by ``by`` (``attractors`` or ``distance``), one bar
    group per source (rows: ``source``, ``by``, ``value``, ``accuracy``, ``_lo``, ``_hi``)."""
    fig = go.Figure()
    for source in dict.fromkeys(r["source"] for r in rows):
        sub = [r for r in rows if r["source"] == source and r["by"] == by]
        fig.add_trace(
            go.Bar(
                x=[str(r["value"]) for r in sub],
                y=[r["accuracy"] for r in sub],
                name=source,
                text=[f"n={r['n']}" for r in sub],
                error_y=_error_y(sub, "accuracy"),
            )
        )
    fig.update_layout(
        title=f"Subject-verb agreement accuracy by {by}",
        # categories: "0", "1", "2+" as a number axis dropped the "2+" bar (11 cases)
        xaxis={"title": by, "type": "category"},
        yaxis_title="accuracy (P(correct form) > P(wrong form))",
        yaxis_range=[0, 1.05],
        barmode="group",
        height=380,
    )
    return fig


def patching_figure(grid: dict, title: str = "Activation patching") -> go.Figure:
    """Layer × role (or layer × head) heat map of what the patch moves; ``grid``: ``x``
    labels, ``y`` labels, ``z`` values, ``lo``/``hi`` (None: point values, no interval, as
    for one pair) and ``unit`` (default "fraction moved": of the logit difference; "moved":
    the change of the difference itself, as :func:`probing.interventions.patching.pair_grid`
    gives when a fraction would mislead)."""
    unit = grid.get("unit", "fraction moved")
    if grid.get("lo") is None or grid.get("hi") is None:
        point = "{:+.2f}" if unit == "moved" else "{:.2f}"
        # (|v| < 0.005 as 0.00: no "-0.00" beside "+0.00")
        text = [[point.format(v if abs(v) >= 0.005 else 0.0) for v in zr] for zr in grid["z"]]
    else:
        text = [
            [f"{v:.2f}<br>({lo:.2f}–{hi:.2f})" for v, lo, hi in zip(zr, lr, hr, strict=True)]
            for zr, lr, hr in zip(grid["z"], grid["lo"], grid["hi"], strict=True)
        ]
    bar = (
        "fraction moved"
        if unit == "fraction moved"
        else f"change of the<br>difference ({grid.get('d_unit', 'logits')})"
    )
    fig = go.Figure(
        go.Heatmap(
            z=grid["z"],
            x=grid["x"],
            y=grid["y"],
            text=text,
            texttemplate="%{text}",
            colorscale="RdBu",
            zmid=0,
            colorbar={"title": bar},
        )
    )
    fig.update_layout(
        title=title,
        xaxis_title=grid.get("x_title", "position role"),
        yaxis={"title": "layer", "dtick": 1},  # every layer labelled
        height=420,
    )
    return fig


def head_importance_figure(importance: Sequence[Sequence[float]], title: str) -> go.Figure:
    """(layers × heads) importance heat map."""
    fig = go.Figure(
        go.Heatmap(
            z=importance,
            x=[f"head {h}" for h in range(len(importance[0]))],
            y=[f"layer {b + 1}" for b in range(len(importance))],
            colorscale="Viridis",
            colorbar={"title": "importance"},
        )
    )
    fig.update_layout(title=title, height=360)
    return fig


def pruning_figure(curve: Sequence[dict]) -> go.Figure:
    """Masked-LM top-1 and agreement accuracy as heads are removed by importance."""
    fig = make_subplots(rows=1, cols=2, subplot_titles=["masked-LM top-1", "agreement accuracy"])
    x = [c["heads_removed"] for c in curve]
    for col, key in ((1, "lm_top1"), (2, "agreement")):
        fig.add_trace(
            go.Scatter(
                x=x,
                y=[c[key] for c in curve],
                mode="lines+markers",
                name=key,
                error_y=_error_y(curve, key),
                showlegend=False,
            ),
            row=1,
            col=col,
        )
    fig.update_xaxes(title_text="heads removed (least important first)")
    fig.update_layout(title="Progressive head pruning (Michel et al. 2019)", height=380)
    return fig
