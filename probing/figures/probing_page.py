"""Figures for the Probing page: one model's curve, or two models' curves overlaid.

One model: :func:`probing.figures.probing.layer_curve` as it is (score per layer with its
95 % band, control task, selectivity, baselines and scalar mix as horizontal lines, centre of
gravity as a vertical marker).

Two models: the same pieces in one colour per model. Baselines that do not depend on the
model (majority label, most frequent label per word, WordNet first sense, SemCor most
frequent sense) are drawn once when the two runs agree on them; the static-vector baseline
is drawn per model; baselines are named in the legend rather than labelled on the lines,
which would overprint each other. The scalar-mix scores are left to the weights chart (a line per model
each would crowd the curves). When the models differ in depth (ELMo: 2 contextual layers,
MiniLM: 6, BERT-base: 12), x is *relative depth* = layer / number of contextual layers, so
that input (0) and top (1) line up; the hover gives the real layer. Otherwise x is the layer.

No Streamlit here; builders return plotly figures or DataFrames.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence

import pandas as pd
import plotly.graph_objects as go

from probing.figures.probing import (
    BASELINE_STYLES,
    layer_curve,
    mix_weights_bar,
    selectivity_band,
)
from probing.probes.results import ProbeResults

MODEL_COLORS = ("#4C78A8", "#E45756")  # first and second model
BAND_COLORS = ("rgba(76,120,168,0.16)", "rgba(228,87,86,0.14)")
# Baselines computed from the data alone: the same for any model given the same words.
MODEL_FREE_BASELINES = ("majority", "word_type", "first_sense", "semcor_mfs")
_METRIC_NAMES = {"accuracy": "accuracy", "f1": "F1", "macro_f1": "macro-F1"}


def n_contextual_layers(results: ProbeResults) -> int:
    """The model's contextual layers (its input layer is 0, its top layer this number)."""
    names = results.meta.layer_names
    if names:
        return len(names) - 1
    layers = results.layer_scores()["layer"]
    return int(layers.max()) if len(layers) else 0


def uses_relative_depth(results: Sequence[ProbeResults]) -> bool:
    """True when the models differ in depth, so x must be relative depth to compare them."""
    return len({n_contextual_layers(r) for r in results}) > 1


def probing_figure(results: Sequence[ProbeResults], metric: str | None = None) -> go.Figure:
    """The page's main figure: :func:`layer_curve` for one run, an overlay for two or more."""
    if len(results) == 1:
        return layer_curve(results[0], metric)
    return overlay_curves(results, metric)


