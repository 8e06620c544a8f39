"""Time issue 29's erasure sweep: one task over every minilm-l6 layer, LEACE, 3 random
controls, the masked-LM effect on at least 2,000 held-out words, no recovery probes.

    OMP_WAIT_POLICY=PASSIVE python bench/erasure_sweep.py [--json bench/out/erasure_sweep.json]

runs, from the repository root,

    python -m probing erase --model minilm-l6-mlm --task pos --layers all --method leace \\
        --train-sentences 600 --test-sentences 300 --heldout-sentences 1300 --no-recovery \\
        --out <a temporary folder> --quiet

(600 training / 300 test sentences are the command's defaults; 1,300 held-out UD-EWT test
sentences give 2,016 masked words) and prints one markdown row for docs/benchmarks.md: date, machine (lscpu's
model name, cores), the load average at start and end, wall time, CPU time of the run (user +
sys of the child, which other jobs on the machine inflate much less than the wall time), peak
RSS and the held-out word count read back from the run's JSON. The target: within a few
minutes on 2 cores, i.e. about 5 CPU-minutes or less.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def machine() -> str:
    """lscpu's model name and the cores this process may use."""
    model = "unknown CPU"
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=False).stdout
        for line in out.splitlines():
            if line.startswith("Model name:"):
                model = line.split(":", 1)[1].strip()
    except OSError:
        pass
    return f"{model}, {len(os.sched_getaffinity(0))} cores"


def command(args: argparse.Namespace, out: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "probing",
        "erase",
        "--model",
        args.model,
        "--task",
        args.task,
        "--layers",
        "all",
        "--method",
        "leace",
        "--train-sentences",
        str(args.train_sentences),
        "--test-sentences",
        str(args.test_sentences),
        "--heldout-sentences",
        str(args.heldout_sentences),
        "--no-recovery",
        "--out",
        out,
        "--quiet",
    ]


def run(args: argparse.Namespace) -> dict:
    """One timed run of the sweep; what it took."""
    with tempfile.TemporaryDirectory(prefix="contextlens-erase-bench-") as out:
        cmd = command(args, out)
        load0 = os.getloadavg()[0]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.monotonic()
        proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=False)
        wall = time.monotonic() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        load1 = os.getloadavg()[0]
        words = None
        for path in Path(out).glob("*__erase-leace.json"):
            words = json.loads(path.read_text(encoding="utf-8"))["meta"]["n_heldout_words"]
    if proc.returncode != 0:
        sys.stderr.write(proc.stdout[-2000:] + proc.stderr[-4000:])
    return {
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": machine(),
        "command": " ".join(["python", *cmd[1:]]),
        "exit": proc.returncode,
        "wall_s": round(wall, 1),
        "user_s": round(after.ru_utime - before.ru_utime, 1),
        "sys_s": round(after.ru_stime - before.ru_stime, 1),
        "cpu_s": round(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, 1),
        # ru_maxrss of children: the largest child so far, in KiB on Linux
        "peak_rss_mib": round(after.ru_maxrss / 1024),
        "load_start": round(load0, 2),
        "load_end": round(load1, 2),
        "heldout_sentences": args.heldout_sentences,
        "heldout_words": words,
    }


def row(r: dict) -> str:
    """The docs/benchmarks.md row."""
    words = f"{r['heldout_words']:,}" if r["heldout_words"] else "?"
    return (
        f"| {r['date']} | {r['machine']} | {r['load_start']} → {r['load_end']} | "
        f"{r['heldout_sentences']:,} sentences, {words} words | "
        f"{r['wall_s']:.0f} s | {r['cpu_s']:.0f} s ({r['user_s']:.0f} user + {r['sys_s']:.0f} sys)"
        f" | {r['peak_rss_mib']:,} MiB |"
    )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", default="minilm-l6-mlm")
    p.add_argument("--task", default="pos")
    p.add_argument("--heldout-sentences", type=int, default=1300)
    p.add_argument("--train-sentences", type=int, default=600, help="smaller: a smoke test")
    p.add_argument("--test-sentences", type=int, default=300)
    p.add_argument("--json", help="also write the record here")
    args = p.parse_args(argv)
    r = run(args)
    print("| date | machine | load (1 min) | held out | wall | CPU | peak RSS |")
    print("|---|---|---|---|---|---|---|")
    print(row(r))
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(r, indent=2) + "\n", encoding="utf-8")
    return 0 if r["exit"] == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
