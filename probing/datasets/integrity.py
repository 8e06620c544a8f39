"""Data files checked against the checksum manifest (:mod:`probing.datasets.manifest`).

A data file cut short or edited by hand would otherwise be read silently and give other
numbers. Sizes are compared on every read (a ``stat``); each file's SHA-256 once per process
and file version (the same memoised hash the feature cache's key uses). Files the manifest
does not list (e.g. a locally added data set) are not checked.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from probing.datasets.manifest import MANIFEST
from probing.datasets.registry import get_dataset, resolve_data_dir
from probing.errors import CorruptDataError


def _expected(name: str, path: Path, folder: Path) -> tuple[str, tuple[str, int]] | None:
    try:
        rel = path.resolve().relative_to(folder.resolve()).as_posix()
    except ValueError:  # not under the data set's folder (a reader's source file)
        return None
    want = MANIFEST.get(name, {}).get(rel)
    return None if want is None else (rel, want)


def problems(name: str, data_dir: str | Path | None = None, full: bool = False) -> list[str]:
    """What is wrong with data set ``name``'s files (empty when nothing): a missing file or a
    size that differs from the manifest; with ``full`` also a SHA-256 that differs."""
    folder = resolve_data_dir(data_dir) / get_dataset(name).folder
    out = []
    for rel, (sha, size) in sorted(MANIFEST.get(name, {}).items()):
        path = folder / rel
        try:
            actual = path.stat().st_size
        except OSError:
            continue  # missing files are reported by dataset_path's own check
        if actual != size:
            out.append(f"{rel} is {actual:,} bytes, expected {size:,} (truncated or changed)")
        elif full and _sha256(path) != sha:
            out.append(f"{rel} does not match its checksum (changed)")
    return out


def verify_files(name: str, paths: Iterable[Path], data_dir: str | Path | None = None) -> None:
    """Check ``paths`` of data set ``name`` against the manifest (size, then SHA-256).

    Raises:
        CorruptDataError: naming the first bad file and how to get a good copy.
    """
    folder = resolve_data_dir(data_dir) / get_dataset(name).folder
    for path in paths:
        found = _expected(name, Path(path), folder)
        if found is None:
            continue
        rel, (sha, size) = found
        try:
            actual = Path(path).stat().st_size
        except OSError:
            continue  # a missing file is the reader's DatasetNotFoundError
        if actual != size:
            raise CorruptDataError(_message(name, rel, f"is {actual:,} bytes, expected {size:,}"))
        if _sha256(Path(path)) != sha:
            raise CorruptDataError(_message(name, rel, "does not match its checksum"))


def _message(name: str, rel: str, what: str) -> str:
    return (
        f"Data set {name}: file {rel} {what}; it is truncated or was changed. Get a good copy "
        f"with: python -m probing data download {name} --force (or restore it from your source)."
    )


def _sha256(path: Path) -> str:
    from probing.io import file_sha256  # memoised per (path, size, mtime)

    return file_sha256(path)
