"""Figures for probing: the per-layer curve of a task, with everything needed to read it.

One figure per :class:`~probing.probes.run.ProbeResults`: the probe's test score per layer
with its bootstrap 95 % band, the control-task accuracy and the selectivity (task − control)
per layer, the baselines as horizontal reference lines, the scalar-mix probe's score, and
the centre of gravity as a vertical marker. Builders return plotly figures; no Streamlit.
"""

from __future__ import annotations

import math
from html import escape
from pathlib import Path

import plotly.graph_objects as go

from probing.probes.run import ProbeResults

SCORE_COLOR = "#4C78A8"
CONTROL_COLOR = "#F58518"
SELECTIVITY_COLOR = "#54A24B"
COG_COLOR = "#B279A2"
BASELINE_STYLES: dict[str, tuple[str, str, str]] = {
    # probe: (label, colour, dash)
    "majority": ("majority label", "#9D9D9D", "dot"),
    "word_type": ("most frequent label per word", "#E45756", "dash"),
    "static": ("linear probe on static vectors", "#72B7B2", "dashdot"),
    "first_sense": ("WordNet first sense", "#E45756", "dash"),
    "semcor_mfs": ("SemCor most frequent sense", "#9D9D9D", "dot"),
    "static_1nn": ("1-NN on static vectors", "#72B7B2", "dashdot"),
    "scalar_mix": ("scalar mix of all layers", "#4C78A8", "longdash"),
    "right-branching": ("right-branching tree", "#B279A2", "dot"),
}
_METRIC_NAMES = {
    "accuracy": "accuracy", "f1": "F1", "macro_f1": "macro-F1", "uuas": "UUAS",
    "root_accuracy": "root accuracy", "spearman": "Spearman (lengths 5–50)",
}  # fmt: skip


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
    probe_name = {"wsd": "1-NN to sense centroids", "dep-distance": "structural probe",
                  "dep-depth": "structural probe"}.get(results.task, "linear probe")  # fmt: skip
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
        fig.add_hline(
            y=row["value"],
            line={"color": color, "dash": dash, "width": 1.5},
            annotation_text=f"{label}: {row['value']:.3f}",
            annotation_position="bottom left",
            annotation_font={"size": 11, "color": color},
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
    y_low = min(
        [v for v in (*scores["ci_low"], *scores["control"].dropna(), *scores["selectivity"].dropna(),
                     *refs["value"]) if v == v] or [0.0]
    )  # fmt: skip
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
    bar = mix_weights_bar(results)
    if bar is not None:
        parts.append(bar.to_html(full_html=False, include_plotlyjs=False))
    title = escape(f"{results.model} · {results.dataset} · {results.task}")
    path.write_text(
        "<!DOCTYPE html>\n<html><head><meta charset='utf-8'>"
        f"<title>{title}</title></head><body>\n" + "\n".join(parts) + "\n</body></html>\n",
        encoding="utf-8",
    )
    return path
