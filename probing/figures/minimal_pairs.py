"""Figures of minimal-pair runs: accuracy per paradigm with its interval, and one pair's
per-unit log-probabilities."""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go


def paradigm_accuracy_figure(runs: Sequence[Sequence[dict]]) -> go.Figure:
    """Accuracy per paradigm with 95 % intervals, one horizontal bar series per run (rows
    of :func:`probing.minimal_pairs.evaluate.accuracy_table`); 0.5 is chance."""
    fig = go.Figure()
    for rows in runs:
        if not rows:
            continue
        label = f"{rows[0]['model']} — {rows[0]['scorer']}"
        acc = [r["accuracy"] for r in rows]
        fig.add_trace(
            go.Bar(
                y=[r["paradigm"] for r in rows],
                x=acc,
                orientation="h",
                name=label,
                text=[f"n={r['n_scored']}" + (" ⚠" if r.get("warning") else "") for r in rows],
                error_x={
                    "type": "data",
                    "symmetric": False,
                    "array": [r["accuracy_hi"] - a for r, a in zip(rows, acc, strict=True)],
                    "arrayminus": [a - r["accuracy_lo"] for r, a in zip(rows, acc, strict=True)],
                },
            )
        )
    fig.add_vline(x=0.5, line_dash="dot", annotation_text="chance")
    fig.update_layout(
        title="Minimal pairs: accuracy per paradigm (score(good) > score(bad)), 95 % interval",
        xaxis={"title": "accuracy", "range": [0, 1.05]},
        yaxis={"autorange": "reversed", "type": "category"},
        barmode="group",
        height=max(360, 40 * sum(len(r) for r in runs) + 120),
    )
    return fig


def pair_units_figure(good: dict, bad: dict) -> go.Figure:
    """Per-unit log-probabilities of both sentences of a pair (``units``, ``log_probs``),
    unit by unit: position ``i`` of both sentences side by side, labelled ``good / bad``
    where they differ (members may have different numbers of units)."""
    gu, bu = list(good["units"]), list(bad["units"])
    n = max(len(gu), len(bu))
    ticks = []
    for i in range(n):
        g = gu[i] if i < len(gu) else "–"
        b = bu[i] if i < len(bu) else "–"
        ticks.append(f"{i}: {g}" if g == b else f"{i}: {g} / {b}")
    fig = go.Figure()
    for label, s in (("grammatical", good), ("ungrammatical", bad)):
        fig.add_trace(
            go.Bar(
                x=ticks[: len(s["units"])],
                y=s["log_probs"],
                name=f"{label} (total {sum(s['log_probs']):.2f})",
                hovertext=list(s["units"]),
            )
        )
    fig.update_layout(
        title="Your pair: log-probability of each piece (nats)",
        xaxis={"type": "category", "categoryorder": "array", "categoryarray": ticks},
        yaxis_title="log P",
        barmode="group",
        height=380,
    )
    return fig
