"""The generated probe-attribution block of docs/attribution.md (issue 44): it is what the
committed study renders to, and only the text between its markers is ever replaced."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from probing.attribution.probe_findings import markdown_block, markers, replace_block
from probing.errors import InvalidArgumentError

REPO = Path(__file__).resolve().parents[2]
STUDY = REPO / "results" / "attribution" / "probe" / "probe_faithfulness.json"
DOC = REPO / "docs" / "attribution.md"


def test_the_docs_block_is_the_committed_study_rendered():
    result = json.loads(STUDY.read_text(encoding="utf-8"))
    begin, end = markers()
    doc = DOC.read_text(encoding="utf-8")
    inside = doc[doc.index(begin) + len(begin) : doc.index(end)].strip()
    assert inside == markdown_block(result).strip()
    # Every comparison row of the engine is in it, with its call.
    for table in result["comparisons"].values():
        for d in table["rows"]:
            row = f"| {d['a']} − {d['b']} |"
            line = next(x for x in inside.splitlines() if x.startswith(row))
            assert line.endswith("| yes |" if d["called"] else "| no |")
    for sentence in result["statements"].values():
        assert sentence in inside


def test_only_the_marked_block_is_replaced():
    begin, end = markers()
    text = f"prose before\n{begin}\nold\n{end}\nprose after\n"
    assert replace_block(text, "new") == f"prose before\n{begin}\nnew\n{end}\nprose after\n"
    with pytest.raises(InvalidArgumentError):
        replace_block("no markers here", "new")
    with pytest.raises(InvalidArgumentError):
        replace_block(f"{end}\n{begin}", "new")
