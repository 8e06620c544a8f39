"""Shipped results are read-only to the CLI: the Probing page shows them as they were made.

A README example run with ``--out results/`` once replaced the full-data WSD run with a
2,000-sentence one. Commands that write into the repository's ``results/`` folder now refuse
to replace an existing file there unless ``--overwrite`` is given.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable
from pathlib import Path

from probing import config
from probing.errors import ContextLensError

SHIPPED_DIR = config.results_dir()


class ShippedResultsError(ContextLensError):
    """A command that would replace a shipped result without ``--overwrite``."""


def add_overwrite_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--overwrite",
        action="store_true",
        help="allow replacing the shipped results in the repository's results/ folder",
    )


def is_shipped(path: Path) -> bool:
    """True for an existing file inside the repository's ``results/`` folder."""
    path = Path(path).resolve()
    return path.is_file() and path.is_relative_to(SHIPPED_DIR.resolve())


def refuse_shipped(paths: Iterable[Path], overwrite: bool) -> None:
    """Raise before any work when one of ``paths`` is a shipped result and not ``overwrite``.

    Raises:
        ShippedResultsError: names the files and the two ways on.
    """
    shipped = [Path(p) for p in paths if is_shipped(Path(p))]
    if shipped and not overwrite:
        names = ", ".join(
            f"results/{p.resolve().relative_to(SHIPPED_DIR.resolve())}" for p in shipped
        )
        raise ShippedResultsError(
            f"{names} would be replaced: these are shipped results (what the app shows). Write "
            "somewhere else with --out (e.g. --out /tmp/contextlens), or pass --overwrite to "
            "replace them."
        )
