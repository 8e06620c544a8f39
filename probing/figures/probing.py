"""Figures for probing: the per-layer curve of a task, with everything needed to read it.

One figure per :class:`~probing.probes.run.ProbeResults`: the probe's test score per layer
with its bootstrap 95 % band, the control-task accuracy and the selectivity (task − control)
per layer with its own (paired) band, the baselines as horizontal reference lines, the
scalar-mix probe's score, and the centre of gravity as a vertical marker; and, when the run
measured it, the MDL panel (online codelength of task and control labels per layer).
Builders return plotly figures; no Streamlit.
"""

from __future__ import annotations

import math
from html import escape
from pathlib import Path
from typing import TYPE_CHECKING

import plotly.graph_objects as go

from probing.probes.results import ProbeResults
from probing.probes.tasks import get_task

if TYPE_CHECKING:
    import pandas as pd

SCORE_COLOR = "#4C78A8"
CONTROL_COLOR = "#F58518"
SELECTIVITY_COLOR = "#54A24B"
COG_COLOR = "#B279A2"
BASELINE_STYLES: dict[str, tuple[str, str, str]] = {
    # probe: (label, colour, dash)
    "majority": ("majority label", "#9D9D9D", "dot"),
    "word_type": ("most frequent label per word", "#E45756", "dash"),
    "static": ("linear probe on static vectors", "#72B7B2", "dashdot"),
    "first_sense": ("WordNet first sense (leaks SemCor counts)", "#E45756", "dash"),
    "semcor_mfs": ("SemCor-train most frequent sense (→ only WordNet sense)", "#9D9D9D", "dot"),
    "semcor_mfs_leaky_backoff": ("SemCor-train MFS (→ first sense, leaks)", "#D6A5C9", "dot"),
    "semcor_mfs_train_only": ("SemCor-train most frequent sense only", "#BAB0AC", "dot"),
    "static_1nn": ("1-NN on static vectors", "#72B7B2", "dashdot"),
    "scalar_mix": ("scalar mix of all layers", "#4C78A8", "longdash"),
    "right-branching": ("right-branching tree", "#B279A2", "dot"),
}
_METRIC_NAMES = {
    "accuracy": "accuracy",
    "f1": "F1",
    "macro_f1": "macro-F1",
    "uuas": "UUAS",
    "root_accuracy": "root accuracy",
    "spearman": "Spearman (lengths 5–50)",
}


def layer_curve(results: ProbeResults, metric: str | None = None) -> go.Figure:
    """The task's per-layer curve (see the module doc).

    x: layer (0 = the model's input layer); y: score on the test split, 0–1.
    """
    metric = metric or results.metric
    scores = results.layer_scores(metric)
    layers = [int(v) for v in scores["layer"]]
    names = results.meta.layer_names
    ticks = [names[i] if names and i < len(names) else str(i) for i in layers]
    fig = go.Figure()
    # CI band: upper edge then lower edge reversed, filled as one closed shape.
    fig.add_trace(
        go.Scatter(
            x=layers + layers[::-1],
            y=list(scores["ci_high"]) + list(scores["ci_low"])[::-1],
            mode="lines",
            fill="toself",
            fillcolor="rgba(76,120,168,0.18)",
            line={"width": 0},
            hoverinfo="skip",
            name="95 % bootstrap interval",
        )
    )
    probe_name = get_task(results.task).probe_name
    fig.add_trace(
        go.Scatter(
            x=layers,
            y=scores["value"],
            mode="lines+markers",
            line={"color": SCORE_COLOR, "width": 3},
            name=f"{probe_name} ({_METRIC_NAMES.get(metric, metric)})",
            customdata=list(zip(scores["ci_low"], scores["ci_high"], strict=True)),
            hovertemplate="layer %{x}: %{y:.3f} [%{customdata[0]:.3f}, %{customdata[1]:.3f}]"
            "<extra></extra>",
        )
    )
    if "selectivity_ci_low" in scores and scores["selectivity_ci_low"].notna().any():
        fig.add_trace(selectivity_band(layers, scores))
    if scores["control"].notna().any():
        fig.add_trace(
            go.Scatter(
                x=layers,
                y=scores["control"],
                mode="lines+markers",
                line={"color": CONTROL_COLOR, "dash": "dash"},
                name="control task (Hewitt & Liang)",
                hovertemplate="layer %{x}: control %{y:.3f}<extra></extra>",
            )
        )
        fig.add_trace(
            go.Scatter(
                x=layers,
                y=scores["selectivity"],
                mode="lines+markers",
                line={"color": SELECTIVITY_COLOR, "dash": "dot"},
                name="selectivity (task − control)",
                hovertemplate="layer %{x}: selectivity %{y:.3f}<extra></extra>",
            )
        )
    t = results.table
    refs = t[t["layer"].isna() & (t["metric"] == metric)]
    for _, row in refs.iterrows():
        label, color, dash = BASELINE_STYLES.get(row["probe"], (row["probe"], "#666", "dot"))
        # Named in the legend, not labelled on the line: a label on the line sat on the curves.
        fig.add_hline(y=row["value"], line={"color": color, "dash": dash, "width": 1.5})
        fig.add_trace(
            go.Scatter(
                x=[None],
                y=[None],
                mode="lines",
                name=f"{label}: {row['value']:.3f}",
                line={"color": color, "dash": dash, "width": 1.5},
            )
        )
    cog = results.centre_of_gravity
    if cog is not None and not math.isnan(cog):
        fig.add_vline(
            x=cog,
            line={"color": COG_COLOR, "dash": "dot", "width": 2},
            annotation_text=f"centre of gravity {cog:.2f}",
            annotation_position="top",
            annotation_font={"color": COG_COLOR},
        )
    sel_low = scores["selectivity_ci_low"].dropna() if "selectivity_ci_low" in scores else []
    y_low = min(
        [
            v
            for v in (
                *scores["ci_low"],
                *scores["control"].dropna(),
                *scores["selectivity"].dropna(),
                *refs["value"],
                *sel_low,
            )
            if v == v
        ]
        or [0.0]
    )
    fig.update_layout(
        title=(
            f"{results.model} · {results.dataset} · {results.task}: "
            f"{_METRIC_NAMES.get(metric, metric)} per layer on the test split"
        ),
        xaxis={"title": "layer", "tickmode": "array", "tickvals": layers, "ticktext": ticks},
        yaxis={"title": _METRIC_NAMES.get(metric, metric), "range": [max(0.0, y_low - 0.05), 1.0]},
        legend={"orientation": "h", "yanchor": "top", "y": -0.15},
        template="plotly_white",
        height=520,
        margin={"t": 70, "b": 120},
    )
    return fig


