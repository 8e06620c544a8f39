"""A re-run of the claims on the committed per-item data reproduces results/claims.json and
docs/results.md byte for byte (issue 40: "a re-run of every results script reproduces its
committed file")."""

from __future__ import annotations

import importlib.util
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_claims_and_results_page_equal_a_rerun(capsys) -> None:
    spec = importlib.util.spec_from_file_location(
        "write_results", REPO / "results" / "write_results.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.main(["--check"]) == 0, capsys.readouterr()
    assert "up to date" in capsys.readouterr().out
