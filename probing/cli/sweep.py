"""CLI command ``sweep``: a grid of probes (models × tasks × seeds × layers) from a TOML spec.

    python -m probing sweep docs/examples/sweep.toml                      # process pool here
    python -m probing sweep docs/examples/sweep.toml --executor ray       # a local Ray instance
    python -m probing sweep spec.toml --executor ray --address auto       # the cluster's head

Features are extracted once per (model, data set, split) into the feature cache, then every
(task, seed, layer) cell is fitted and written to ``OUT/cells/`` as it finishes; a re-run
skips finished cells. At the end ``OUT/results.csv``/``.json`` (one tidy table),
``OUT/timing.csv`` and ``OUT/figures/<model>.html`` are written. See docs/scaling.md.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

from probing.shipped import add_overwrite_argument, output_folder, refuse_shipped
from probing.sweep.executors import EXECUTORS


def add_executor_arguments(p: argparse.ArgumentParser, local: str, workers: str) -> None:
    """``--executor``, ``--address`` and ``--workers`` (sweeps and reports): ``local`` and
    ``workers`` say what the local executor and the worker count mean for the command."""
    p.add_argument(
        "--executor",
        default="local",
        choices=EXECUTORS,
        help=f"local: {local} (default); ray: Ray tasks, in parallel (pip install ray)",
    )
    p.add_argument(
        "--address",
        default=None,
        help="Ray cluster to join: auto, or ray://HEAD:10001 (default: start a local Ray instance)",
    )
    p.add_argument("--workers", type=int, default=None, help=f"{workers} (default: the cores here)")


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Options of ``python -m probing sweep``."""
    p.add_argument("spec", help="the sweep's TOML spec (see docs/examples/sweep.toml)")
    add_executor_arguments(
        p, "a process pool here", "worker processes (local) or CPUs of a local Ray instance"
    )
    p.add_argument(
        "--out",
        type=output_folder,
        default=None,
        help="output folder (overrides the spec's `out`)",
    )
    p.add_argument(
        "--cache-dir",
        default=None,
        help="feature cache every worker sees (overrides the spec's cache_dir)",
    )
    p.add_argument(
        "--plotlyjs",
        default="inline",
        choices=["inline", "cdn"],
        help="embed plotly.js in the figures (inline, offline) or link it (cdn)",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument(
        "--yes",
        action="store_true",
        help="start even when the sweep is estimated to take over 2 h (it is refused otherwise)",
    )
    add_overwrite_argument(p)


def run(args: argparse.Namespace) -> int:
    """Run or resume the sweep; print where the merged files are."""
    from tqdm.auto import tqdm

    from probing.sweep import load_spec, run_sweep

    spec = load_spec(args.spec)
    if args.out:
        spec = replace(spec, out=Path(args.out))
    if args.cache_dir:
        spec = replace(spec, cache_dir=Path(args.cache_dir))
    # before any model or data set is resolved: nothing goes into results/, models/ or the
    # checkout (out = "results" once added a sweep's files to the shipped runs)
    refuse_shipped(
        folders=[spec.out, *([spec.cache_dir] if spec.cache_dir else [])],
        overwrite=args.overwrite,
        hint="write somewhere else with --out DIR or the spec's `out`",
    )
    from probing.sweep.estimate import check_sweep_time, duration
    from probing.sweep.resolve import resolve

    grid = resolve(spec)  # every model and data set, before the first cell
    est = check_sweep_time(spec, grid, workers=args.workers, confirm=args.yes)
    print(
        f"sweep: {grid.n_cells:,} cells ({len(spec.models)} model(s) × {len(spec.tasks)} task(s) "
        f"× {len(spec.seeds)} seed(s) × their layers) → {spec.out}; about "
        f"{duration(est.seconds)} on {est.workers} worker(s)",
        file=sys.stderr,
    )
    bar = None if args.quiet else tqdm(desc="sweep", unit="step", file=sys.stderr)

    def progress(done: int, total: int | None, what: str) -> None:
        if bar is not None:
            bar.total = total
            bar.update(done - bar.n)
            bar.set_postfix_str(what[-60:], refresh=False)

    try:
        report = run_sweep(
            spec,
            args.executor,
            workers=args.workers,
            address=args.address,
            progress=progress,
            plotlyjs=True if args.plotlyjs == "inline" else "cdn",
            confirm=args.yes,
        )
    finally:
        if bar is not None:
            bar.close()
    print(
        f"{report.n_cells} cells: {report.fitted} fitted now, {report.skipped} done before; "
        f"{report.extracted} splits encoded (others from the feature cache); {report.seconds} s"
    )
    for name, path in report.files.items():
        print(f"{name}: {path}")
    return 0