def selectivity_band(layers: list, scores: pd.DataFrame) -> go.Scatter:
    """The selectivity's 95 % interval per layer (paired bootstrap: task and control scored
    on the same resampled sentences), as a filled band; x as given."""
    return go.Scatter(
        x=list(layers) + list(layers)[::-1],
        y=list(scores["selectivity_ci_high"]) + list(scores["selectivity_ci_low"])[::-1],
        mode="lines",
        fill="toself",
        fillcolor="rgba(84,162,75,0.16)",
        line={"width": 0},
        hoverinfo="skip",
        name="selectivity 95 % interval",
    )


def mdl_figure(results: ProbeResults) -> go.Figure | None:
    """MDL probing (Voita & Titov 2020) per layer: online codelength in kbits of the task's
    and the control task's labels (bars), compression over the uniform code (hover and
    title). None when the run has no MDL rows."""
    t = results.table
    rows = t[(t["probe"] == "linear") & (t["metric"] == "mdl_kbits")].sort_values("layer")
    if not len(rows):
        return None
    comp = t[(t["probe"] == "linear") & (t["metric"] == "compression")].sort_values("layer")
    layers = [str(int(v)) for v in rows["layer"]]
    fig = go.Figure()
    for col, name, color, c in (
        ("value", "task labels", SCORE_COLOR, comp["value"]),
        ("control", "control labels", CONTROL_COLOR, comp["control"]),
    ):
        if rows[col].isna().all():
            continue
        sd = "control_sd" if col == "control" else "sd"
        fig.add_trace(
            go.Bar(
                x=layers,
                y=rows[col],
                name=name,
                marker_color=color,
                error_y={"type": "data", "array": rows[sd].fillna(0).tolist(), "visible": True},
                customdata=list(c),
                hovertemplate="layer %{x}: %{y:.1f} kbits, compression "
                "%{customdata:.2f}<extra>" + name + "</extra>",
            )
        )
    seeds = int(rows["seeds"].iloc[0]) if "seeds" in rows else 1
    fig.update_layout(
        title=f"MDL (online code, Voita & Titov 2020): {results.model} · {results.task}<br>"
        f"<sup>{int(rows['n'].iloc[0]):,} training words; mean of {seeds} seed(s), bars ±1 sd; "
        "shorter = labels easier to extract</sup>",
        barmode="group",
        xaxis={"title": "layer", "type": "category"},
        yaxis_title="codelength (kbits)",
        template="plotly_white",
        height=380,
    )
    return fig


def mix_weights_bar(results: ProbeResults) -> go.Figure | None:
    """Bars of the scalar-mix probe's softmax weights per layer (None without a mix)."""
    mix = results.scalar_mix
    if not mix:
        return None
    fig = go.Figure(
        go.Bar(
            x=[str(v) for v in mix["layers"]],
            y=mix["weights"],
            marker_color=SCORE_COLOR,
            hovertemplate="layer %{x}: weight %{y:.3f}<extra></extra>",
        )
    )
    fig.update_layout(
        title=f"scalar-mix weights (γ = {mix['gamma']:.2f}, expected layer "
        f"{mix['expected_layer']:.2f})",
        xaxis_title="layer",
        yaxis_title="softmax weight",
        template="plotly_white",
        height=320,
    )
    return fig


def write_html(
    results: ProbeResults, path: str | Path, include_plotlyjs: bool | str = True
) -> Path:
    """One HTML page with the layer curve (and the mix weights when there are some).

    ``include_plotlyjs=True`` embeds plotly.js (~4.5 MB, works offline); ``"cdn"`` links it.
    """
    path = Path(path)
    parts = [layer_curve(results).to_html(full_html=False, include_plotlyjs=include_plotlyjs)]
    for extra in (mix_weights_bar(results), mdl_figure(results)):
        if extra is not None:
            parts.append(extra.to_html(full_html=False, include_plotlyjs=False))
    title = escape(f"{results.model} · {results.dataset} · {results.task}")
    path.write_text(
        "<!DOCTYPE html>\n<html><head><meta charset='utf-8'>"
        f"<title>{title}</title></head><body>\n" + "\n".join(parts) + "\n</body></html>\n",
        encoding="utf-8",
    )
    return path
