"""Issue 44 timing: one sentence's Integrated Gradients (50 steps) and Value Zeroing on
minilm-l6-mlm, warm, on the CPU threads torch is given (the target: within 3 s on 2 cores).

    OMP_WAIT_POLICY=PASSIVE OMP_NUM_THREADS=2 python bench/attribution.py

Prints one Markdown table row per measurement (docs/benchmarks.md); every time is the median
of ``--repeat`` runs after one warm-up, with the load average at start (a shared machine).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

SENTENCE = "The capital of France is Paris , and its largest river is the Seine ."


def median_seconds(fn: Callable[[], object], repeat: int) -> tuple[float, float]:
    """Median wall and process-CPU seconds (CPU / threads is what the wall time would be on
    that many idle cores; on a shared machine the wall time also waits for a core)."""
    fn()  # warm
    wall, cpu = [], []
    for _ in range(repeat):
        start, start_cpu = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return statistics.median(wall), statistics.median(cpu)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--threads", type=int, default=2)
    args = p.parse_args(argv)

    import torch

    import probing
    from probing.attribution.alti import alti
    from probing.attribution.case import prepare_case
    from probing.attribution.integrated_gradients import integrated_gradients
    from probing.attribution.value_zeroing import value_zeroing

    torch.set_num_threads(args.threads)
    enc = probing.load_encoder("minilm-l6-mlm")
    words = SENTENCE.split()
    case = prepare_case(enc, words, words.index("Paris"))
    print(f"load average at start: {os.getloadavg()[0]:.1f}; torch threads: {args.threads}")
    print("| measurement | median wall | median CPU | notes |\n|---|---|---|---|")
    ig = median_seconds(lambda: integrated_gradients(enc, case, steps=50), args.repeat)
    vz = median_seconds(lambda: value_zeroing(enc.model, case.inputs), args.repeat)
    al = median_seconds(lambda: alti(enc.model, case.inputs), args.repeat)
    note = f"minilm-l6-mlm, {len(words)} words / {case.n_pieces} pieces"
    both = (ig[0] + vz[0], ig[1] + vz[1])
    for what, (wall, cpu), extra in (
        ("Integrated Gradients, 50 steps", ig, note),
        ("Value Zeroing, 6 layers", vz, note),
        ("IG + Value Zeroing", both, "target: 3 s warm on 2 cores"),
        ("ALTI, 6 layers", al, note),
    ):
        print(f"| {what} | {wall:.2f} s | {cpu:.2f} CPU-s | {extra} |")
    print(f"load average at end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
