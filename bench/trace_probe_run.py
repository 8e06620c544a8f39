"""Walk of one ``python -m probing probe`` run: which files of ``probing/`` it enters, and
how often it goes back into a file it came down from (issue 26: "one way through the house").

    python bench/trace_probe_run.py [--root CHECKOUT] [-- probe options]

Runs the CLI's ``probe`` command in this process (a small UPOS run by default, its features
in a fresh cache folder so that extraction is walked too) under :func:`sys.setprofile`, and
keeps a stack of the ``probing/`` files of the frames being executed (other frames are
transparent). Counted per file:

- ``entries``: calls into the file from another file (a loop over layers enters a helper
  many times; that is not going back and forth);
- ``re-entries``: calls into a file that is already on the stack below the caller, i.e. the
  run went down from the file and came back up into it (A -> B -> A); the issue counted
  7 for probes/run.py. "Enters each file once on its way down" = no re-entries;
- ``callbacks``: the same, but into a lambda or a nested function the upper file handed
  down (a progress callback, an atomic writer's ``write(path)``, a cache's ``make()``):
  control returning through a function value, which is the point of passing one, counted
  apart.

``--root`` runs another checkout's ``probing`` (e.g. an export of an older commit) to compare.
Prints a table and writes it as JSON with ``--json``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from types import FrameType

DEFAULT_RUN = [
    "--model",
    "minilm-l6",
    "--task",
    "pos",
    "--max-train-sentences",
    "40",
    "--max-dev-sentences",
    "10",
    "--max-test-sentences",
    "20",
    "--layers",
    "0,3",
    "--n-boot",
    "20",
    "--quiet",
    "--plotlyjs",
    "cdn",
]


def trace(argv: list[str], package_dir: Path) -> dict:
    """Run ``probe argv`` under the profiler; the walk's counts."""
    root = str(package_dir) + os.sep
    stack: list[str] = []
    entries: Counter[str] = Counter()
    reentries: Counter[str] = Counter()
    callbacks: Counter[str] = Counter()
    examples: dict[str, str] = {}

    def name(frame: FrameType) -> str | None:
        f = frame.f_code.co_filename
        return f[len(root) :] if f.startswith(root) else None

    def profile(frame: FrameType, event: str, arg: object) -> None:  # arg: unused here
        if event == "call":
            f = name(frame)
            if f is None:
                return
            if stack and stack[-1] != f:
                entries[f] += 1
                if f in stack:
                    code = frame.f_code
                    qual = getattr(code, "co_qualname", code.co_name)
                    if "<lambda>" in qual or "<locals>" in qual:
                        callbacks[f] += 1
                    else:
                        reentries[f] += 1
                        path = [*dict.fromkeys(stack), f][-6:]
                        examples.setdefault(f, " -> ".join(path) + f" ({qual})")
            elif not stack:
                entries[f] += 1
            stack.append(f)
        elif event == "return" and name(frame) is not None and stack:
            stack.pop()

    from probing.cli.main import main

    t0 = time.perf_counter()
    sys.setprofile(profile)
    try:
        rc = main(["probe", *argv])
    finally:
        sys.setprofile(None)
    return {
        "rc": rc,
        "seconds": round(time.perf_counter() - t0, 1),
        "files": len(entries),
        "re_entries_total": sum(reentries.values()),
        "re_entries": dict(reentries.most_common()),
        "re_entry_example": examples,
        "callbacks": dict(callbacks.most_common()),
        "entries": dict(entries.most_common()),
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--root",
        default=str(Path(__file__).resolve().parents[1]),
        help="checkout whose probing/ runs (default: this one)",
    )
    p.add_argument("--json", help="also write the counts here")
    p.add_argument("probe", nargs="*", help="probe options after --")
    args = p.parse_args(argv)
    root = Path(args.root).resolve()
    sys.path.insert(0, str(root))
    with tempfile.TemporaryDirectory(prefix="trace-probe-") as tmp:
        os.environ["CONTEXTLENS_CACHE_DIR"] = str(Path(tmp) / "cache")
        models = Path.home() / ".cache" / "contextlens" / "models"
        if models.is_dir():  # hub models fetched before: read, not fetched again
            (Path(tmp) / "cache").mkdir()
            (Path(tmp) / "cache" / "models").symlink_to(models)
        run = args.probe or [*DEFAULT_RUN, "--out", str(Path(tmp) / "out")]
        counts = trace(run, root / "probing")
    print(
        f"probe {' '.join(run)}\nrc {counts['rc']}, {counts['seconds']} s traced; "
        f"{counts['files']} files of probing/ entered; "
        f"{counts['re_entries_total']} re-entries (down and back up into a file), "
        f"{sum(counts['callbacks'].values())} calls back through a function value"
    )
    for f, n in counts["re_entries"].items():
        print(f"  re-entered {n:>4}x  {f}   e.g. {counts['re_entry_example'][f]}")
    for f, n in counts["callbacks"].items():
        print(f"  called back {n:>4}x  {f}")
    print("entries per file (calls in from another file):")
    for f, n in counts["entries"].items():
        print(f"  {n:>7}  {f}")
    if args.json:
        Path(args.json).write_text(json.dumps(counts, indent=1) + "\n", encoding="utf-8")
    return 0 if counts["rc"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
