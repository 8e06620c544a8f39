"""Where probe runs are found: those made from the app (kept under
``config.cache_dir()/probe_results/`` so that any session or server process finds them) and
the committed ones in :func:`probing.config.results_dir`.

A run made from the app is identified by its :class:`~probing.probes.settings.ProbeSettings`
(:meth:`~probing.probes.settings.ProbeSettings.stored_key`) plus the model's weight
fingerprint; its :class:`~probing.probes.results.ProbeResults` are stored as JSON, written
atomically because another session may be reading the same file. :func:`find_stored` is
what the Probing page asks.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from probing import config
from probing.io import atomic_write, cache_writes
from probing.probes.meta import RunMeta
from probing.probes.results import ProbeResults
from probing.probes.settings import ProbeSettings

if TYPE_CHECKING:
    from probing.encoders.base import Encoder

Reader = Callable[[Path], "ProbeResults | None"]


def output_stem(model: str, dataset: str, task: str) -> str:
    """``<model>__<dataset>__<task>`` with anything unsafe in a file name replaced."""
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", Path(model).name if "/" in model else model)
    return f"{safe}__{dataset}__{task}"


def stored_path(settings: ProbeSettings, fingerprint: str) -> Path:
    """Where the app keeps the run of ``settings`` on weights ``fingerprint`` once made
    (the same digest as every earlier version: runs stored before are found)."""
    spec = json.dumps({**settings.stored_key(), "weights": fingerprint}, sort_keys=True)
    digest = hashlib.sha256(spec.encode()).hexdigest()[:16]
    stem = output_stem(settings.model, settings.dataset_name, settings.task)
    return config.cache_dir() / "probe_results" / f"{stem}__{digest}.json"


def stored_path_of(settings: ProbeSettings, encoder: Encoder) -> Path:
    """:func:`stored_path` for the weights ``encoder`` holds."""
    from probing.features import model_fingerprint

    return stored_path(settings, model_fingerprint(encoder))


def committed_path(settings: ProbeSettings, results_dir: Path | None = None) -> Path:
    """The committed run of the model and task (``results/<stem>.json``)."""
    stem = output_stem(settings.model, settings.dataset_name, settings.task)
    return (results_dir or config.results_dir()) / f"{stem}.json"


def save_results(results: ProbeResults, path: Path) -> None:
    """Write atomically: another session may be reading the same file.

    Raises:
        DiskFullError, CacheNotWritableError: the folder (the cache's) is full or read-only.
    """
    with cache_writes("the probe results"):
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, results.to_json, suffix=".json")


def trains_like(meta: RunMeta, max_train_sentences: int | None) -> bool:
    """True when a cap of ``max_train_sentences`` trains on what the run in ``meta`` did:
    the same cap, or a cap at least as large as the whole split it used ("all")."""
    if meta.max_train_sentences == max_train_sentences:
        return True
    used = meta.n_train_sentences
    return (
        meta.max_train_sentences is None
        and used is not None
        and (max_train_sentences is None or max_train_sentences >= used)
    )


def matches(meta: RunMeta, settings: ProbeSettings, n_layers: int) -> bool:
    """A committed run made with what ``settings`` ask (the app's settings: layers, training
    cap, every dev/test sentence) on a model with ``n_layers`` layers above the input."""
    wanted = list(settings.layers or range(n_layers + 1))
    return (
        meta.layers == wanted
        and trains_like(meta, settings.max_train_sentences)
        and settings.max_dev_sentences is None
        and settings.max_test_sentences is None
    )


@dataclass(frozen=True)
class StoredRun:
    """A run found for some settings: ``made_in_app`` (else the committed one) and whether
    it was ``current`` (made with those settings)."""

    results: ProbeResults
    path: Path
    made_in_app: bool
    current: bool


def read_json(path: Path) -> ProbeResults | None:
    """The results in ``path``, None when there is no such file."""
    return ProbeResults.from_json(path) if path.is_file() else None


def find_stored(
    settings: ProbeSettings,
    encoder: Encoder,  # its fingerprint and layer count
    read: Reader = read_json,
    results_dir: Path | None = None,
) -> StoredRun | None:
    """The run to show for ``settings``: the app's own run of them, else the committed run
    of the model and task (``current`` when made with the same settings), else None.
    ``read``: how a file is read (the app passes its cached reader; None = unreadable)."""
    mine = stored_path_of(settings, encoder)
    if (res := read(mine)) is not None:
        return StoredRun(res, mine, made_in_app=True, current=True)
    committed = committed_path(settings, results_dir)
    if (res := read(committed)) is None:
        return None
    current = matches(res.meta, settings, int(encoder.info.n_contextual_layers))
    return StoredRun(res, committed, made_in_app=False, current=current)
