"""Measures what a Probing-page run costs, for its time estimate (``results/run_costs.json``).

For every embedded model and every task the page runs through ``probe_layers`` (with its
defaults, as the page does), two runs on an EMPTY feature cache: a small one (20 training,
30 dev and 30 test sentences) and a larger one (400 / 150 / 150). Their extraction and
fitting times give each a fixed part and a part per sentence
(:meth:`probing.probes.cost.RunCost.from_runs`). One warm-up run per model first, so that
loading kernels is not counted as the fixed part.

    OMP_WAIT_POLICY=PASSIVE python -m bench.run_cost [--models minilm-l6 elmo-mini]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

SIZES = {"small": (20, 30), "large": (400, 150)}  # (train sentences, dev = test sentences)
TASKS = ("pos", "xpos", "ptb-pos", "supersense", "wsd")


def measure(encoder, task: str, train: int, evals: int) -> dict:  # noqa: ANN001
    """One cold run's sizes and times."""
    from probing.probes.run import probe_layers

    with tempfile.TemporaryDirectory(prefix="cl-cost-") as tmp:
        os.environ["CONTEXTLENS_CACHE_DIR"] = tmp
        t0 = time.perf_counter()
        res = probe_layers(
            encoder,
            task,
            max_train_sentences=train,
            max_dev_sentences=evals,
            max_test_sentences=evals,
        )
        wall = time.perf_counter() - t0
    m = res.meta
    return {
        "train": int(m.n_train_sentences or 0),
        "eval": int((m.n_dev_sentences or 0) + (m.n_test_sentences or 0)),
        "layers": len(m.layers),
        "train_words": int(m.n_train_words or 0),
        "extract_s": float(m.timing_s["extract"]),
        "fit_s": float(m.timing_s["fit"]),
        "wall_s": round(wall, 2),
    }


def costs_of(run: dict, runs: list[dict]):  # noqa: ANN201 - RunCost
    """One task's costs: fitting from its own runs, extraction from every run of the same
    model on the same data set (the task does not change what is encoded)."""
    from probing.probes.cost import RunCost

    same_data = [
        r[size]
        for r in runs
        for size in SIZES
        if r["model"] == run["model"] and r["dataset"] == run["dataset"] and r is not run
    ]
    return RunCost.from_runs([run[size] for size in SIZES], same_data)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--models", nargs="*", default=["minilm-l6", "elmo-mini"])
    p.add_argument("--tasks", nargs="*", default=list(TASKS))
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--out", default="results/run_costs.json")
    p.add_argument(
        "--refit",
        action="store_true",
        help="recompute the costs from the runs already in --out (no measuring)",
    )
    args = p.parse_args(argv)
    import torch

    from probing.models.registry import load_encoder
    from probing.probes.cost import cost_row
    from probing.probes.tasks import TASKS as TASK_SETS

    torch.set_num_threads(args.threads)
    old = json.loads(Path(args.out).read_text(encoding="utf-8")) if args.refit else {}
    runs = [{**r, "dataset": TASK_SETS[r["task"]].default_dataset} for r in old.get("runs", [])]
    for model in [] if args.refit else args.models:
        encoder = load_encoder(model)
        measure(encoder, "pos", *SIZES["small"])  # warm-up
        for task in args.tasks:
            sizes = {name: measure(encoder, task, *size) for name, size in SIZES.items()}
            runs.append(
                {"model": model, "task": task, "dataset": TASK_SETS[task].default_dataset, **sizes}
            )
            print(runs[-1], flush=True)
    rows = [cost_row(r["model"], r["task"], costs_of(r, runs)) for r in runs]
    record = {
        "what": "Probing-page run costs (bench/run_cost.py): seconds = fixed + per_sentence x "
        "sentences, for extraction and fitting; measured on an empty feature cache",
        "when": old.get("when") or datetime.now(UTC).isoformat(timespec="minutes"),
        "machine": old.get("machine")
        or f"{os.cpu_count()} cores, {platform.machine()}, {args.threads} torch threads",
        "costs": rows,
        "runs": runs,
    }
    Path(args.out).write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
