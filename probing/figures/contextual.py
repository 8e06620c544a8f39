"""Plotly figures for static vs contextual: similarity by layer, occurrence heatmap, sense
maps, separability and contextuality curves.

Layers on x: one model, or models of equal depth, use the layer index (0 = input layer);
models of different depths share one chart on *relative depth* (layer / n_layers, 0..1), so
that "the top third" lines up across a 6-layer and a 12-layer model and the curves can be
compared in one glance (hover shows each point's real layer). The static space, where shown,
sits left of layer 0 at a tick named "static".
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from probing.analyses.contextual import OccurrenceComparison
from probing.analyses.sense_pairs import DIFFERENT, SAME
from probing.encoding import STATIC

# d3 category10: one colour per model / pair / sense, readable on white.
COLOURS = (
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
)
# Senses can outnumber any palette (*line* has 17 in SemCor): 24 colours, then the same
# colours again with another marker symbol, so that no two senses look alike.
SENSE_COLOURS = (
    *COLOURS,
    "#393b79",
    "#637939",
    "#8c6d31",
    "#843c39",
    "#7b4173",
    "#3182bd",
    "#e6550d",
    "#31a354",
    "#756bb1",
    "#636363",
    "#b5cf6b",
    "#e7969c",
    "#6baed6",
    "#fd8d3c",
)
SENSE_SYMBOLS = ("circle", "diamond", "square", "triangle-up", "cross", "x")
POS_OF_KEY = {"1": "n.", "2": "v.", "3": "adj.", "4": "adv.", "5": "adj."}
MODEL_DASH = ("solid", "dash", "dot")
LAYOUT = dict(template="plotly_white", margin=dict(l=60, r=20, t=60, b=50), hovermode="closest")


def colour(i: int) -> str:
    return COLOURS[i % len(COLOURS)]


def sense_style(i: int) -> tuple[str, str]:
    """(colour, marker symbol) of the ``i``-th sense: distinct for up to 24 × 6 senses."""
    return SENSE_COLOURS[i % len(SENSE_COLOURS)], SENSE_SYMBOLS[(i // len(SENSE_COLOURS)) % 6]


def short_gloss(gloss: str, width: int = 44) -> str:
    """The gloss's first clause, cut at a word boundary: ``sloping land (…) beside a body…``."""
    first = gloss.split(";")[0].strip()
    if len(first) <= width:
        return first
    cut = first[: width + 1].rsplit(" ", 1)[0].rstrip(",:(")
    return cut + "…"


def sense_label(key: str, rank: int, gloss: str) -> str:
    """A readable sense name: ``bank (n.) 1: sloping land…`` from ``bank%1:17:01::``.

    ``rank`` numbers the senses on the figure (1 = most frequent), so that two senses with
    similar glosses still read differently; the raw key stays in the hover.
    """
    lemma, _, rest = key.partition("%")
    pos = POS_OF_KEY.get(rest[:1], "")
    head = f"{lemma.replace('_', ' ')} ({pos}) {rank}" if pos else f"{lemma} {rank}"
    return f"{head}: {short_gloss(gloss)}" if gloss else head


def by_depth(tables: Sequence[pd.DataFrame]) -> bool:
    """True when the models in ``tables`` differ in depth (x becomes relative depth)."""
    depths = {int(t.loc[t["layer"] >= 0, "layer"].max()) for t in tables if len(t)}
    return len(depths) > 1


def layer_x(table: pd.DataFrame, depth: bool) -> np.ndarray:
    """x of each row: layer index, or relative depth; static (``STATIC``) left of layer 0."""
    layer = table["layer"].to_numpy(dtype=float)
    if depth:
        return np.where(layer == STATIC, -0.15, table["depth"].to_numpy(dtype=float))
    return layer


