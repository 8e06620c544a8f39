"""No import circle in ``probing/`` (issue 26), read from the source with ``ast``
(``bench/import_cycles.py``): function-level imports count, a circle they defer is still one."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("import_cycles", ROOT / "bench" / "import_cycles.py")
ic = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ic)


def test_no_import_circle_in_probing() -> None:
    assert ic.cycles(ic.graph("probing", ROOT)) == []


def test_probes_never_import_analyses() -> None:
    assert ic.edges_into(ic.graph("probing", ROOT), "probing.probes", "probing.analyses") == []


def test_the_checker_finds_a_circle(tmp_path: Path) -> None:
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("def f():\n    from pkg.b import g\n")
    (pkg / "b.py").write_text("from pkg import a\n")
    (pkg / "c.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg import a\n"
    )
    assert ic.cycles(ic.graph("pkg", tmp_path)) == [["pkg.a", "pkg.b"]]
