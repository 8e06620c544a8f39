"""Write docs/results.md's "What the numbers say" from results/statements.json.

    PYTHONPATH=. python results/write_statements.py [--check]

Every statement is held to the comparison engine (:mod:`probing.probes.statements`) on the
per-sentence counts in ``results/sentence-scores/``; the ones that hold are written, with
the differences they rest on, between the ``<!-- statements:begin -->`` and
``<!-- statements:end -->`` markers. A statement that says more than the table is printed
with its problems and stops the script (exit 1) before anything is written. ``--check``
only compares the block with what would be written.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from probing.probes.statements import Cells, load_statements, render_block

ROOT = Path(__file__).resolve().parent.parent
BEGIN, END = "<!-- statements:begin -->", "<!-- statements:end -->"


def block_in(text: str) -> str:
    """The current block between the markers (without them)."""
    start, end = text.index(BEGIN) + len(BEGIN), text.index(END)
    return text[start:end].strip("\n")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args(argv)
    statements = load_statements(ROOT / "results" / "statements.json")
    block, verdicts = render_block(statements, Cells(ROOT / "results"))
    bad = [v for v in verdicts if not v.holds]
    for v in bad:
        print(f"DOES NOT HOLD: {v.statement.text}", file=sys.stderr)
        for p in v.problems:
            print(f"  {p}", file=sys.stderr)
    if bad:
        return 1
    doc = ROOT / "docs" / "results.md"
    text = doc.read_text(encoding="utf-8")
    if args.check:
        same = block_in(text) == block
        print("docs block is up to date" if same else "docs block differs from the engine's")
        return 0 if same else 1
    start, end = text.index(BEGIN) + len(BEGIN), text.index(END)
    doc.write_text(text[:start] + "\n" + block + "\n" + text[end:], encoding="utf-8")
    print(block)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
