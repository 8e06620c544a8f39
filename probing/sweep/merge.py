"""A sweep's cells merged into one tidy table, a timing log and a figure per model.

:func:`merge` writes into the sweep folder:

- ``results.csv`` / ``results.json``: one row per (model, task, dataset, seed, layer, probe,
  metric) with columns :data:`SWEEP_COLUMNS`; baselines (no layer) once per (model, task,
  dataset, seed);
- ``timing.csv``: one row per extraction and per cell (seconds, worker, cache hit);
- ``figures/<model>.html``: :func:`probing.figures.sweep.layering_figure`.

:func:`load_sweep` reads a sweep folder back as :class:`~probing.probes.run.ProbeResults`,
one per (model, task, dataset, seed), which the Probing page draws like a single run.
"""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

from probing.errors import SweepError
from probing.sweep.adapter import probe_results
from probing.sweep.grid import safe
from probing.sweep.store import SweepStore, write_json_atomic

SWEEP_COLUMNS = [
    "model",
    "task",
    "dataset",
    "seed",
    "layer",
    "probe",
    "metric",
    "value",
    "ci_low",
    "ci_high",
    "control",
    "selectivity",
    "n",
    "split",
]
TIMING_COLUMNS = [
    "kind",
    "id",
    "model",
    "dataset",
    "split",
    "task",
    "seed",
    "layer",
    "seconds",
    "load_s",
    "fit_s",
    "cpu_s",
    "cached",
    "n_words",
    "worker",
    "finished",
]


def is_sweep(folder: str | os.PathLike[str]) -> bool:
    """True for a folder ``python -m probing sweep`` wrote (it has ``spec.json`` and cells)."""
    folder = Path(folder)
    return (folder / "spec.json").is_file() and (folder / "cells").is_dir()


def merge_table(folder: str | os.PathLike[str]) -> pd.DataFrame:
    """The tidy table of every finished cell (see the module doc)."""
    rows: list[dict] = []
    seen_baselines: set[tuple] = set()
    for rec in _cells(folder):
        c = rec["cell"]
        group = (c["model"], c["task"], c["dataset"], c["seed"])
        first = group not in seen_baselines
        seen_baselines.add(group)
        for r in rec["results"]["results"]:
            if r["layer"] is None and not first:  # the same baselines in every layer's cell
                continue
            rows.append({**r, "seed": c["seed"]})
    table = pd.DataFrame(rows, columns=SWEEP_COLUMNS)
    table["layer"] = table["layer"].astype("Int64")
    table["seed"] = table["seed"].astype(int)
    for col in ("value", "ci_low", "ci_high", "control", "selectivity"):
        table[col] = table[col].astype(float)
    keys = ["model", "task", "dataset", "seed", "layer", "probe", "metric"]
    return table.sort_values(keys, na_position="first", kind="stable").reset_index(drop=True)


def timing_table(folder: str | os.PathLike[str]) -> pd.DataFrame:
    """One row per extraction and per fitted cell: where the time went."""
    store = SweepStore(folder)
    rows = [
        {
            **{
                k: e.get(k)
                for k in (
                    "model",
                    "dataset",
                    "split",
                    "seconds",
                    "cpu_s",
                    "cached",
                    "n_words",
                    "worker",
                )
            },
            "kind": "extract",
            "id": f"{safe(e['model'])}__{e['dataset']}__{e['split']}__{e['dtype']}",
        }
        for e in store.extractions()
    ]
    for rec in store.cells():
        t = rec["timing"]
        rows.append(
            {
                "kind": "fit",
                "id": rec["id"],
                **rec["cell"],
                **t,
                "seconds": round(t["load_s"] + t["fit_s"], 3),
            }
        )
    table = pd.DataFrame(rows, columns=TIMING_COLUMNS)
    for col in ("seed", "layer", "n_words"):
        table[col] = table[col].astype("Int64")
    return table


def merge(folder: str | os.PathLike[str], plotlyjs: bool | str = "cdn") -> dict[str, Path]:
    """Write ``results.csv``/``.json``, ``timing.csv`` and one figure per model; return paths."""
    import json

    from probing.figures.sweep import layering_figure

    folder = Path(folder)
    table = merge_table(folder)
    files = {
        "csv": folder / "results.csv",
        "json": folder / "results.json",
        "timing": folder / "timing.csv",
    }
    table.to_csv(files["csv"], index=False, float_format="%.6g")
    spec = json.loads((folder / "spec.json").read_text(encoding="utf-8"))
    records = json.loads(table.to_json(orient="records"))  # NaN -> null, Int64 -> int
    write_json_atomic(files["json"], {"spec": spec, "columns": SWEEP_COLUMNS, "results": records})
    timing_table(folder).to_csv(files["timing"], index=False)
    for model in table["model"].unique():
        path = folder / "figures" / f"{safe(model)}.html"
        path.parent.mkdir(exist_ok=True)
        layering_figure(table, model).write_html(path, include_plotlyjs=plotlyjs)
        files[f"figure {model}"] = path
    return files


def load_sweep(folder: str | os.PathLike[str]) -> list:
    """A sweep folder as ProbeResults, one per (model, task, dataset, seed), in that order.

    Reads the cell files, so a sweep still running (or stopped) shows what is finished.

    Raises:
        SweepError: the folder is not a sweep folder or has no finished cell.
    """
    groups: dict[tuple, list[dict]] = {}
    for rec in _cells(folder):
        c = rec["cell"]
        groups.setdefault((c["model"], c["task"], c["dataset"], c["seed"]), []).append(rec)
    out = []
    for (model, task, dataset, seed), recs in sorted(groups.items()):
        recs.sort(key=lambda r: r["cell"]["layer"])
        rows = [r for rec in recs for r in rec["results"]["results"] if r["layer"] is not None]
        rows += [r for r in recs[0]["results"]["results"] if r["layer"] is None]
        meta = dict(recs[0]["results"]["meta"])
        layers = [rec["cell"]["layer"] for rec in recs]
        meta.update(
            {
                "layers": layers,
                "seed": seed,
                "sweep": str(Path(folder)),
                "command": f"python -m probing sweep (folder {Path(folder).name})",
            }
        )
        out.append(probe_results(model, task, dataset, rows, meta))
    return out


def _cells(folder: str | os.PathLike[str]) -> list[dict]:
    folder = Path(folder)
    if not is_sweep(folder):
        raise SweepError(
            f"{folder} is not a sweep folder (no spec.json and cells/); "
            "make one with: python -m probing sweep SPEC"
        )
    cells = SweepStore(folder).cells()
    if not cells:
        raise SweepError(f"{folder} has no finished cell yet")
    return cells
