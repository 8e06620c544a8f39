"""Write the generated probe-attribution block of docs/attribution.md from the committed
study (issue 44): the comparison engine's tables and the sentences made from them, between
``<!-- generated:probe-attribution:begin -->`` and ``…:end -->``.

    PYTHONPATH=. python results/attribution/probe_findings.py            # print the block
    PYTHONPATH=. python results/attribution/probe_findings.py --write    # replace it in the doc
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from probing.attribution.probe_findings import markdown_block, replace_block

HERE = Path(__file__).resolve().parent
STUDY = HERE / "probe" / "probe_faithfulness.json"
DOC = HERE.parents[1] / "docs" / "attribution.md"


def main(argv: list[str]) -> int:
    block = markdown_block(json.loads(STUDY.read_text(encoding="utf-8")))
    if "--write" not in argv:
        print(block)
        return 0
    DOC.write_text(replace_block(DOC.read_text(encoding="utf-8"), block), encoding="utf-8")
    print(f"wrote the probe-attribution block of {DOC}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
