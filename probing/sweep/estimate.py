"""How long a sweep will take, before it starts; a long one runs only when confirmed.

A spec with ``seeds = [0, …, 9999]`` started a 63-hour grid without a word. The estimate is
the measured cost model of probe runs (:mod:`probing.probes.cost`, ``results/run_costs.json``)
applied per cell: one cell fits one layer, so it costs the measured run's fitting time over
its number of layers; each (model, data set, split) is extracted once. Cells already in the
sweep folder are not counted (a re-run skips them). A (model, task) that was never measured
takes the median cell cost of the measured ones.
"""

from __future__ import annotations

import os
import statistics
from dataclasses import dataclass

from probing.errors import ContextLensError, SweepTooLongError
from probing.probes.cost import RunCost, load_costs
from probing.sweep.grid import extraction_jobs
from probing.sweep.resolve import Resolved
from probing.sweep.spec import SweepSpec
from probing.sweep.store import SweepStore

CONFIRM_ABOVE_S = 2 * 3600.0  # sweeps estimated longer than this start only when confirmed
_FALLBACK_SENTENCES = 2_000  # a split whose size cannot be read (the estimate's guess)


@dataclass(frozen=True)
class SweepEstimate:
    """``cells`` still to fit and the CPU seconds they (and the extractions) take; the wall
    time divides by ``workers``. ``measured``: every (model, task) had measured costs."""

    cells: int
    cpu_seconds: float
    workers: int
    measured: bool

    @property
    def seconds(self) -> float:
        """Wall-clock seconds with ``workers`` processes busy all the time."""
        return self.cpu_seconds / max(1, self.workers)


def duration(seconds: float) -> str:
    """``seconds`` in words: "40 s", "12 min", "3.5 h", "2.6 days"."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 90 * 60:
        return f"{seconds / 60:.0f} min"
    if seconds < 48 * 3600:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} days"


def _sentences(dataset: str, split: str, cap: int | None) -> int:
    """Sentences a split contributes: its cap (a split smaller than it is over-counted,
    which only errs long), else its size (read once, memoised)."""
    from probing.features import split_size

    if cap is not None:
        return cap
    try:
        whole = split_size(dataset, split)
    except (ContextLensError, OSError, ValueError):
        return _FALLBACK_SENTENCES
    return whole


def _cell_seconds(cost: RunCost, train: int, evaluate: int, max_words: int | None) -> float:
    """One cell (one layer of one seed): the measured run's fitting time over its layers.
    Not scaled by the C grid: a cell's control task, baselines and bootstrap do not shrink
    with it (docs/scaling.md measured 2.4-3.8 CPU s a cell with 2 Cs; this gives ~4)."""
    _, fit = cost.seconds(train, evaluate, cost.layers, to_encode=0, max_train_words=max_words)
    return fit / max(1, cost.layers)


def estimate_sweep(
    spec: SweepSpec,
    resolved: Resolved,
    workers: int | None = None,
    costs: dict[tuple[str, str], RunCost] | None = None,
) -> SweepEstimate:
    """The time of the cells of ``spec`` not yet in its folder, and of its extractions.

    Args:
        resolved: what :func:`probing.sweep.resolve.resolve` found (layers per model).
        workers: processes running cells at once (default: the cores here).
        costs: measured costs (default: ``results/run_costs.json``).
    """
    costs = load_costs() if costs is None else costs
    t = spec.training
    caps = {
        "train": t.max_train_sentences,
        "dev": t.max_dev_sentences,
        "test": t.max_test_sentences,
    }
    sizes = {
        (ds, split): _sentences(ds, split, caps[split])
        for ds in dict.fromkeys(x.dataset for x in spec.tasks)
        for split in caps
    }
    fallback_cell = statistics.median(
        [_cell_seconds(c, 1_000, 1_000, t.max_train_words) for c in costs.values()] or [3.0]
    )
    measured, total, cells = True, 0.0, 0
    for model in spec.models:
        n_layers = len(spec.layers) if spec.layers else resolved.layers.get(model, 0) + 1
        for task in spec.tasks:
            n = n_layers * len(spec.seeds)
            cells += n
            cost = costs.get((model, task.task))
            if cost is None:
                measured = False
                total += n * fallback_cell
                continue
            train = sizes[(task.dataset, "train")]
            evaluate = sizes[(task.dataset, "dev")] + sizes[(task.dataset, "test")]
            total += n * _cell_seconds(cost, train, evaluate, t.max_train_words)
    for job in extraction_jobs(spec):
        cost = next((c for (m, _), c in costs.items() if m == job.model), None)
        if cost is not None:
            n = sizes.get((job.dataset, job.split), _FALLBACK_SENTENCES)
            total += cost.extract_fixed + cost.extract_per_sentence * n
    done = len(SweepStore(spec.out).done())
    remaining = max(0, cells - done)
    cpu = total * remaining / cells if cells else 0.0
    return SweepEstimate(remaining, cpu, workers or os.cpu_count() or 1, measured)


def check_sweep_time(
    spec: SweepSpec,
    resolved: Resolved,
    *,
    workers: int | None = None,
    confirm: bool = False,
    limit_s: float = CONFIRM_ABOVE_S,
) -> SweepEstimate:
    """The estimate; refused when over ``limit_s`` and not ``confirm``-ed.

    Raises:
        SweepTooLongError: with the estimate, and how to confirm or shrink the grid.
    """
    est = estimate_sweep(spec, resolved, workers)
    if est.seconds > limit_s and not confirm:
        how = "from results/run_costs.json" + ("" if est.measured else ", partly guessed")
        raise SweepTooLongError(
            f"This sweep has {est.cells:,} cells to fit ({len(spec.models)} model(s) × "
            f"{len(spec.tasks)} task(s) × {len(spec.seeds):,} seed(s) × their layers), about "
            f"{duration(est.seconds)} on {est.workers} worker(s) ({duration(est.cpu_seconds)} "
            f"of CPU time; estimate {how}). Sweeps estimated over {duration(limit_s)} start "
            "only when confirmed: run it again with --yes (run_sweep(..., confirm=True)), or "
            "make the grid smaller (fewer seeds, layers or tasks)."
        )
    return est
