"""Re-made results against the committed ones, number for number (issue 26: the refactor
must leave every output as it was).

    python results/compare_remade.py REMADE_DIR [REFERENCE_DIR]   # default reference: results/

For every ``*.json`` run in REMADE_DIR that REFERENCE_DIR also has: the JSON documents are
compared value by value (exact equality, NaN = NaN, key order ignored) except the parts a
re-run cannot repeat: ``meta.timing_s`` (seconds) and ``meta.command`` (it names the output
folder; shown when it differs). Also compared byte for byte when both have them: the CSV
table, the saved probes (``probes/<stem>.json`` / ``.safetensors``) and the per-sentence
counts (``sentence-scores/<stem>.safetensors``). Exit status 1 on any difference.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Iterator
from pathlib import Path

IGNORED = {("meta", "timing_s"), ("meta", "command")}


def differences(a: object, b: object, path: tuple = ()) -> list[str]:
    """Where two JSON values differ (``path: a != b``), ignoring :data:`IGNORED`."""
    if path in IGNORED:
        return []
    if isinstance(a, dict) and isinstance(b, dict):
        out = [f"{'.'.join(map(str, path + (k,)))}: only in one" for k in set(a) ^ set(b)]
        for k in sorted(set(a) & set(b), key=str):
            out += differences(a[k], b[k], path + (k,))
        return out
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return [f"{'.'.join(map(str, path))}: {len(a)} vs {len(b)} items"]
        return [
            d
            for i, (x, y) in enumerate(zip(a, b, strict=True))
            for d in differences(x, y, path + (i,))
        ]
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return []
    if a != b or type(a) is not type(b):
        return [f"{'.'.join(map(str, path))}: {a!r} vs {b!r}"]
    return []


def compare_run(stem: str, remade: Path, reference: Path) -> tuple[list[str], list[str]]:
    """(differences, notes) of one run's files."""
    a = json.loads((remade / f"{stem}.json").read_text(encoding="utf-8"))
    b = json.loads((reference / f"{stem}.json").read_text(encoding="utf-8"))
    diffs = differences(a, b)
    notes = []
    ca, cb = (d.get("meta", {}).get("command") for d in (a, b))
    if ca != cb:
        notes.append(f"command: {ca!r}\n      vs  {cb!r}")
    for rel in (
        f"{stem}.csv",
        f"probes/{stem}.json",
        f"probes/{stem}.safetensors",
        f"sentence-scores/{stem}.safetensors",
    ):
        fa, fb = remade / rel, reference / rel
        if fa.is_file() and fb.is_file():
            if fa.read_bytes() != fb.read_bytes():
                if rel.startswith("probes/") and rel.endswith(".json"):
                    # the saved probes' JSON records the command, like the results' meta
                    ja, jb = (json.loads(f.read_text(encoding="utf-8")) for f in (fa, fb))
                    ja.get("info", ja).pop("command", None)
                    jb.get("info", jb).pop("command", None)
                    if ja == jb:
                        notes.append(f"{rel}: equal but for the command")
                        continue
                diffs.append(f"{rel}: bytes differ")
            else:
                notes.append(f"{rel}: identical bytes")
    return diffs, notes


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__)
        return 2
    remade = Path(argv[0])
    reference = Path(argv[1]) if len(argv) > 1 else Path(__file__).resolve().parent
    failed = compared = 0
    for path in sorted(remade.glob("*.json")):
        stem = path.stem
        if not (reference / f"{stem}.json").is_file():
            continue
        compared += 1
        diffs, notes = compare_run(stem, remade, reference)
        n_numbers = sum(1 for _ in _leaves(json.loads(path.read_text(encoding="utf-8"))))
        print(f"{'DIFFERENT' if diffs else 'equal    '} {stem} ({n_numbers:,} JSON values)")
        for d in diffs[:20]:
            print(f"    {d}")
        if len(diffs) > 20:
            print(f"    … {len(diffs) - 20} more")
        for n in notes:
            print(f"    {n}")
        failed += bool(diffs)
    print(f"{compared} runs compared, {failed} with differences")
    return 1 if failed or not compared else 0


def _leaves(x: object) -> Iterator[object]:
    if isinstance(x, dict):
        for v in x.values():
            yield from _leaves(v)
    elif isinstance(x, list):
        for v in x:
            yield from _leaves(v)
    else:
        yield x


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
