"""Time every example command of the README's "Command line" block, as written.

Each ``python -m probing …`` line of the block is run from the repository root, as a reader
of the README runs it (its commands write to ``/tmp/contextlens`` or ignored folders), one
at a time, with
a time limit (``--limit-s``, default 300: the README promises every example finishes in 5
minutes with its defaults). Reported per command: wall seconds, exit status, the machine's
load average at its start, and any file it left in the repository that git does not ignore
(an example must write outside the checkout or into an ignored folder).

    python bench/readme_examples.py --json bench/out/readme_examples.json
    python bench/readme_examples.py --only fill-mask,encode      # a subset (substring match)

Lines that only name a command family (``train-elmo …``) or need an argument that is not
given are skipped and listed. The load average is printed because other jobs share the
cores: the times are what this machine gave at that moment, not an idle 2-core figure.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shlex
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def readme_commands(readme: Path = ROOT / "README.md") -> list[str]:
    """The ``python -m probing…`` lines of the README's "Command line" code block, without
    their trailing comments."""
    text = readme.read_text(encoding="utf-8")
    section = text.split("## Command line", 1)[1]
    block = section.split("```bash", 1)[1].split("```", 1)[0]
    out = []
    for line in block.splitlines():
        line = re.sub(r"\s+#\s.*$", "", line).strip()
        # optional parts shown in brackets ("[--executor ray]") are left out: the defaults
        line = re.sub(r"\s\[(?!MASK\])[^\]]*\]", "", line)
        if line.startswith("python -m probing"):
            out.append(line)
    return out


def runnable(command: str) -> bool:
    """False for lines that are no complete command (``…``, ``a / b``)."""
    return "…" not in command and " / " not in command


def untracked(root: Path = ROOT) -> set[str]:
    """Files in the checkout that git neither tracks nor ignores."""
    out = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )
    return {line[3:] for line in out.stdout.splitlines() if line.startswith("??")}


def time_command(command: str, limit_s: float) -> dict:
    """Run ``command`` from the repository root (as the README's reader does) under a time
    limit; what it took and what it left behind."""
    before = untracked()
    load = os.getloadavg()[0]
    start = time.monotonic()
    try:
        proc = subprocess.run(
            [sys.executable, *shlex.split(command)[1:]],  # "python" as this interpreter
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=limit_s,
            check=False,
        )
        status = proc.returncode
        tail = (proc.stderr or proc.stdout)[-300:]
    except subprocess.TimeoutExpired:
        status, tail = "timeout", ""
    seconds = round(time.monotonic() - start, 1)
    left = sorted(untracked() - before)
    return {
        "command": command,
        "seconds": seconds,
        "status": status,
        "load_at_start": round(load, 2),
        "left_in_repo": left,
        "tail": tail if status not in (0, "timeout") else "",
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--limit-s", type=float, default=300.0, help="time limit per command")
    ap.add_argument("--only", help="comma-separated substrings: run only matching commands")
    ap.add_argument("--json", type=Path, help="write the results here as well")
    args = ap.parse_args(argv)
    commands = readme_commands()
    skipped = [c for c in commands if not runnable(c)]
    todo = [c for c in commands if runnable(c)]
    if args.only:
        keys = [k.strip() for k in args.only.split(",") if k.strip()]
        todo = [c for c in todo if any(k in c for k in keys)]
    rows = []
    for command in todo:
        row = time_command(command, args.limit_s)
        rows.append(row)
        print(json.dumps(row), flush=True)
    summary = {
        "when": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M%z"),
        "machine": f"{os.cpu_count()} cores, {platform.machine()}",
        "threads": os.environ.get("OMP_NUM_THREADS", "unset"),
        "limit_s": args.limit_s,
        "rows": rows,
        "skipped": skipped,
    }
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    over = [r["command"] for r in rows if r["status"] != 0 or r["left_in_repo"]]
    print(f"{len(rows)} run, {len(over)} over the limit, failed or writing into the checkout")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