def overlay_curves(results: Sequence[ProbeResults], metric: str | None = None) -> go.Figure:
    """Per-layer scores of several models on one task, one colour per model (see module doc).

    x: layer, or relative depth (layer / contextual layers) when depths differ; y: score.
    """
    metric = metric or results[0].metric
    depth = uses_relative_depth(results)
    fig = go.Figure()
    y_values: list[float] = []
    cogs: list[tuple[float, float, str, str]] = []  # (x, layer, colour, model)
    for i, r in enumerate(results):
        color, band = MODEL_COLORS[i % 2], BAND_COLORS[i % 2]
        scores = r.layer_scores(metric)
        layers = [int(v) for v in scores["layer"]]
        top = max(n_contextual_layers(r), 1)
        x = [v / top for v in layers] if depth else layers
        hover_layer = [f"layer {v} of {top}" for v in layers]
        group = {"legendgroup": r.model}
        fig.add_trace(
            go.Scatter(
                x=x + x[::-1],
                y=list(scores["ci_high"]) + list(scores["ci_low"])[::-1],
                mode="lines",
                fill="toself",
                fillcolor=band,
                line={"width": 0},
                hoverinfo="skip",
                name=f"{r.model}: 95 % interval",
                showlegend=False,
                **group,
            )
        )
        fig.add_trace(
            go.Scatter(
                x=x,
                y=scores["value"],
                mode="lines+markers",
                line={"color": color, "width": 3},
                name=f"{r.model}: {r.spec.probe_name} ({_METRIC_NAMES.get(metric, metric)})",
                customdata=list(zip(hover_layer, scores["ci_low"], scores["ci_high"], strict=True)),
                hovertemplate=f"{r.model} %{{customdata[0]}}: %{{y:.3f}} "
                "[%{customdata[1]:.3f}, %{customdata[2]:.3f}]<extra></extra>",
                **group,
            )
        )
        y_values += [*scores["ci_low"]]
        if "selectivity_ci_low" in scores and scores["selectivity_ci_low"].notna().any():
            fig.add_trace(
                selectivity_band(x, scores).update(
                    fillcolor=band, name=f"{r.model}: selectivity 95 % interval", **group
                )
            )
            y_values += [*scores["selectivity_ci_low"].dropna()]
        if scores["control"].notna().any():
            for col, dash, label in (
                ("control", "dash", "control task"),
                ("selectivity", "dot", "selectivity"),
            ):
                fig.add_trace(
                    go.Scatter(
                        x=x,
                        y=scores[col],
                        mode="lines+markers",
                        line={"color": color, "dash": dash, "width": 1.5},
                        marker={"size": 5},
                        name=f"{r.model}: {label}",
                        customdata=hover_layer,
                        hovertemplate=f"{r.model} %{{customdata}}: {label} %{{y:.3f}}<extra></extra>",
                        **group,
                    )
                )
                y_values += [*scores[col].dropna()]
        cog = r.centre_of_gravity
        if cog is not None and not math.isnan(cog):
            cogs.append((cog / top if depth else cog, cog, color, r.model))
    # Centres of gravity: a vertical line each, labelled on its outer side (the leftmost to
    # the left, the rightmost to the right) so that two close lines keep readable labels.
    for k, (x_cog, cog, color, model) in enumerate(sorted(cogs)):
        fig.add_vline(
            x=x_cog,
            line={"color": color, "dash": "dot", "width": 2},
            annotation_text=f"{model}: centre of gravity {cog:.2f}",
            annotation_position="top left" if k == 0 and len(cogs) > 1 else "top right",
            annotation_font={"color": color, "size": 11},
        )
    # Baselines as legend entries rather than labels on the lines: with two models several
    # of them lie within a few points of each other and their labels would overprint.
    x_span = [0.0, 1.0] if depth else [0, max(n_contextual_layers(r) for r in results)]
    for ref in _reference_lines(results, metric):
        fig.add_trace(
            go.Scatter(
                x=x_span,
                y=[ref["value"]] * 2,
                mode="lines",
                line={"color": ref["color"], "dash": ref["dash"], "width": 1.5},
                name=f"{ref['label']}: {ref['value']:.3f}",
                hovertemplate=f"{ref['label']}: {ref['value']:.3f}<extra></extra>",
            )
        )
        y_values.append(ref["value"])
    if depth:
        xaxis = {
            "title": "relative depth (layer / number of contextual layers)",
            "tickvals": [0, 0.25, 0.5, 0.75, 1.0],
            "ticktext": ["0 (input)", "0.25", "0.5", "0.75", "1 (top)"],
        }
    else:
        layers = sorted({int(v) for r in results for v in r.layer_scores(metric)["layer"]})
        xaxis = {"title": "layer (0 = input layer)", "tickmode": "array", "tickvals": layers}
    y_low = min([v for v in y_values if v == v] or [0.0])
    first = results[0]
    fig.update_layout(
        title=(
            f"{' vs '.join(r.model for r in results)} · {first.dataset} · {first.task}: "
            f"{_METRIC_NAMES.get(metric, metric)} per layer on the test split"
        ),
        xaxis=xaxis,
        yaxis={"title": _METRIC_NAMES.get(metric, metric), "range": [max(0.0, y_low - 0.05), 1.0]},
        legend={"orientation": "h", "yanchor": "top", "y": -0.15},
        template="plotly_white",
        height=560,
        margin={"t": 70, "b": 150},
    )
    return fig


def _reference_lines(results: Sequence[ProbeResults], metric: str) -> list[dict]:
    """Horizontal lines: model-free baselines once (when the runs agree), the rest per model."""
    out: list[dict] = []
    baselines = [r.baselines(metric) for r in results]
    shared_done: set[str] = set()
    for i, (r, table) in enumerate(zip(results, baselines, strict=True)):
        for _, row in table.iterrows():
            probe = row["probe"]
            label, color, dash = BASELINE_STYLES.get(probe, (probe, "#666", "dot"))
            if probe in MODEL_FREE_BASELINES:
                values = [t.loc[t["probe"] == probe, "value"] for t in baselines]
                agree = all(len(v) and abs(float(v.iloc[0]) - row["value"]) < 1e-9 for v in values)
                if agree:
                    if probe in shared_done:
                        continue
                    shared_done.add(probe)
                    out.append(
                        {"label": label, "value": row["value"], "color": color, "dash": dash}
                    )
                    continue
            out.append(
                {
                    "label": f"{r.model}: {label}",
                    "value": row["value"],
                    "color": MODEL_COLORS[i % 2],
                    "dash": dash,
                }
            )
    return out


