"""Issue 45 timing: one AlterRep layer (target: within a minute), the whole command as
run from the shell (model loading, case parsing, the LEACE fit and the pushes included).

    OMP_WAIT_POLICY=PASSIVE nice -n 10 python bench/alterrep_layer.py --layers 3

runs ``python -m probing alterrep --model minilm-l6-mlm --layers 3 --max-fit-cases 1500
--max-eval-cases 1000`` in this process (the committed run's case counts) into a temporary
folder, and prints one Markdown table row: CPU seconds (``time.process_time``, every thread
of the process; the machine is shared, so wall time is noisy), wall seconds, peak RSS and
the load average before and after.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--layers", default="3")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--out", help="keep the run's files here (default: a temporary folder)")
    args = p.parse_args(argv)

    import torch

    from probing.cli.main import main as cli

    torch.set_num_threads(args.threads)
    load0 = os.getloadavg()[0]
    cpu0, wall0 = time.process_time(), time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        code = cli(
            ["alterrep", "--model", "minilm-l6-mlm", "--layers", args.layers]
            + ["--max-fit-cases", "1500", "--max-eval-cases", "1000", "--out", args.out or tmp]
        )
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024**2  # KiB on Linux
    load1 = os.getloadavg()[0]
    if code:
        raise SystemExit(code)
    print("| measurement | CPU | wall | peak RSS | load average |")
    print("|---|---|---|---|---|")
    print(
        f"| alterrep --layers {args.layers}, minilm-l6-mlm, {args.threads} thread(s) "
        f"| {cpu:.1f} s | {wall:.1f} s | {rss:.2f} GB | {load0:.1f} → {load1:.1f} |"
    )


if __name__ == "__main__":
    main()
