"""Timing of the Interventions page's one-sentence actions (warm: model loaded, eraser fitted)
and of the eraser fit itself.

    python bench/interventions.py [--repeats 5]

Prints one line per action: median and max wall seconds over the repeats, and the load
average at the start (other work on the machine slows every number here).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    from probing.interventions import patching
    from probing.interventions.sentence import (
        erasing,
        fill_mask_under,
        heads_off,
        labels_before_after,
        sentence_eraser,
    )
    from probing.models.registry import load_encoder

    print(f"load average {os.getloadavg()}, {os.cpu_count()} CPUs")
    enc = load_encoder("minilm-l6-mlm")
    t = time.perf_counter()
    kit = sentence_eraser(enc, "pos", 3)
    print(f"fit eraser + 2 probes (150 sentences, pos, layer 3): {time.perf_counter() - t:.1f} s")
    text = "The keys to the old cabinet [MASK] on the table."
    words = text.replace("[MASK]", "are").split()
    pair = patching.user_pair(
        "The key to the cabinets [MASK] here.",
        "The keys to the cabinet [MASK] here.",
        ("is", "are"),
    )
    actions = {
        "fill-mask, layer 3 erased": lambda: fill_mask_under(
            enc, text, erasing(enc, 3, kit.eraser)
        ),
        "probe labels before/after": lambda: labels_before_after(enc, kit, words),
        "fill-mask, 3 heads off": lambda: fill_mask_under(
            enc, text, heads_off(enc, [(1, 0), (2, 3), (5, 7)])
        ),
        "patch your pair (7 layers x 4 roles, the page's)": lambda: patching.patch_pairs(
            enc, patching.make_batches(enc, pair), n_boot=200, heads=False
        ),
    }
    for name, action in actions.items():
        action()  # warm-up
        times = []
        for _ in range(args.repeats):
            t = time.perf_counter()
            action()
            times.append(time.perf_counter() - t)
        print(f"{name}: median {statistics.median(times):.2f} s, max {max(times):.2f} s")


if __name__ == "__main__":
    main()
