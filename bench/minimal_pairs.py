"""Issue 45 timing: PLL of 1,000 minimal pairs on minilm-l6-mlm (target: within 5 minutes
on 2 cores), both sentences of each pair, every piece masked in turn, batched.

    OMP_WAIT_POLICY=PASSIVE python bench/minimal_pairs.py --threads 2

The 1,000 pairs are the run's own paradigms (templates and UD-EWT rules, at most 200 per
paradigm) taken evenly, so the sentence lengths are those of a real run (UD-EWT sentences
up to 30 words, templates 4-9). Prints one Markdown table row per measurement, with the
load average (other work on the machine slows it).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--pairs", type=int, default=1000)
    p.add_argument("--scorer", default="original", choices=["original", "within_word_l2r"])
    args = p.parse_args(argv)

    import numpy as np
    import torch

    from probing.minimal_pairs.evaluate import score_pairs
    from probing.minimal_pairs.paradigms import build
    from probing.models.registry import load_encoder

    torch.set_num_threads(args.threads)
    pairs = build()
    idx = np.unique(np.linspace(0, len(pairs) - 1, args.pairs).round().astype(int))
    pairs = [pairs[i] for i in idx]
    encoder = load_encoder("minilm-l6-mlm")
    n_pieces = sum(len(encoder.tokenize(list(s))[0]) - 2 for pr in pairs for s in (pr.good, pr.bad))
    load0 = os.getloadavg()[0]
    start = time.perf_counter()
    ps, _ = score_pairs(encoder, pairs, args.scorer)
    wall = time.perf_counter() - start
    load1 = os.getloadavg()[0]
    print("| measurement | value | note |")
    print("|---|---|---|")
    print(
        f"| PLL ({args.scorer}) of {len(pairs)} pairs, minilm-l6-mlm, {args.threads} threads "
        f"| {wall:.1f} s | {n_pieces:,} masked copies ({n_pieces / wall:.0f}/s); accuracy "
        f"{ps.correct[ps.kept].mean():.3f}; load average {load0:.1f} → {load1:.1f} |"
    )


if __name__ == "__main__":
    main()
