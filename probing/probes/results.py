"""What a probe run gives: :class:`ProbeResults` (a tidy table, the scalar mix, the centre
of gravity, :class:`~probing.probes.meta.RunMeta`), read and written as JSON, and the plain
text of its summary and comparison table (what ``python -m probing probe`` prints).

Imports only pandas/numpy and the light task registry: figures, the app and the sweep read
results without loading the runners.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import numpy as np
import pandas as pd

from probing.probes.meta import RunMeta
from probing.probes.tasks import Task, get_task

# Probes with one row per layer (the others are baselines, mixes and summaries).
PER_LAYER_PROBES = ("linear", "1nn", "structural")

COLUMNS = [
    "model",
    "task",
    "dataset",
    "split",
    "probe",
    "layer",
    "metric",
    "value",
    "ci_low",
    "ci_high",
    "control",
    "selectivity",
    "n",
    "control_ci_low",
    "control_ci_high",
    "selectivity_ci_low",
    "selectivity_ci_high",
    "seeds",
    "selected_on",
    "sd",
    "control_sd",
    "selectivity_sd",
]
_FLOAT_COLUMNS = (
    "value",
    "ci_low",
    "ci_high",
    "control",
    "selectivity",
    "control_ci_low",
    "control_ci_high",
    "selectivity_ci_low",
    "selectivity_ci_high",
    "sd",
    "control_sd",
    "selectivity_sd",
)


@dataclass
class ProbeResults:
    """Everything one :func:`probe_layers` run measured.

    Attributes:
        table: tidy DataFrame, one row per (probe, layer, metric) with columns
            :data:`COLUMNS`. ``probe`` is ``linear`` / ``1nn`` (per layer), ``scalar_mix``,
            or a baseline (``majority``, ``word_type``, ``static``, ``first_sense``,
            ``semcor_mfs``, ``static_1nn``) with ``layer`` missing. ``control`` and
            ``selectivity`` are set on the linear probe's accuracy rows.
        scalar_mix: ``{"layers", "weights", "gamma", "expected_layer", "accuracy", …}`` or None.
        centre_of_gravity: Tenney et al.'s expected layer over the headline metric's
            differential scores (see :func:`probing.probes.metrics.centre_of_gravity`).
        meta: sizes, chosen C per layer, timings, settings (:class:`RunMeta`).
    """

    model: str
    task: str
    dataset: str
    table: pd.DataFrame
    scalar_mix: dict | None = None
    centre_of_gravity: float = float("nan")
    meta: RunMeta = field(default_factory=RunMeta)
    # Adjacent-layer and best-vs-each differences (probing.probes.compare.table_dict), and
    # task-vs-control per layer where there is a control task.
    comparisons: dict | None = None
    # Per-sentence counts of those scores (probing.probes.compare.SentenceCounts by cell
    # name), written beside the results by ``probe --save-probes``; not in the JSON.
    sentence_counts: dict = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        if isinstance(self.meta, dict):  # the plain-dict form stored files (and older code) use
            self.meta = RunMeta.from_dict(self.meta, **self._run())

    def _run(self) -> dict[str, str]:
        """The run's names, completing the settings a stored ``meta`` gives."""
        return {"model": self.model, "task": self.task, "dataset": self.dataset}

    @cached_property
    def spec(self) -> Task:
        """The task's registry entry, looked up once per results object."""
        return get_task(self.task)

    @property
    def metric(self) -> str:
        """The headline metric (``accuracy`` or ``f1``)."""
        return self.spec.metric

    def layer_scores(self, metric: str | None = None) -> pd.DataFrame:
        """Per-layer rows of the per-layer probe for ``metric`` (default: headline), by layer."""
        metric = metric or self.metric
        t = self.table
        rows = t[t["layer"].notna() & (t["metric"] == metric) & t["probe"].isin(PER_LAYER_PROBES)]
        return rows.sort_values("layer").reset_index(drop=True)

    def baselines(self, metric: str | None = None) -> pd.DataFrame:
        """Baseline rows (no layer) for ``metric``, scalar mix excluded."""
        metric = metric or self.metric
        t = self.table
        return t[
            t["layer"].isna()
            & (t["metric"] == metric)
            & (t["probe"] != "scalar_mix")
            & ~t["probe"].isin(("cog_running_best", "cog_cumulative_mix"))
        ]

    def best_layer(self, metric: str | None = None) -> int:
        """The layer chosen on dev; see :meth:`best_layer_choice`."""
        return self.best_layer_choice(metric)[0]

    def best_layer_choice(self, metric: str | None = None) -> tuple[int, str]:
        """(layer, split it was chosen on): the dev choice the run recorded (tagging runs:
        ``meta["best_layer"]``; structural runs: ``meta["best_layer_dev"]``, by the seed
        mean of the dev headline metric), else (older files, uploads without dev) the best
        test score, with ``"test"`` so that a text can say so."""
        if metric in (None, self.metric):
            chosen = (self.meta.best_layer or {}).get("layer")
            if chosen is None:
                chosen = self.meta.get("best_layer_dev")
            if chosen is not None:
                return int(chosen), "dev"
        scores = self.layer_scores(metric)
        return int(scores.loc[scores["value"].idxmax(), "layer"]), "test"

    def summaries(self) -> pd.DataFrame:
        """Rows of the layer summaries: centres of gravity (``cog_running_best``,
        ``cog_cumulative_mix``) and the dev-chosen ``best_layer`` on test."""
        t = self.table
        return t[t["probe"].isin(("cog_running_best", "cog_cumulative_mix", "best_layer"))]

    def to_dict(self) -> dict:
        """JSON-ready: meta, centre of gravity, scalar mix, records (NaN -> None)."""
        records = [
            {k: _json_value(v) for k, v in row.items()} for row in self.table.to_dict("records")
        ]
        return {
            "model": self.model,
            "task": self.task,
            "dataset": self.dataset,
            "metric": self.metric,
            "centre_of_gravity": _json_value(self.centre_of_gravity),
            "scalar_mix": _jsonable(self.scalar_mix),
            "meta": _jsonable(RunMeta.from_dict(dict(self.meta)).to_dict()),
            **({"comparisons": _jsonable(self.comparisons)} if self.comparisons else {}),
            "results": records,
        }

    def to_json(self, path: str | Path) -> Path:
        path = Path(path)
        path.write_text(json.dumps(self.to_dict(), indent=1) + "\n", encoding="utf-8")
        return path

    @classmethod
    def from_json(cls, path: str | Path) -> ProbeResults:
        """Read back what :meth:`to_json` wrote (e.g. the committed ``results/`` files)."""
        d = json.loads(Path(path).read_text(encoding="utf-8"))
        table = typed_table(d["results"])
        cog = d.get("centre_of_gravity")
        return cls(
            model=d["model"],
            task=d["task"],
            dataset=d["dataset"],
            table=table,
            scalar_mix=d.get("scalar_mix"),
            centre_of_gravity=float("nan") if cog is None else cog,
            meta=RunMeta.from_dict(
                d.get("meta"), model=d["model"], task=d["task"], dataset=d["dataset"]
            ),
            comparisons=d.get("comparisons"),
        )


