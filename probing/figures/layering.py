"""The layering at a glance: every task of a model on one figure, by relative depth.

For each model (side by side) and each task, the per-layer test score is rescaled to its
own range (worst layer 0, best layer 1, intervals rescaled with it) and drawn against
relative depth (layer / top layer), so tasks with different metrics and models with
different depths share one picture. Below, each task's centre of gravity (Tenney et al.'s
expected layer, as relative depth) with its 95 % interval.

The centre-of-gravity interval is the run's own sentence bootstrap when the results carry
one (``meta["centre_of_gravity_ci"]``, structural tasks); otherwise it is approximated by
redrawing each layer's score from a normal matching its bootstrap interval, layers drawn
independently. The layers are scored on the same test sentences, so their errors are
positively correlated and the independent draws overstate the spread: that interval is
conservative (wider than the bootstrap's would be).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from probing.probes.metrics import centre_of_gravity
from probing.probes.results import ProbeResults
from probing.probes.tasks import TASKS as ALL_TASKS

# (task, metric, label, colour) of the tasks the registry draws here, syntax first.
TASKS: tuple[tuple[str, str, str, str], ...] = tuple(
    (t.name, t.metric, t.short_label, t.colour) for t in ALL_TASKS.values() if t.layering
)


@dataclass
class TaskCurve:
    """One task of one model, ready to draw.

    Attributes:
        depth: (n_layers,) relative depth of each layer (0 = input, 1 = top).
        scaled, low, high: (n_layers,) score and interval rescaled to the task's range.
        cog, cog_low, cog_high: centre of gravity and its interval, as relative depth.
        cog_exact: True when the interval is the run's own bootstrap, False when approximated.
        best: (layer, score) of the best layer on test, raw.
    """

    task: str
    label: str
    color: str
    depth: np.ndarray
    scaled: np.ndarray
    low: np.ndarray
    high: np.ndarray
    cog: float
    cog_low: float
    cog_high: float
    cog_exact: bool
    best: tuple[int, float]


def approx_cog_interval(
    values: np.ndarray,
    low: np.ndarray,
    high: np.ndarray,
    layers: np.ndarray,
    n_draws: int = 2000,
    seed: int = 0,
) -> tuple[float, float]:
    """Percentile interval of the centre of gravity when each layer's score is drawn from
    a normal with its bootstrap interval's width (see the module doc: conservative)."""
    sd = (np.asarray(high) - np.asarray(low)) / (2 * 1.96)
    rng = np.random.default_rng(seed)
    draws = rng.normal(values, sd, size=(n_draws, len(values)))
    cogs = np.array([centre_of_gravity(d, layers) for d in draws])
    cogs = cogs[np.isfinite(cogs)]
    if not len(cogs):
        return math.nan, math.nan
    lo, hi = np.quantile(cogs, [0.025, 0.975])
    return float(lo), float(hi)


def task_curve(
    results: ProbeResults,
    metric: str,
    label: str,
    color: str,
    cog_ci: tuple[float, float] | None = None,
) -> TaskCurve | None:
    """The drawable curve of one results file (None when it has fewer than 2 layers);
    ``cog_ci``: the centre of gravity's interval from the stored per-sentence counts."""
    rows = results.layer_scores(metric)
    if len(rows) < 2:
        return None
    layers = rows["layer"].to_numpy(dtype=float)
    v, lo, hi = (rows[c].to_numpy(dtype=float) for c in ("value", "ci_low", "ci_high"))
    top = max(layers.max(), 1.0)
    span = v.max() - v.min()
    scale = (lambda a: (a - v.min()) / span) if span > 0 else (lambda a: a * 0 + 0.5)
    cog = centre_of_gravity(v, layers)
    ci = cog_ci or results.meta.get("centre_of_gravity_ci")
    exact = bool(ci) and all(c is not None and math.isfinite(c) for c in ci)
    c_lo, c_hi = (float(ci[0]), float(ci[1])) if exact else approx_cog_interval(v, lo, hi, layers)
    best = int(np.argmax(v))
    return TaskCurve(
        task=results.task,
        label=label,
        color=color,
        depth=layers / top,
        scaled=scale(v),
        low=scale(lo),
        high=scale(hi),
        cog=cog / top,
        cog_low=c_lo / top,
        cog_high=c_hi / top,
        cog_exact=exact,
        best=(int(layers[best]), float(v[best])),
    )


def load_curves(
    results_dir: str | Path, model: str, unreadable: list[str] | None = None
) -> list[TaskCurve]:
    """Every task of :data:`TASKS` that ``results_dir`` has for ``model``, in task order.

    A file that cannot be read (truncated, not JSON, fields missing) is left out and its
    name appended to ``unreadable``; without that list it raises DataFormatError naming it.
    """
    from probing.errors import DataFormatError

    curves = []
    for task, metric, label, color in TASKS:
        path = Path(results_dir) / f"{model}__{ALL_TASKS[task].default_dataset}__{task}.json"
        if path.is_file():
            try:
                results = ProbeResults.from_json(path)
            except (OSError, ValueError, KeyError, TypeError) as exc:
                if unreadable is None:
                    raise DataFormatError(f"Cannot read the results file {path.name}.") from exc
                unreadable.append(path.name)
                continue
            cog_ci = _stored_cog_interval(results_dir, path.stem)
            curve = task_curve(results, metric, label, color, cog_ci)
            if curve is not None:
                curves.append(curve)
    return curves


