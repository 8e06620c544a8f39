"""Figures of the probe lens: a layer × word grid of a probe's answers, and trees as arcs."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go


def label_grid(
    table: pd.DataFrame, words: list[str], title: str = "", masked: dict[int, str] | None = None
) -> go.Figure:
    """Layers (rows, input at the bottom) × words (columns): the predicted label as text,
    its probability as colour; ✗ marks a wrong answer when gold labels are known. Word-sense
    rows (a ``gloss`` column) are coloured by the cosine to the chosen sense centroid and
    show the gloss on hover.

    Args:
        table: the rows of :attr:`LensResult.labels` of one task.
        masked: {word index: reason} of words the task gives no label: grey columns that
            say why on hover (:attr:`LensResult.masked`).
    """
    masked = masked or {}
    cols = sorted({*table["word_index"].unique(), *masked})
    layers = sorted(table["layer"].unique())
    z = np.full((len(layers), len(cols)), np.nan)
    text = np.full((len(layers), len(cols)), "", dtype=object)
    hover = np.full((len(layers), len(cols)), "", dtype=object)
    senses = "gloss" in table.columns and bool(table["gloss"].notna().any())
    for r in table.itertuples():
        i, j = layers.index(r.layer), cols.index(r.word_index)
        z[i, j] = r.confidence
        mark = "" if r.correct is None or r.correct != r.correct or r.correct else " ✗"
        text[i, j] = f"{cell_label(str(r.label))}{mark}"
        if senses:
            score = f", cosine {r.confidence:.2f}" if r.confidence == r.confidence else ""
            hover[i, j] = _wrap(f"{r.label}: {r.gloss or 'no gloss'} ({r.source}{score})")
        else:
            hover[i, j] = f"{r.label}: p = {r.confidence:.2f}"
    grey = np.full((len(layers), len(cols)), np.nan)
    for c, why in masked.items():
        j = cols.index(c)
        grey[:, j], text[:, j], hover[:, j] = 1.0, "·", _wrap(f"no label: {why}")
    x = [f"{words[c]}<br><sub>#{c}</sub>" for c in cols]
    # An answer without a score (a word's only training sense, its most frequent one, or
    # WordNet's first) is drawn as a blank-coloured cell that still shows its label: plotly
    # writes no text on a NaN cell.
    z = np.nan_to_num(z, nan=0.0)
    fig = go.Figure(
        go.Heatmap(
            z=z,
            x=x,
            y=[f"layer {la}" for la in layers],
            text=text,
            texttemplate="%{text}",
            customdata=hover,
            colorscale="Blues",
            zmin=0,
            zmax=1,
            textfont={"size": 11},
            # the title beside the bar, not above it where it sat on the "1" tick
            colorbar={"title": {"text": "cosine" if senses else "probability", "side": "right"}},
            hovertemplate="%{x} · %{y}<br>%{customdata}<extra></extra>",
        )
    )
    if masked:  # words the task does not label: grey, drawn over the blank cells
        fig.add_trace(
            go.Heatmap(
                z=grey,
                x=x,
                y=[f"layer {la}" for la in layers],
                text=text,
                texttemplate="%{text}",
                customdata=hover,
                showscale=False,
                zmin=0,
                zmax=1,
                colorscale=[[0, "#d9d9d9"], [1, "#d9d9d9"]],
                textfont={"size": 11},
                hovertemplate="%{x} · %{y}<br>%{customdata}<extra></extra>",
            )
        )
    fig.update_layout(
        title=title,
        template="plotly_white",
        height=120 + 42 * len(layers),
        margin={"t": 50, "b": 40},
        xaxis={"side": "top"},
    )
    return fig


def cell_label(label: str) -> str:
    """A label short enough for a cell at a readable size: supersenses lose their part of
    speech (``noun.artifact`` -> ``artifact``; the hover keeps it), long ones break in two."""
    pos, dot, rest = label.partition(".")
    if dot and pos in {"noun", "verb", "adj", "adv"}:
        label = rest
    if len(label) > 10 and "_" not in label:
        return label[:9] + "-<br>" + label[9:] if len(label) <= 18 else label[:9] + "…"
    return label


def _wrap(text: str, width: int = 60) -> str:
    import textwrap

    return "<br>".join(textwrap.wrap(text, width)) or text


def tree_arcs(
    words: list[str],
    edges: set[tuple[int, int]],
    gold: set[tuple[int, int]] | None = None,
    root: int | None = None,
    gold_root: int | None = None,
    title: str = "",
) -> go.Figure:
    """The predicted tree's edges as arcs above the words, the gold tree's below.

    Predicted arcs are green when the gold tree has the edge, red when not (grey without
    gold); the predicted root (depth probe) is a star above its word.
    """
    fig = go.Figure()
    for sign, es, colour_of in (
        (1, edges, lambda e: "#999" if gold is None else ("#54A24B" if e in gold else "#E45756")),
        (-1, gold or set(), lambda e: "#4C78A8"),
    ):
        for i, j in sorted(es):
            t = np.linspace(0, np.pi, 24)
            mid, half = (i + j) / 2, (j - i) / 2
            fig.add_trace(
                go.Scatter(
                    x=mid - half * np.cos(t),
                    y=sign * (0.35 + 0.25 * half) * np.sin(t) + sign * 0.1,
                    mode="lines",
                    line={"color": colour_of((i, j)), "width": 2},
                    hoverinfo="skip",
                    showlegend=False,
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
    for r, name, y in ((root, "predicted root", 0.25), (gold_root, "gold root", -0.25)):
        if r is not None:
            fig.add_trace(
                go.Scatter(
                    x=[r], y=[y], mode="markers", name=name, marker={"symbol": "star", "size": 13}
                )
            )
    span = max((j - i for i, j in (edges | (gold or set()))), default=1)
    top = 0.6 + 0.25 * span / 2
    # Without gold arcs below the words, the lower half would be empty: keep the words' row.
    bottom = top if gold is not None else 0.4
    fig.update_layout(
        title=title,
        template="plotly_white",
        height=int(80 + (180 + 18 * span) * (top + bottom) / (2 * top)),
        xaxis={"visible": False},
        margin={"t": 40, "b": 10},
        yaxis={"visible": False, "range": [-bottom, top]},
        annotations=[
            {
                # Without a gold tree there is nothing to be green against.
                "text": "predicted (green: in the gold tree)"
                if gold is not None
                else "predicted tree (no gold tree to compare with)",
                "x": 0,
                "y": 1,
                "xref": "paper",
                "yref": "paper",
                "showarrow": False,
                "xanchor": "left",
            },
            *(
                [
                    {
                        "text": "gold",
                        "x": 0,
                        "y": 0,
                        "xref": "paper",
                        "yref": "paper",
                        "showarrow": False,
                        "xanchor": "left",
                    }
                ]
                if gold is not None
                else []
            ),
        ],
    )
    return fig