def layer_axis(
    fig: go.Figure,
    tables: Sequence[pd.DataFrame],
    depth: bool,
    static: bool,
    row: int | None = None,
    col: int | None = None,
) -> None:
    """Tick labels: layer names (or depths) and "static" where the static point sits."""
    if depth:
        vals = [0.0, 0.25, 0.5, 0.75, 1.0]
        text = ["0 (input)", "0.25", "0.5", "0.75", "1 (top)"]
        title = "relative depth (layer / number of layers)"
        if static:
            vals, text = [-0.15, *vals], ["static", *text]
    else:
        # Numbers only (names are in the hover): long names collide under narrow subplots.
        t = tables[0]
        vals = sorted(int(v) for v in t.loc[t["layer"] >= 0, "layer"].unique())
        text = [str(v) for v in vals]
        title = "layer (0 = input layer)"
        if static:
            vals, text = [STATIC, *vals], ["static", *text]
    fig.update_xaxes(tickvals=vals, ticktext=text, title_text=title, row=row, col=col)


# -- compare occurrences ------------------------------------------------------------------


# Past this many pairs a model's pair lines share legend entries (28 pairs' names once
# filled a legend that squeezed the plot to ~100 px and covered the axis title).
MAX_PAIR_ENTRIES = 8
RELATION_COLOURS = {SAME: "#2ca02c", DIFFERENT: "#d62728", None: "#7f7f7f"}


