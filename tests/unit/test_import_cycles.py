"""No import circle anywhere in the tree and no import that climbs the house's floors (issues
26, 47), read from the source with ``ast`` (``bench/import_cycles.py``): function-level
imports count, a circle they defer is still one."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("import_cycles", ROOT / "bench" / "import_cycles.py")
ic = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ic)


def test_no_import_circle_in_probing() -> None:
    assert ic.cycles(ic.graph("probing", ROOT)) == []


def test_no_import_circle_in_the_whole_tree() -> None:
    """``probing``, ``ui``, the page scripts and ``app.py`` together (``ui`` once had two)."""
    g = ic.whole_tree(ROOT)
    assert any(m.startswith("ui.") for m in g) and "app" in g
    assert ic.cycles(g) == []


def test_no_import_climbs_a_floor() -> None:
    """The library's sub-packages import only their own floor or lower ones (an upload's
    probe run once sat in ``datasets/``, which made ``datasets`` import ``probes``)."""
    assert ic.climbing(ic.whole_tree(ROOT)) == []


def test_the_floor_check_finds_a_climbing_import() -> None:
    g = {"probing.datasets.upload": {"probing.probes.run"}, "probing.probes.run": set()}
    assert ic.climbing(g) == ["probing.datasets.upload -> probing.probes.run"]
    assert ic.climbing({"probing.probes.run": {"probing.datasets.ud"}}) == []
    assert ic.climbing({"probing.encoders.bert": {"ui.state"}}) == [
        "probing.encoders.bert -> ui.state"
    ]


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
