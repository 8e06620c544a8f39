"""Import circles among the modules of a package, from the source (``ast``), nothing imported.

    python bench/import_cycles.py [package]   # default: the whole tree, and its floors

Every ``import`` / ``from … import`` counts, at module level or inside a function (a
function-level import is still a dependency: it only defers the circle), except those under
``if TYPE_CHECKING:``. ``from pkg import name`` counts as an edge to ``pkg.name`` when that is
a module, else to ``pkg``. Prints each strongly connected component of more than one module
(exit status 1 when there is one). ``tests/unit/test_import_cycles.py`` runs it on the whole
tree (:func:`whole_tree`) and checks that no import climbs the house's floors (:data:`FLOORS`).
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def modules(package: str, root: Path = ROOT) -> dict[str, Path]:
    """Dotted module name -> file, for every ``.py`` under ``root/package``."""
    out = {}
    for path in sorted((root / package).rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _type_checking_lines(tree: ast.AST) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            for child in node.body:
                lines.update(range(child.lineno, (child.end_lineno or child.lineno) + 1))
    return lines


def imports_of(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The modules of ``known`` that module ``name`` imports."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = _type_checking_lines(tree)
    is_pkg = path.name == "__init__.py"
    out: set[str] = set()
    for node in ast.walk(tree):
        if getattr(node, "lineno", None) in skip:
            continue
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                pkg = name.split(".") if is_pkg else name.split(".")[:-1]
                pkg = pkg[: len(pkg) - (node.level - 1)]
                base = ".".join(pkg + ([base] if base else []))
            targets = [
                f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names
            ]
        else:
            continue
        for t in targets:
            while t and t not in known:  # import a.b.c of a package: the deepest module known
                t = t.rpartition(".")[0]
            if t and t != name:
                out.add(t)
    return out


def graph(package: str = "probing", root: Path = ROOT) -> dict[str, set[str]]:
    known = modules(package, root)
    return {m: imports_of(m, p, known) for m, p in known.items()}


def cycles(g: dict[str, set[str]], ignore_packages: bool = True) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan). With
    ``ignore_packages``, edges into a package's ``__init__`` from its own submodules are
    dropped (a package re-exporting its modules lazily is not a circle of code)."""
    if ignore_packages:
        g = {m: {t for t in ts if not m.startswith(t + ".")} for m, ts in g.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    sys.setrecursionlimit(10_000)

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in g.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(g):
        if v not in index:
            visit(v)
    return out


def edges_into(g: dict[str, set[str]], source_prefix: str, target_prefix: str) -> list[str]:
    """``a -> b`` for every import of a ``target_prefix`` module by a ``source_prefix`` one."""
    return sorted(
        f"{m} -> {t}"
        for m, ts in g.items()
        if m.startswith(source_prefix)
        for t in ts
        if t.startswith(target_prefix)
    )


# The house's floors, lowest first (docs/architecture.md): a module may import from its own
# floor or below, never above. ``probing`` is split by sub-package (or top-level module);
# ``ui``, ``pages`` and ``app`` sit on top of the whole library.
FLOORS: tuple[tuple[str, ...], ...] = (
    (
        "probing.errors",
        "probing.config",
        "probing.budget",
        "probing.user_paths",
        "probing.redact",
        "probing.params",
    ),
    ("probing.io", "probing.cache", "probing.feature_cache", "probing.shipped", "probing.heap"),
    ("probing.encoding", "probing.encoders"),
    ("probing.models", "probing.datasets"),
    ("probing.features",),
    ("probing.probes",),
    (
        "probing.analyses",
        "probing.interventions",
        "probing.training",
        "probing.attribution",
        "probing.minimal_pairs",
    ),
    ("probing.claims",),
    ("probing.figures",),
    ("probing.sweep",),
    ("probing.report",),
    ("probing.cli", "probing.__main__", "probing"),
    ("ui",),
    ("pages", "app"),
)


def floor_of(module: str) -> int:
    """The floor of ``module``: that of the longest :data:`FLOORS` name it is or lies under."""
    best, floor = -1, -1
    for i, names in enumerate(FLOORS):
        for n in names:
            # "probing" itself is its package's __init__, not a catch-all for new sub-packages
            under = module.startswith(n + ".") and n != "probing"
            if (module == n or under) and len(n) > best:
                best, floor = len(n), i
    if floor < 0:
        raise KeyError(f"{module} is on no floor: add its package to FLOORS")
    return floor


def whole_tree(root: Path = ROOT) -> dict[str, set[str]]:
    """The import graph of the library, the UI, the page scripts and ``app.py`` together."""
    known = modules("probing", root) | modules("ui", root) | modules("pages", root)
    known["app"] = root / "app.py"
    return {m: imports_of(m, p, known) for m, p in known.items()}


def climbing(g: dict[str, set[str]]) -> list[str]:
    """``a -> b`` for every import of a module on a higher floor than the importer's."""
    return sorted(f"{m} -> {t}" for m, ts in g.items() for t in ts if floor_of(t) > floor_of(m))


def main(argv: list[str]) -> int:
    g = graph(argv[0]) if argv else whole_tree()
    found = cycles(g)
    for comp in found:
        inner = [f"{m} -> {t}" for m in comp for t in sorted(g[m]) if t in comp]
        print(f"circle of {len(comp)} modules:\n  " + "\n  ".join(inner))
    up = [] if argv else climbing(g)
    for edge in up:
        print(f"climbs a floor: {edge}")
    print(
        f"{len(g)} modules, {sum(map(len, g.values()))} imports, {len(found)} circles"
        + ("" if argv else f", {len(up)} imports that climb")
    )
    return 1 if found or up else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
