"""Selectivity at two probe capacities, per layer (results/capacity/, issue 27).

Reads the tables ``results/capacity.py`` writes (linear probe and MLP-1 on the same words,
task and control, seeds folded in) and draws each family's selectivity per layer with its
paired interval; the sentence under it is made from the engine's called drops only.
"""

from __future__ import annotations

import json
from pathlib import Path

import plotly.graph_objects as go

from probing.figures.probing import SCORE_COLOR

FAMILY_LABELS = {"linear": "linear probe", "mlp": "MLP-1 (1,000 hidden units)"}
# Not the control task's orange: both lines are selectivities.
MLP_COLOR = "#B279A2"


def load_capacity(results_dir: Path, model: str, dataset: str, task: str) -> dict | None:
    """The capacity table of one run, or None when there is none (or it cannot be read)."""
    path = Path(results_dir) / "capacity" / f"{model}__{dataset}__{task}.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and data.get("layers") else None


def capacity_figure(table: dict) -> go.Figure:
    """Each family's selectivity (task − control accuracy) per layer, 95 % intervals."""
    layers = [str(r["layer"]) for r in table["layers"]]
    fig = go.Figure()
    for family, color in (("linear", SCORE_COLOR), ("mlp", MLP_COLOR)):
        sel = [r[family]["selectivity"] for r in table["layers"]]
        fig.add_trace(
            go.Scatter(
                x=layers,
                y=[s["diff"] for s in sel],
                name=FAMILY_LABELS[family],
                mode="lines+markers",
                line={"color": color},
                error_y={
                    "type": "data",
                    "symmetric": False,
                    "array": [s["ci_high"] - s["diff"] for s in sel],
                    "arrayminus": [s["diff"] - s["ci_low"] for s in sel],
                },
                customdata=[(r[family]["accuracy"], r[family]["control"]) for r in table["layers"]],
                hovertemplate="layer %{x}: selectivity %{y:.3f} (task %{customdata[0]:.3f}, "
                "control %{customdata[1]:.3f})<extra>" + FAMILY_LABELS[family] + "</extra>",
            )
        )
    s = table["settings"]
    fig.update_layout(
        title=f"Selectivity by probe capacity: {table['model']} · {table['task']}<br>"
        f"<sup>{s['train_words']:,} training words per seed, {len(s['seeds'])} seeds; "
        "bars: 95 % intervals (test sentences and seeds resampled)</sup>",
        xaxis={"title": "layer", "type": "category"},
        yaxis_title="selectivity (task − control accuracy)",
        template="plotly_white",
        height=380,
    )
    return fig


def capacity_sentence(table: dict) -> str:
    """What the table supports about the drop from linear to MLP selectivity, from the
    engine's called differences (Holm over the layers) only."""
    rows = table["layers"]
    down = [
        r["layer"]
        for r in rows
        if r["selectivity_drop"]["called"] and r["selectivity_drop"]["diff"] > 0
    ]
    up = [
        r["layer"]
        for r in rows
        if r["selectivity_drop"]["called"] and r["selectivity_drop"]["diff"] < 0
    ]
    rest = [r["layer"] for r in rows if not r["selectivity_drop"]["called"]]

    def names(layers: list[int]) -> str:
        return ", ".join(str(x) for x in layers)

    parts = []
    if down:
        parts.append(
            f"the MLP's selectivity is lower than the linear probe's at layer(s) {names(down)}"
        )
    if up:
        parts.append(f"higher at layer(s) {names(up)}")
    if rest:
        parts.append(f"not distinguishable at layer(s) {names(rest)}")
    return (
        "; ".join(parts)
        + " (paired drop in selectivity, seeds and test sentences resampled, Holm over the layers)."
    )