def legend_below(fig: go.Figure, plot_height: int = 280) -> None:
    """A horizontal legend under the x-axis title in two columns (three for short names), the
    figure grown by its rows, so that the plot area keeps ``plot_height`` px whatever the
    number of entries (the columns are fractions of the width: the rows are known here)."""
    names = [t.name or "" for t in fig.data if t.showlegend is not False]
    columns = 3 if max((len(n) for n in names), default=0) <= 24 else 2
    rows = -(-len(names) // columns)
    gap = 70  # under the axis: the tick labels and the axis title
    bottom = gap + 21 * rows + 10
    top = LAYOUT["margin"]["t"]
    fig.update_layout(
        height=top + plot_height + bottom,
        margin=dict(LAYOUT["margin"], b=bottom),
        legend=dict(
            orientation="h",
            yanchor="top",
            y=-gap / plot_height,
            x=0,
            xanchor="left",
            entrywidth=1 / columns - 0.01,
            entrywidthmode="fraction",
        ),
    )


def pair_groups(
    comp: OccurrenceComparison, senses: Sequence[str | None] | None
) -> dict[str | None, list[int]]:
    """The comparison's pairs (indices into ``comp.pairs()``) by relation: same sense,
    different senses, or None (an occurrence without a sense label, or no labels at all)."""
    groups: dict[str | None, list[int]] = {}
    for p, (i, j) in enumerate(comp.pairs()):
        a = senses[i] if senses is not None and i < len(senses) else None
        b = senses[j] if senses is not None and j < len(senses) else None
        relation = None if a is None or b is None else SAME if a == b else DIFFERENT
        groups.setdefault(relation, []).append(p)
    return groups


class _Line(NamedTuple):
    """One curve of :func:`similarity_by_layer_figure`."""

    pair: str  # the pair table's name of the pair (or "mean over pairs")
    name: str  # its legend name
    colour: str
    in_legend: bool
    group: str | None  # the shared legend entry of a grouped (thin) pair line


def _lines(
    comp: OccurrenceComparison,
    table: pd.DataFrame,
    show: str,
    m: int,
    several: bool,
    senses: Sequence[str | None] | None,
) -> list[_Line]:
    """The curves of model ``m``: its mean, each pair, or past :data:`MAX_PAIR_ENTRIES`
    pairs each pair thinly under one legend entry per relation."""
    if show == "mean":
        return [
            _Line(
                "mean over pairs",
                f"{comp.model}: " + ("mean over pairs" if several else "contextual"),
                colour(m),
                True,
                None,
            )
        ]
    names = [p for p in table["pair"].unique() if p != "mean over pairs"]  # comp.pairs() order
    if len(names) <= MAX_PAIR_ENTRIES:
        return [
            _Line(pair, f"{comp.model}: {pair}", colour(p), True, None)
            for p, pair in enumerate(names)
        ]
    labelled = senses is not None and any(s is not None for s in senses)
    lines = []
    for relation, members in pair_groups(comp, senses).items():
        what = relation or ("unlabelled" if labelled else "each pair")
        group = f"{comp.model}: {what} ({len(members)} pairs; hover a line)"
        line_colour = RELATION_COLOURS[relation] if labelled else colour(m)
        lines += [_Line(names[p], group, line_colour, k == 0, group) for k, p in enumerate(members)]
    return lines


def similarity_by_layer_figure(
    comparisons: Sequence[OccurrenceComparison],
    show: str = "mean",
    height: int = 420,
    senses: Sequence[Sequence[str | None] | None] | None = None,
) -> go.Figure:
    """Cosine between occurrences per layer, with each model's static similarity as the
    reference line.

    Args:
        comparisons: one per model (same sentences and target).
        show: ``mean`` (the mean over pairs) or ``pairs`` (one line per pair).
        height: the figure's height with a two-row legend; a longer legend grows it.
        senses: per comparison, each occurrence's sense label (None: unlabelled). With more
            than :data:`MAX_PAIR_ENTRIES` pairs, ``pairs`` draws each pair thinly, coloured by
            relation (same sense / different senses / unlabelled), with one legend entry per
            relation instead of one per pair (the hover still names each pair).
    """
    tables = [c.pair_table() for c in comparisons]
    depth = by_depth(tables)
    fig = go.Figure()
    for m, (comp, table) in enumerate(zip(comparisons, tables, strict=True)):
        dash = MODEL_DASH[m % len(MODEL_DASH)]
        own = senses[m] if senses is not None and m < len(senses) else None
        for line in _lines(comp, table, show, m, len(comparisons) > 1, own):
            rows = table[table["pair"] == line.pair]
            thin = line.group is not None
            fig.add_trace(
                go.Scatter(
                    x=layer_x(rows, depth),
                    y=rows["cosine"],
                    mode="lines+markers",
                    name=line.name,
                    showlegend=line.in_legend,
                    legendgroup=line.group,
                    opacity=0.55 if thin else None,
                    marker=dict(size=4) if thin else None,
                    line=dict(color=line.colour, dash=dash, width=1.5 if thin else 2),
                    customdata=np.stack([rows["layer_name"], rows["pair"]], axis=1),
                    hovertemplate="%{customdata[1]}<br>%{customdata[0]}: cos %{y:.3f}<extra>"
                    + comp.model
                    + "</extra>",
                )
            )
        ref = table[table["pair"] == "mean over pairs"]
        xs = layer_x(ref, depth)
        fig.add_trace(
            go.Scatter(
                x=[xs.min(), xs.max()],
                y=[ref["static_cosine"].iloc[0]] * 2,
                mode="lines",
                name=f"{comp.model}: static (reference)",
                line=dict(color="#444444", dash="dot" if m == 0 else "dashdot", width=2),
                hovertemplate="static vectors: cos %{y:.3f}<extra>" + comp.model + "</extra>",
            )
        )
    # Cosines of one word's occurrences sit high (0.5–1); a 0-based axis would flatten them.
    lo = min(float(t["cosine"].min()) for t in tables)
    fig.update_layout(
        title="Cosine similarity between occurrences, by layer",
        yaxis=dict(title="cosine similarity", range=[np.floor((lo - 0.05) * 10) / 10, 1.02]),
        **LAYOUT,
    )
    legend_below(fig, plot_height=height - 140)
    layer_axis(fig, tables, depth, static=False)
    return fig


def occurrence_heatmap_figure(
    comparison: OccurrenceComparison, layer: int, height: int = 420
) -> go.Figure:
    """All occurrence pairs' cosine at one layer (or ``STATIC``) as an annotated heatmap."""
    sim = comparison.static_similarity if layer == STATIC else comparison.similarity[layer]
    labels = comparison.short_labels
    if layer == STATIC:
        name = "static vectors"
    else:
        own = comparison.layer_names[layer]
        name = f"layer {layer}" + ("" if own == f"layer {layer}" else f" ({own})")
    fig = go.Figure(
        go.Heatmap(
            z=sim,
            x=labels,
            y=labels,
            zmin=0.0,
            zmax=1.0,
            colorscale="Viridis",
            text=np.round(sim, 2),
            texttemplate="%{text:.2f}",
            colorbar=dict(title="cos"),
            customdata=np.array(comparison.labels, dtype=object)[None, :].repeat(len(labels), 0),
            hovertemplate="%{y} × %{x}<br>cos %{z:.3f}<extra></extra>",
        )
    )
    fig.update_layout(
        title=f"{comparison.model}: {name}",
        height=height,
        yaxis=dict(autorange="reversed"),
        **LAYOUT,
    )
    return fig


# -- sense geometry -----------------------------------------------------------------------


def sense_map_figure(
    coords: np.ndarray,
    senses: Sequence[str],
    glosses: dict[str, str],
    contexts: Sequence[str],
    user_coords: np.ndarray | None = None,
    user_labels: Sequence[str] = (),
    title: str = "",
    height: int = 520,
) -> go.Figure:
    """Occurrences in 2-D, one colour (and past 24 senses, one marker) per sense; the legend
    names each sense as lemma, part of speech, number and short gloss, the hover gives the
    sense key and full gloss; the user's own occurrences are large black stars.

    Args:
        coords: (n, 2) map coordinates of the corpus occurrences.
        senses: (n,) sense keys.
        glosses: sense key -> WordNet definition (hover and legend).
        contexts: (n,) context snippets (hover).
        user_coords: (m, 2) the user's occurrences, or None.
        user_labels: (m,) their labels.
    """
    fig = go.Figure()
    order = [k for k, _ in pd.Series(list(senses)).value_counts().items()]
    sen = np.asarray(senses)
    for s, key in enumerate(order):
        mask = sen == key
        gloss = glosses.get(key, "")
        color, symbol = sense_style(s)
        fig.add_trace(
            go.Scatter(
                x=coords[mask, 0],
                y=coords[mask, 1],
                mode="markers",
                name=f"{sense_label(key, s + 1, gloss)} ×{int(mask.sum())}",
                marker=dict(
                    size=9,
                    color=color,
                    symbol=symbol,
                    opacity=0.8,
                    line=dict(width=0.5, color="white"),
                ),
                customdata=np.array(
                    [[key, gloss, c] for c, m in zip(contexts, mask, strict=True) if m],
                    dtype=object,
                ),
                hovertemplate="<b>%{customdata[0]}</b><br>%{customdata[1]}<br><i>%{customdata[2]}</i><extra></extra>",
            )
        )
    if user_coords is not None and len(user_coords):
        fig.add_trace(
            go.Scatter(
                x=user_coords[:, 0],
                y=user_coords[:, 1],
                mode="markers+text",
                name="your sentences",
                marker=dict(
                    size=18, symbol="star", color="black", line=dict(width=1, color="white")
                ),
                text=[lab.split(":", 1)[0] for lab in user_labels],
                textposition="top center",
                customdata=np.array(list(user_labels), dtype=object),
                hovertemplate="<b>your sentence</b><br>%{customdata}<extra></extra>",
            )
        )
    fig.update_layout(
        title=title,
        height=height,
        legend=dict(orientation="h", y=-0.12, font=dict(size=11)),
        xaxis=dict(showticklabels=False, title=""),
        yaxis=dict(showticklabels=False, title=""),
        **LAYOUT,
    )
    return fig


def separability_figure(tables: Sequence[pd.DataFrame], height: int = 420) -> go.Figure:
    """1-NN sense accuracy and silhouette per layer (static first), one line per model,
    with the random-neighbour chance level dotted."""
    depth = by_depth(tables)
    fig = make_subplots(
        rows=1,
        cols=2,
        subplot_titles=("1-NN sense accuracy (leave-one-out)", "silhouette (cosine)"),
    )
    for m, t in enumerate(tables):
        model = t["model"].iloc[0]
        xs = layer_x(t, depth)
        for col, metric in ((1, "knn_accuracy"), (2, "silhouette")):
            fig.add_trace(
                go.Scatter(
                    x=xs,
                    y=t[metric],
                    mode="lines+markers",
                    name=model,
                    legendgroup=model,
                    showlegend=col == 1,
                    line=dict(color=colour(m)),
                    customdata=t["layer_name"],
                    hovertemplate="%{customdata}: %{y:.3f}<extra>" + model + "</extra>",
                ),
                row=1,
                col=col,
            )
        fig.add_trace(
            go.Scatter(
                x=[xs.min(), xs.max()],
                y=[t["chance"].iloc[0]] * 2,
                mode="lines",
                name=f"{model}: chance (random neighbour)",
                line=dict(color=colour(m), dash="dot", width=1),
                hovertemplate="chance %{y:.3f}<extra></extra>",
            ),
            row=1,
            col=1,
        )
    for col in (1, 2):
        layer_axis(fig, tables, depth, static=True, row=1, col=col)
    fig.update_yaxes(range=[0, 1.02], row=1, col=1)
    fig.update_layout(height=height, legend=dict(orientation="h", y=-0.3, x=0), **LAYOUT)
    fig.update_layout(margin=dict(b=110))
    return fig


# -- contextuality ------------------------------------------------------------------------


def contextuality_figure(tables: Sequence[pd.DataFrame], height: int = 620) -> go.Figure:
    """Ethayarajh's three metrics per layer: raw value (solid) with its anisotropy baseline
    (dotted) on top, the anisotropy-adjusted value (dashed: metric − baseline) below; one
    colour per model, the static vectors left of layer 0 where the metric is defined for them
    (a static vector is the same in every context: no variance, so no centred MEV, and the
    MEV panels start at layer 0)."""
    from probing.analyses.contextuality import METRICS

    depth = by_depth(tables)
    undefined = {
        metric
        for metric in METRICS
        if all(t.loc[t["layer"] == STATIC, metric].isna().all() for t in tables)
    }
    fig = make_subplots(
        rows=2,
        cols=3,
        shared_xaxes=True,
        vertical_spacing=0.1,
        subplot_titles=[*METRICS.values(), *(f"{v}, adjusted" for v in METRICS.values())],
    )
    for m, table in enumerate(tables):
        model = table["model"].iloc[0]
        for col, metric in enumerate(METRICS, start=1):
            t = table[table["layer"] != STATIC] if metric in undefined else table
            xs = layer_x(t, depth)
            common = dict(customdata=t["layer_name"], legendgroup=model, showlegend=col == 1)
            fig.add_trace(
                go.Scatter(
                    x=xs,
                    y=t[metric],
                    mode="lines+markers",
                    name=model,
                    line=dict(color=colour(m)),
                    hovertemplate="%{customdata}: %{y:.3f}<extra>" + model + "</extra>",
                    **common,
                ),
                row=1,
                col=col,
            )
            fig.add_trace(
                go.Scatter(
                    x=xs,
                    y=t[f"{metric}_baseline"],
                    mode="lines",
                    name=f"{model}: baseline",
                    line=dict(color=colour(m), dash="dot", width=1),
                    hovertemplate="%{customdata}: baseline %{y:.3f}<extra>" + model + "</extra>",
                    **common,
                ),
                row=1,
                col=col,
            )
            fig.add_trace(
                go.Scatter(
                    x=xs,
                    y=t[f"{metric}_adjusted"],
                    mode="lines+markers",
                    name=f"{model}: adjusted (metric − baseline)",
                    line=dict(color=colour(m), dash="dash"),
                    hovertemplate="%{customdata}: adjusted %{y:.3f}<extra>" + model + "</extra>",
                    **common,
                ),
                row=2,
                col=col,
            )
    for row in (1, 2):
        for col, metric in enumerate(METRICS, start=1):
            layer_axis(fig, tables, depth, static=metric not in undefined, row=row, col=col)
            if row == 1:
                fig.update_xaxes(title_text="", row=row, col=col)
    fig.update_layout(height=height, legend=dict(orientation="h", y=-0.12), **LAYOUT)
    return fig
