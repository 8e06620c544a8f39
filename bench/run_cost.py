"""Measures what a Probing-page run costs, for its time estimate (``results/run_costs.json``).

For every embedded model and every task the page runs through ``probe_layers`` (with its
defaults, as the page does), three runs on an EMPTY feature cache: a small one (20 training,
30 dev and 30 test sentences), a larger one (400 / 150 / 150) and one with the page's default
evaluation (400 training sentences, all of dev and test). Their extraction and fitting times
give each a fixed part, a part per training and a part per evaluation sentence. The scalar
mixes (:func:`probing.probes.cost.mix_work`) are timed fit by fit: all of them in the small
run (thousands of small epochs), and on the full run's features a few epochs of the mixes
over 1, 4 and all layers scoring all of dev (the larger runs skip their mixes: their cost is
counted from these, and a mix on all of dev trains for minutes). Together they give the
mixes' costs per unit of work (:meth:`probing.probes.cost.RunCost.from_runs`). One warm-up
run per model first, so that loading kernels is not counted as the fixed part.

Times are CPU seconds of this process (``time.process_time``) with one torch thread, as a
heavy job's worker runs (``ui/worker.py``): on a machine shared with other work, wall time
grows with the load, CPU time much less. Wall times and load averages are kept beside them.

``--validate`` runs the Probing page's own path (``ui.tasks.probe_layers``, the worker's job)
at three training sizes with all dev and test sentences (the page's default) and prints each
estimate beside what the run took, for docs/benchmarks.md.

    OMP_WAIT_POLICY=PASSIVE OMP_NUM_THREADS=1 python -m bench.run_cost [--models minilm-l6 elmo-mini]
    OMP_WAIT_POLICY=PASSIVE OMP_NUM_THREADS=1 python -m bench.run_cost --validate [--sizes 110 400 2000]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

    from probing.encoders.base import Encoder
    from probing.features import Features
    from probing.probes.cost import RunCost
    from probing.probes.mix import ScalarMixProbe

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

# (train sentences, dev = test sentences (None: all), scalar mixes fitted in the run)
SIZES = {"small": (20, 30, True), "large": (400, 150, False), "full": (400, None, False)}
MIX_CHECK_EPOCHS = 4  # epochs of each timed mix on the full run's features
TASKS = ("pos", "xpos", "ptb-pos", "supersense", "wsd")


@contextlib.contextmanager
def timed_parts() -> Iterator[dict]:
    """CPU seconds of feature extraction (``extract``) and one record per scalar-mix fit
    (``mixes``: k layers, n training words, m dev words, epochs, steps, s) in the block."""
    import probing.probes.run as run_module
    from probing.probes import mix as mix_module

    parts: dict = {"extract": 0.0, "mixes": []}
    extract, fit = run_module.extract_features, mix_module.ScalarMixProbe.fit

    def timed_extract(*args: Any, **kwargs: Any) -> Features:  # Any: as extract_features takes
        c0 = time.process_time()
        try:
            return extract(*args, **kwargs)
        finally:
            parts["extract"] += time.process_time() - c0

    def timed_fit(
        self: ScalarMixProbe,
        X: np.ndarray,
        y: Sequence,
        X_dev: np.ndarray | None = None,
        y_dev: Sequence | None = None,
        *args: Any,  # Any: passed on to ScalarMixProbe.fit as given
        **kwargs: Any,
    ) -> ScalarMixProbe:
        c0 = time.process_time()
        out = fit(self, X, y, X_dev, y_dev, *args, **kwargs)
        n, m = len(y), 0 if X_dev is None else int(X_dev.shape[1])
        per_epoch = -(-n // self.batch_size)
        parts["mixes"].append(
            {
                "k": int(X.shape[0]),
                "n": int(n),
                "m": m,
                "epochs": int(self.epochs_),
                "steps": int(self.epochs_ * per_epoch),
                "s": round(time.process_time() - c0, 3),
            }
        )
        return out

    run_module.extract_features = timed_extract
    mix_module.ScalarMixProbe.fit = timed_fit
    try:
        yield parts
    finally:
        run_module.extract_features = extract
        mix_module.ScalarMixProbe.fit = fit


def measure(
    encoder: Encoder, task: str, train: int | None, evals: int | None, mixes: bool = True
) -> dict:
    """One cold run's sizes and times (CPU s; ``wall_s`` and the load average beside).
    Without ``mixes``, the run skips its scalar mixes and a few epochs of them are timed on
    its features instead (:func:`time_mixes`)."""
    from probing.probes.run import probe_layers
    from probing.probes.tasks import TASKS as TASK_SETS

    with tempfile.TemporaryDirectory(prefix="cl-cost-") as tmp, timed_parts() as parts:
        os.environ["CONTEXTLENS_CACHE_DIR"] = tmp
        c0, t0 = time.process_time(), time.perf_counter()
        res = probe_layers(
            encoder,
            task,
            max_train_sentences=train,
            max_dev_sentences=evals,
            max_test_sentences=evals,
            scalar_mix=mixes,
        )
        cpu, wall = time.process_time() - c0, time.perf_counter() - t0
        own, checks = list(parts["mixes"]), []
        if not mixes and TASK_SETS[task].kind in ("tagging", "edge"):
            checks = time_mixes(encoder, task, train, evals)
    m = res.meta
    return {
        "train": int(m.n_train_sentences or 0),
        "eval": int((m.n_dev_sentences or 0) + (m.n_test_sentences or 0)),
        "dev": int(m.n_dev_sentences or 0),
        "layers": len(m.layers),
        "train_words": int(m.n_train_words or 0),
        "dev_words": int(m.n_dev_words or 0),
        "extract_s": round(parts["extract"], 2),
        "fit_s": round(cpu - parts["extract"], 2),
        "mixes": own,  # the run's own (their seconds are part of fit_s)
        "mix_checks": checks,  # timed apart, on the run's features
        "wall_s": round(wall, 2),
        "load1": round(os.getloadavg()[0], 2),
    }


def time_mixes(encoder: Encoder, task: str, train: int | None, evals: int | None) -> list[dict]:
    """A few epochs of the scalar mixes over the first 1, 4 and all layers, on the features
    of a run just made (read from its cache) and scoring all its dev words, as the tagging
    runner fits them (the members' C, the training sample's statistics), each timed."""
    from probing.features import extract_features
    from probing.probes.mix import ScalarMixProbe, layer_stats
    from probing.probes.tasks import TASKS as TASK_SETS

    spec = TASK_SETS[task]
    dataset = spec.default_dataset
    label = spec.field_for(dataset)
    tr = extract_features(encoder, dataset, "train", label, max_sentences=train)
    dev = extract_features(encoder, dataset, "dev", label, max_sentences=evals)
    X_tr, X_dev = tr.layer_stack(), dev.layer_stack()
    with timed_parts() as parts:
        mean, std = layer_stats(X_tr)
        n = X_tr.shape[0]
        for k in sorted({1, min(4, n), n}):
            probe = ScalarMixProbe(
                C=0.1, epochs=MIX_CHECK_EPOCHS, min_steps=0, max_train_words=None
            )
            probe.fit(X_tr[:k], tr.labels, X_dev[:k], dev.labels, stats=(mean[:k], std[:k]))
    return parts["mixes"]


def costs_of(run: dict, runs: list[dict]) -> RunCost:
    """One task's costs: fitting from its own runs, extraction (and the mixes' costs per
    unit of work) from every run of the same model on the same data set too (the task does
    not change what is encoded, nor what a mix step costs)."""
    from probing.probes.cost import RunCost

    same_data = [
        r[size]
        for r in runs
        for size in SIZES
        if r["model"] == run["model"] and r["dataset"] == run["dataset"] and r is not run
    ]
    # what a mix costs per unit of work depends on the model, not on the task or data set
    same_model = [r[size] for r in runs for size in SIZES if r["model"] == run["model"]]
    return RunCost.from_runs([run[size] for size in SIZES], same_data, same_model)


def validate(model: str, task: str, sizes: list[int]) -> list[dict]:
    """The page's path at each training size, all dev/test sentences, on an empty cache: the
    estimate (:func:`probing.probes.cost.estimate_seconds`) against the CPU seconds taken."""
    from probing.models.registry import load_encoder
    from probing.probes.cost import estimate_seconds
    from probing.probes.settings import ProbeSettings
    from ui import tasks

    encoder = load_encoder(model)
    rows = []
    for n in sizes:
        settings = ProbeSettings(model=model, task=task, max_train_sentences=n)
        with tempfile.TemporaryDirectory(prefix="cl-cost-") as tmp, timed_parts() as parts:
            os.environ["CONTEXTLENS_CACHE_DIR"] = tmp
            ext, fit = estimate_seconds(encoder, settings)
            load0 = os.getloadavg()[0]
            c0, t0 = time.process_time(), time.perf_counter()
            tasks.probe_layers(model, settings)
            cpu, wall = time.process_time() - c0, time.perf_counter() - t0
        rows.append(
            {
                "model": model,
                "task": task,
                "train": n,
                "estimate_s": round(ext + fit, 1),
                "estimate_extract_s": round(ext, 1),
                "estimate_fit_s": round(fit, 1),
                "cpu_s": round(cpu, 1),
                "extract_cpu_s": round(parts["extract"], 1),
                "mix_cpu_s": round(sum(m["s"] for m in parts["mixes"]), 1),
                "wall_s": round(wall, 1),
                "load1": [round(load0, 2), round(os.getloadavg()[0], 2)],
                "ratio": round(cpu / (ext + fit), 2),
            }
        )
        print(json.dumps(rows[-1]), flush=True)
    return rows


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--models", nargs="*", default=["minilm-l6", "elmo-mini"])
    p.add_argument("--tasks", nargs="*", default=list(TASKS))
    p.add_argument("--threads", type=int, default=1, help="torch threads (a worker runs 1)")
    p.add_argument("--out", default="results/run_costs.json")
    p.add_argument(
        "--refit",
        action="store_true",
        help="recompute the costs from the runs already in --out (no measuring)",
    )
    p.add_argument(
        "--validate",
        action="store_true",
        help="estimate against measured: the first model and task, --sizes training sentences",
    )
    p.add_argument("--sizes", nargs="*", type=int, default=[110, 400, 2000])
    args = p.parse_args(argv)
    import torch

    from probing.models.registry import load_encoder
    from probing.probes.cost import cost_row
    from probing.probes.tasks import TASKS as TASK_SETS

    torch.set_num_threads(args.threads)
    if args.validate:
        rows = validate(args.models[0], args.tasks[0], args.sizes)
        print(f"\n{datetime.now(UTC):%Y-%m-%d} · {os.cpu_count()} cores, {platform.machine()}")
        print("| training sentences | estimate | measured CPU (wall, load) | measured / estimate |")
        print("|---|---|---|---|")
        for r in rows:
            print(
                f"| {r['train']:,} | {r['estimate_s']:.0f} s | {r['cpu_s']:.0f} s ({r['wall_s']:.0f} s, "
                f"load {r['load1'][0]:.1f}→{r['load1'][1]:.1f}) | ×{r['ratio']:.2f} |"
            )
        return 0
    old = json.loads(Path(args.out).read_text(encoding="utf-8")) if args.refit else {}
    runs = [{**r, "dataset": TASK_SETS[r["task"]].default_dataset} for r in old.get("runs", [])]
    for model in [] if args.refit else args.models:
        encoder = load_encoder(model)
        measure(encoder, "pos", *SIZES["small"][:2], mixes=False)  # warm-up
        for task in args.tasks:
            sizes = {name: measure(encoder, task, *size) for name, size in SIZES.items()}
            runs.append(
                {"model": model, "task": task, "dataset": TASK_SETS[task].default_dataset, **sizes}
            )
            print(json.dumps(runs[-1]), flush=True)
    rows = [cost_row(r["model"], r["task"], costs_of(r, runs)) for r in runs]
    record = {
        "what": "Probing-page run costs (bench/run_cost.py): CPU seconds of one thread = fixed "
        "+ per_sentence x sentences, for extraction and for fitting the probes; the scalar "
        "mixes per unit of work (probing.probes.cost.mix_work); measured on an empty feature "
        "cache",
        "when": old.get("when") or datetime.now(UTC).isoformat(timespec="minutes"),
        "machine": old.get("machine")
        or f"{os.cpu_count()} cores, {platform.machine()}, {args.threads} torch thread(s), "
        f"CPU time (shared machine: load average {os.getloadavg()[0]:.1f} at the end)",
        "costs": rows,
        "runs": runs,
    }
    Path(args.out).write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