def typed_table(rows: list[dict]) -> pd.DataFrame:
    """The tidy table with its dtypes: nullable int layers, float scores (NaN = none).
    Rows written before a column existed (older results) get NaN / 1 seed / "" there."""
    table = pd.DataFrame(rows, columns=COLUMNS)
    table["layer"] = table["layer"].astype("Int64")
    for col in _FLOAT_COLUMNS:
        table[col] = table[col].astype(float)
    table["seeds"] = table["seeds"].fillna(1).astype(int)
    table["selected_on"] = table["selected_on"].astype(object).fillna("").astype(str)
    return table


def comparison_text(results: ProbeResults) -> str:
    """The run's comparison table as text (``--compare``)."""
    from probing.probes.compare import Difference, format_table

    table = results.comparisons
    if not table:
        return "no comparison table (fewer than two layers)"
    text = format_table([Difference.from_dict(r) for r in table["rows"]])
    if table.get("selectivity"):
        text += "\n\ntask − control (selectivity) per layer:\n" + format_table(
            [Difference.from_dict(r) for r in table["selectivity"]]
        )
    return text


def summary(results: ProbeResults) -> str:
    """A short plain-text table: per-layer score, CI, control, selectivity; baselines."""
    metric = results.metric
    lines = [f"{results.model} · {results.dataset} · {results.task} ({metric}, test split)"]
    lines.append(f"{'layer':>5}  {metric:>8}  {'95% CI':>15}  {'control':>7}  {'select.':>7}")
    for _, r in results.layer_scores().iterrows():
        ctl = "" if r["control"] != r["control"] else f"{r['control']:.3f}"
        sel = (
            ""
            if r["selectivity"] != r["selectivity"]
            else (
                f"{r['selectivity']:.3f} [{r['selectivity_ci_low']:.3f}, {r['selectivity_ci_high']:.3f}]"
            )
        )
        lines.append(
            f"{int(r['layer']):>5}  {r['value']:>8.3f}  [{r['ci_low']:.3f}, {r['ci_high']:.3f}]"
            f"  {ctl:>7}  {sel}"
        )
    for _, r in results.baselines().iterrows():
        lines.append(f"baseline {r['probe']:<12} {r['value']:.3f}")
    if results.scalar_mix:
        m = results.scalar_mix
        weights = " ".join(f"{w:.2f}" for w in m["weights"])
        lines.append(f"scalar mix {m['accuracy']:.3f}; weights {weights}; γ {m['gamma']:.2f}")
    for _, r in results.summaries().iterrows():
        where = f"layer {int(r['layer'])} (chosen on dev)" if r["probe"] == "best_layer" else ""
        lines.append(
            f"{r['probe']:<18} {where} {r['value']:.3f} [{r['ci_low']:.3f}, {r['ci_high']:.3f}]"
        )
    lines.append(f"centre of gravity (running best) {results.centre_of_gravity:.2f}")
    if results.meta.get("C_at_grid_edge"):
        lines.append("note: the C chosen on dev is at the edge of the grid (--cs)")
    return "\n".join(lines)


def _json_value(v: object) -> object:
    if v is None or v is pd.NA:
        return None
    if isinstance(v, (np.integer,)):
        return int(v)
    if isinstance(v, (float, np.floating)):
        return None if math.isnan(float(v)) else float(v)
    return v


def _jsonable(obj: object) -> object:
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    return _json_value(obj)
