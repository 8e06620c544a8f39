"""Print the erasure blocks of docs/results.md from committed erasure runs (issue 40): per
run, the table of both protocols, the fit-set curve and the sentences that
:mod:`probing.interventions.erasure_summary` makes from the numbers.

    PYTHONPATH=. python results/erasure_markdown.py results/interventions/*__erase-leace.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from probing.interventions.erasure_summary import has_heldout, markdown_block


def main(paths: list[str]) -> int:
    for path in paths:
        result = json.loads(Path(path).read_text(encoding="utf-8"))
        if not has_heldout(result):
            print(f"<!-- {Path(path).name}: in-sample protocol only; not re-made -->\n")
            continue
        meta = result["meta"]
        print(
            f"#### {meta['model']} · {meta['dataset']} · {result['spec']['task']} "
            f"({result['spec']['method'].upper()})\n"
        )
        print(f"Made by `{' '.join(result.get('argv', []))}`.\n")
        print(markdown_block(result) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
