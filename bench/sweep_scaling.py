"""Wall time of a sweep with 1 and 2 workers, and the agreement of the two executors.

Runs the example spec (docs/examples/sweep.toml, or SPEC) into fresh output folders:

1. ``local``, 1 worker, empty feature cache   (cold: extraction + fitting)
2. ``local``, 2 workers, another empty cache  (cold)
3. ``local``, 1 worker, run 1's cache         (warm: fitting, plus model loads for the keys)
4. ``local``, 2 workers, run 1's cache        (warm)
5. ``ray``, 2 CPUs, run 1's cache             (warm; only when Ray is installed)

and checks that every run's ``results.csv`` is byte-identical. Prints a markdown table for
docs/scaling.md. Extraction and fitting seconds per job come from each run's timing.csv.

    OMP_WAIT_POLICY=PASSIVE python bench/sweep_scaling.py [SPEC] [--skip-ray]
"""

from __future__ import annotations

import os
import platform
import sys
import tempfile
import time
from dataclasses import replace
from datetime import date
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


def main() -> None:
    from probing.sweep import load_spec, run_sweep

    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    spec = load_spec(args[0] if args else ROOT / "docs" / "examples" / "sweep.toml")
    root = Path(tempfile.mkdtemp(prefix="sweep-bench-"))
    runs = [
        ("local", 1, "cold", root / "cache1"),
        ("local", 2, "cold", root / "cache2"),
        ("local", 1, "warm", root / "cache1"),
        ("local", 2, "warm", root / "cache1"),
    ]
    if "--skip-ray" not in sys.argv:
        runs.append(("ray", 2, "warm", root / "cache1"))
    rows, csvs = [], []
    for i, (executor, workers, cache_state, cache) in enumerate(runs):
        out = root / f"out{i}"
        t0 = time.perf_counter()
        report = run_sweep(
            replace(spec, out=out, cache_dir=cache), executor, workers=workers, plotlyjs="cdn"
        )
        wall = time.perf_counter() - t0
        timing = pd.read_csv(out / "timing.csv")
        ext, fit = timing[timing["kind"] == "extract"], timing[timing["kind"] == "fit"]
        csvs.append((out / "results.csv").read_bytes())
        rows.append(
            f"| {executor} | {workers} | {cache_state} | {report.n_cells} | {wall:.0f} | "
            f"{ext['seconds'].sum():.0f} | {fit['seconds'].sum():.0f} | "
            f"{fit['seconds'].median():.2f} |"
        )
        print(rows[-1], flush=True)
    same = all(c == csvs[0] for c in csvs)
    print(f"\n{platform.processor() or platform.machine()}, {os.cpu_count()} cores, {date.today()}")
    print(
        "| executor | workers | feature cache | cells | wall s | extraction s (sum) | "
        "fitting s (sum) | s per cell (median) |"
    )
    print("|---|---|---|---|---|---|---|---|")
    print("\n".join(rows))
    print(f"\nresults.csv byte-identical across all runs: {same}")
    print(f"folders under {root}")


if __name__ == "__main__":
    main()
