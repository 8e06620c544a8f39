"""A sweep folder on disk: one JSON file per finished cell, each written atomically.

Layout of ``out/``::

    spec.json            the validated spec the sweep ran with
    cells/<cell id>.json one per finished (model, task, dataset, seed, layer) cell
    extract/<job id>.json timing of each extraction (features live in the feature cache)
    results.csv, results.json, timing.csv, figures/<model>.html   (see probing.sweep.merge)

A cell file is written to a temporary name in the same folder and renamed into place
(``os.replace`` is atomic on POSIX), so a cell file either is complete or does not exist:
a crash or Ctrl-C loses at most the cells being fitted, and nothing half-written is ever
taken for a finished cell. Temporary files (``.tmp-*``) are never read and are swept away
at the next run.

For tests, ``CONTEXTLENS_SWEEP_CRASH_AFTER=N`` makes the store die in the middle of writing
its (N+1)-th cell: the temporary file is half written, then :class:`InjectedCrash` is raised.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from probing.io import atomic_write_json

CRASH_ENV = "CONTEXTLENS_SWEEP_CRASH_AFTER"
TMP_PREFIX = ".tmp-"  # temporary files; never read, swept by prepare()


class InjectedCrash(RuntimeError):
    """The crash ``CONTEXTLENS_SWEEP_CRASH_AFTER`` asked for (tests only)."""


class SweepStore:
    """The files of one sweep folder."""

    def __init__(self, out: str | os.PathLike[str]) -> None:
        self.out = Path(out)
        self.cells_dir = self.out / "cells"
        self.extract_dir = self.out / "extract"
        self._written = 0
        crash = os.environ.get(CRASH_ENV, "")
        self._crash_after = int(crash) if crash.strip() else None

    def prepare(self, spec: dict) -> None:
        """Create the folders, record the spec, sweep away temporary files of a dead run."""
        for d in (self.cells_dir, self.extract_dir):
            d.mkdir(parents=True, exist_ok=True)
            for tmp in d.glob(TMP_PREFIX + "*"):
                tmp.unlink(missing_ok=True)
        write_json_atomic(self.out / "spec.json", spec)

    def done(self) -> set[str]:
        """Ids of the finished cells (complete files only: temporaries are not cells)."""
        if not self.cells_dir.is_dir():
            return set()
        return {p.stem for p in self.cells_dir.glob("*.json") if not p.name.startswith(".")}

    def write_cell(self, cell_id: str, record: dict) -> Path:
        """Store one finished cell atomically."""
        path = self.cells_dir / f"{cell_id}.json"
        if self._crash_after is not None and self._written >= self._crash_after:
            _half_write(path, record)
            raise InjectedCrash(f"{CRASH_ENV}={self._crash_after}: died writing {path.name}")
        write_json_atomic(path, record)
        self._written += 1
        return path

    def write_extraction(self, job_id: str, record: dict) -> None:
        write_json_atomic(self.extract_dir / f"{job_id}.json", record)

    def cells(self) -> list[dict]:
        """Every finished cell's record, in file-name order."""
        return [_read(self.cells_dir / f"{c}.json") for c in sorted(self.done())]

    def extractions(self) -> list[dict]:
        if not self.extract_dir.is_dir():
            return []
        return [_read(p) for p in sorted(self.extract_dir.glob("*.json"))]


def write_json_atomic(path: Path, obj: dict) -> None:
    """Write JSON beside ``path`` as ``.tmp-*``, flush it to disk, rename it over ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    # Durable: another node may read the cell as done right after the rename.
    atomic_write_json(path, obj, indent=1, prefix=TMP_PREFIX, suffix=".json", durable=True)


def _half_write(path: Path, obj: dict) -> None:
    text = json.dumps(obj, indent=1)
    fd, _tmp = tempfile.mkstemp(dir=path.parent, prefix=TMP_PREFIX, suffix=".json")
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text[: len(text) // 2])


def _read(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))