def _stored_cog_interval(results_dir: str | Path, stem: str) -> tuple[float, float] | None:
    """95 % interval of a run's centre of gravity from its per-sentence counts (seeds and
    sentences resampled, :mod:`probing.probes.compare`); None without stored counts."""
    from probing.errors import DataFormatError, InvalidArgumentError
    from probing.probes.compare import Engine
    from probing.probes.statements import Cells

    try:
        rep = Cells(results_dir, Engine(n_boot=1000, seed=0)).get(f"{stem}:cog")
    except (DataFormatError, InvalidArgumentError, OSError):
        return None
    draws = np.nanmean(rep.draws, axis=0)
    if not np.isfinite(draws).any():
        return None
    lo, hi = np.nanquantile(draws, [0.025, 0.975])
    return float(lo), float(hi)


def layering_figure(curves_by_model: dict[str, Sequence[TaskCurve]]) -> go.Figure:
    """Curves (top row) and centres of gravity (bottom row), one column per model."""
    models = list(curves_by_model)
    fig = make_subplots(
        rows=2,
        cols=max(1, len(models)),
        row_heights=[0.68, 0.32],
        vertical_spacing=0.12,
        subplot_titles=models,
        horizontal_spacing=0.06,
    )
    shown: set[str] = set()
    for col, model in enumerate(models, start=1):
        curves = curves_by_model[model]
        for k, c in enumerate(curves):
            first = c.task not in shown
            shown.add(c.task)
            band = dict(mode="lines", line={"width": 0}, hoverinfo="skip", showlegend=False)
            fig.add_trace(
                go.Scatter(
                    x=np.r_[c.depth, c.depth[::-1]],
                    y=np.r_[c.high, c.low[::-1]],
                    fill="toself",
                    fillcolor=_rgba(c.color, 0.12),
                    legendgroup=c.task,
                    **band,
                ),
                row=1,
                col=col,
            )
            fig.add_trace(
                go.Scatter(
                    x=c.depth,
                    y=c.scaled,
                    mode="lines+markers",
                    name=c.label,
                    legendgroup=c.task,
                    showlegend=first,
                    line={"color": c.color, "width": 3},
                    hovertemplate=f"{c.label}<br>relative depth %{{x:.2f}}: %{{y:.2f}} of its range"
                    f"<br>best layer {c.best[0]}: {c.best[1]:.3f}<extra></extra>",
                ),
                row=1,
                col=col,
            )
            if math.isfinite(c.cog):
                how = "sentence bootstrap" if c.cog_exact else "approximate, conservative"
                fig.add_trace(
                    go.Scatter(
                        x=[c.cog],
                        y=[len(curves) - k],
                        mode="markers",
                        legendgroup=c.task,
                        showlegend=False,
                        marker={"color": c.color, "size": 11},
                        error_x={
                            "type": "data",
                            "symmetric": False,
                            "array": [max(0.0, c.cog_high - c.cog)],
                            "arrayminus": [max(0.0, c.cog - c.cog_low)],
                            "color": c.color,
                        },
                        hovertemplate=f"{c.label}: centre of gravity %{{x:.2f}} "
                        f"[{c.cog_low:.2f}, {c.cog_high:.2f}] ({how})<extra></extra>",
                    ),
                    row=2,
                    col=col,
                )
        fig.update_xaxes(range=[-0.03, 1.03], row=1, col=col)
        fig.update_xaxes(
            range=[-0.03, 1.03], title_text="relative depth (layer / top layer)", row=2, col=col
        )
        fig.update_yaxes(
            range=[-0.1, 1.1],
            row=1,
            col=col,
            title_text="score, scaled to its range" if col == 1 else None,
        )
        fig.update_yaxes(
            tickvals=[len(curves) - k for k in range(len(curves))],
            ticktext=[c.label for c in curves] if col == 1 else [""] * len(curves),
            range=[0.3, len(curves) + 0.7],
            row=2,
            col=col,
        )
    fig.update_layout(
        template="plotly_white",
        height=640,
        margin={"t": 110, "b": 60},
        legend={"orientation": "h", "yanchor": "bottom", "y": 1.04, "x": 0},
        title={
            "text": "The layering at a glance: where each task is found",
            "y": 0.985,
            "yanchor": "top",
        },
    )
    return fig


def _rgba(hex_color: str, alpha: float) -> str:
    h = hex_color.lstrip("#")
    r, g, b = (int(h[i : i + 2], 16) for i in (0, 2, 4))
    return f"rgba({r},{g},{b},{alpha})"