def mix_weights_figure(results: Sequence[ProbeResults]) -> go.Figure | None:
    """Scalar-mix weights per layer: the library's bar chart for one run, grouped bars
    (one colour per model, x = layer) for several; None when no run has a mix (WSD)."""
    with_mix = [r for r in results if r.scalar_mix]
    if not with_mix:
        return None
    if len(results) == 1:
        fig = mix_weights_bar(results[0])
        # The library's one-line title is cut off in a half-width column: two short lines.
        fig.update_layout(
            title=f"Scalar-mix weights<br>{_mix_title(results[0], model=False)}",
            title_font_size=13,
            margin={"t": 80},
        )
        return fig
    fig = go.Figure()
    for i, r in enumerate(results):
        if not r.scalar_mix:
            continue
        mix = r.scalar_mix
        fig.add_trace(
            go.Bar(
                x=[str(v) for v in mix["layers"]],
                y=mix["weights"],
                name=r.model,
                marker_color=MODEL_COLORS[i % 2],
                hovertemplate=f"{r.model} layer %{{x}}: weight %{{y:.3f}}<extra></extra>",
            )
        )
    fig.update_layout(
        title="<br>".join(["Scalar-mix weights", *(_mix_title(r) for r in with_mix)]),
        title_font_size=13,
        barmode="group",
        xaxis={"title": "layer", "type": "category"},
        yaxis_title="softmax weight",
        template="plotly_white",
        height=380,
        margin={"t": 100, "b": 110},
        # below the plot: above it, the legend ran into the three-line title
        legend={"orientation": "h", "yanchor": "top", "y": -0.3, "x": 0},
    )
    return fig


def _mix_title(r: ProbeResults, model: bool = True) -> str:
    m = r.scalar_mix or {}
    nan = float("nan")
    text = (
        f"accuracy {m.get('accuracy', nan):.3f} · γ {m.get('gamma', nan):.2f} · "
        f"expected layer {m.get('expected_layer', nan):.2f}"
    )
    return f"{r.model}: {text}" if model else text


def layer_table(results: Sequence[ProbeResults], metric: str | None = None) -> pd.DataFrame:
    """Per-layer numbers behind the curves: model, layer, score, 95 % CI, control, selectivity."""
    frames = []
    for r in results:
        s = r.layer_scores(metric)
        frames.append(
            pd.DataFrame(
                {
                    "model": r.model,
                    "layer": s["layer"].astype(int),
                    (metric or r.metric): s["value"],
                    "ci_low": s["ci_low"],
                    "ci_high": s["ci_high"],
                    "control": s["control"],
                    "selectivity": s["selectivity"],
                    "sel_ci_low": s.get("selectivity_ci_low"),
                    "sel_ci_high": s.get("selectivity_ci_high"),
                    "n": s["n"],
                }
            )
        )
    table = pd.concat(frames, ignore_index=True)
    # WSD has no control task: drop the empty columns rather than show a column of blanks.
    empty = ("control", "selectivity", "sel_ci_low", "sel_ci_high")
    return table.drop(columns=[c for c in empty if c in table and table[c].isna().all()])


def headline(r: ProbeResults) -> str:
    """One line of what a run found: best layer, centre of gravity, mix, strongest baseline."""
    scores = r.layer_scores()
    if not len(scores):
        return f"{r.model}: no per-layer scores."
    layer, split = r.best_layer_choice()  # the rule the run's own statements use
    best = scores.set_index("layer").loc[layer]
    name = _METRIC_NAMES.get(r.metric, r.metric)
    on = "chosen on dev" if split == "dev" else "the best test score: the run chose none on dev"
    parts = [
        f"**{r.model}**: best layer {layer} ({on}; test {name} {best['value']:.3f} "
        f"[{best['ci_low']:.3f}, {best['ci_high']:.3f}])"
    ]
    cogs = r.summaries()
    for probe, label in (
        ("cog_running_best", "running best"),
        ("cog_cumulative_mix", "cumulative mixes"),
    ):
        row = cogs[cogs["probe"] == probe]
        if len(row):
            c = row.iloc[0]
            parts.append(
                f"centre of gravity ({label}) {c['value']:.2f} "
                f"[{c['ci_low']:.2f}, {c['ci_high']:.2f}]"
            )
    if not len(cogs) and r.centre_of_gravity == r.centre_of_gravity:
        parts.append(f"centre of gravity {r.centre_of_gravity:.2f}")
    if r.scalar_mix:
        parts.append(f"scalar mix {r.scalar_mix['accuracy']:.3f}")
    base = r.baselines()
    if len(base):
        top = base.loc[base["value"].idxmax()]
        label = BASELINE_STYLES.get(top["probe"], (top["probe"],))[0]
        parts.append(f"best baseline: {label} {top['value']:.3f}")
    return "; ".join(parts) + "."


def results_csv(results: Sequence[ProbeResults]) -> str:
    """The tidy tables of all runs, one CSV (the ``model`` column tells them apart)."""
    return pd.concat([r.table for r in results], ignore_index=True).to_csv(
        index=False, float_format="%.6g"
    )


def results_json(results: Sequence[ProbeResults]) -> str:
    """One run: exactly what ``python -m probing probe`` writes (``ProbeResults.from_json``
    reads it back); several runs: a JSON list of those objects."""
    docs = [r.to_dict() for r in results]
    return json.dumps(docs[0] if len(docs) == 1 else docs, indent=1) + "\n"
