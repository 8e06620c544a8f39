"""``run_sweep``: extract each (model, dataset, split) once, then fit every cell not yet done.

The driver (this process) only schedules and writes files: workers extract and fit. Fitting
for a model and data set starts as soon as its splits are extracted, while other
extractions still run. Each finished cell is written at once (atomically), so a crash or
Ctrl-C loses only the cells in flight; a re-run skips every cell already on disk.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

from probing import config
from probing.sweep import adapter
from probing.sweep.estimate import check_sweep_time
from probing.sweep.executors import make_executor
from probing.sweep.grid import Cell, ExtractJob, cells_for, extraction_jobs, n_cells
from probing.sweep.merge import merge
from probing.sweep.resolve import resolve
from probing.sweep.spec import SweepSpec
from probing.sweep.store import SweepStore

# (done, total, what just finished); total is None until every model's depth is known.
SweepProgress = Callable[[int, int | None, str], None]


@dataclass
class SweepReport:
    """What a run did: cells fitted now, cells found done, where the merged files are."""

    out: Path
    n_cells: int
    fitted: int
    skipped: int
    extracted: int
    seconds: float
    files: dict[str, Path]


def run_sweep(
    spec: SweepSpec,
    executor: str = "local",
    *,
    workers: int | None = None,
    address: str | None = None,
    progress: SweepProgress | None = None,
    plotlyjs: bool | str = "cdn",
    confirm: bool = False,
) -> SweepReport:
    """Run (or resume) a sweep and merge its cells; see the module doc.

    Args:
        spec: a validated :class:`~probing.sweep.spec.SweepSpec`.
        executor: ``local`` (process pool) or ``ray``.
        workers: processes (local) or CPUs of a local Ray instance; default: the cores here.
        address: Ray cluster address (``auto``, ``ray://host:10001``); None: a local instance.
        progress: ``(done, total, what)`` after every extraction and cell.
        plotlyjs: how the per-model HTML figures carry plotly.js (True: inline, "cdn").
        confirm: start even when the estimate is over
            :data:`~probing.sweep.estimate.CONFIRM_ABOVE_S` (else SweepTooLongError).
    """
    t0 = time.perf_counter()
    resolved = resolve(spec)  # every model and data set, before anything is written or extracted
    check_sweep_time(spec, resolved, workers=workers, confirm=confirm)
    store = SweepStore(spec.out)
    store.prepare(spec.to_dict())
    cache_dir = str(Path(spec.cache_dir or config.cache_dir()).resolve())
    data_dir = str(config.data_dir().resolve())
    report = progress or (lambda done, total, what: None)
    state = _State(spec, store, report)

    ex = make_executor(executor, workers, address)
    device = "cuda" if ex.gpu else None
    pending: dict = {}
    try:
        for job in state.jobs:
            h = ex.submit("extract", adapter.extract, asdict(job), cache_dir, data_dir, device)
            pending[h] = ("extract", job)
        while pending:
            handle, value = ex.next_done(pending)
            kind, item = pending.pop(handle)
            if kind == "extract":
                for cell in state.extracted(item, value):
                    pending[
                        ex.submit("fit", adapter.fit, _cell_args(cell), cache_dir, data_dir)
                    ] = (
                        "fit",
                        cell,
                    )
            else:
                state.fitted(item, value)
    except BaseException:
        ex.close(cancel=True)
        raise
    ex.close()
    files = merge(spec.out, plotlyjs=plotlyjs)
    return SweepReport(
        out=spec.out,
        n_cells=state.total_cells,
        fitted=state.n_fitted,
        skipped=state.n_skipped,
        extracted=state.n_encoded,
        seconds=round(time.perf_counter() - t0, 2),
        files=files,
    )


class _State:
    """Bookkeeping of one run: which splits are extracted, which cells are done."""

    def __init__(self, spec: SweepSpec, store: SweepStore, report: SweepProgress) -> None:
        self.spec, self.store, self.report = spec, store, report
        self.jobs = extraction_jobs(spec)
        self.done_ids = store.done()
        self.splits: dict[tuple[str, str], dict[str, dict]] = {}
        self.layer_names: dict[str, list[str]] = {}
        self.total_cells = n_cells(spec)
        self._resolved = 0  # (model, dataset) pairs whose cells are known
        self._pairs = {(j.model, j.dataset) for j in self.jobs}
        self._cells_known = 0
        self.n_done = self.n_fitted = self.n_skipped = self.n_encoded = 0

    @property
    def total(self) -> int | None:
        if self.total_cells is None:
            return None
        return len(self.jobs) + self.total_cells

    def tick(self, what: str) -> None:
        self.n_done += 1
        self.report(self.n_done, self.total, what)

    def extracted(self, job: ExtractJob, value: dict) -> list:
        """Record an extraction; return the cells to fit once their data set is complete."""
        self.store.write_extraction(job.id, {**asdict(job), **value})
        self.n_encoded += int(not value["cached"])
        self.layer_names[job.model] = value["layer_names"]
        pair = (job.model, job.dataset)
        self.splits.setdefault(pair, {})[job.split] = value
        todo = []
        if len(self.splits[pair]) == sum(1 for j in self.jobs if (j.model, j.dataset) == pair):
            got = self.splits[pair]
            features = {s: (v["folder"], v["key"], v["sample"]) for s, v in got.items()}
            layer_ids = tuple(got["train"]["layer_ids"])
            cells = cells_for(self.spec, job.model, job.dataset, features, layer_ids)
            self._cells_known += len(cells)
            self._resolved += 1
            if self._resolved == len(self._pairs):
                self.total_cells = self._cells_known
            for cell in cells:
                if cell.id in self.done_ids:
                    self.n_skipped += 1
                    self.tick(f"{cell.id} (done before)")
                else:
                    todo.append(cell)
        self.tick(f"extract {job.id}")
        return todo

    def fitted(self, cell: Cell, value: dict) -> None:
        results = value["results"]
        results["meta"]["layer_names"] = self.layer_names.get(cell.model, [])
        record = {
            "id": cell.id,
            "cell": {
                "model": cell.model,
                "task": cell.task,
                "dataset": cell.dataset,
                "seed": cell.seed,
                "layer": cell.layer,
            },
            "features": [{"split": s, "key": k, "sample": n} for s, _, k, n in cell.features],
            "settings": cell.settings,
            "timing": {**value["timing"], "finished": time.strftime("%Y-%m-%dT%H:%M:%S%z")},
            "results": results,
        }
        self.store.write_cell(cell.id, record)
        self.n_fitted += 1
        self.tick(cell.id)


def _cell_args(cell: Cell) -> dict:
    return {**asdict(cell), "features": [list(f) for f in cell.features]}
