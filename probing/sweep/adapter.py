"""The sweep's only contact with the rest of the library: extraction and one probe fit.

Workers call these two functions. They go through the feature cache
(:func:`probing.features.extract_features` / :func:`~probing.features.load_features`) and the
probe API (:func:`probing.probes.run.probe_features`), so when either changes its
signature only this file changes.
"""

from __future__ import annotations

import os
import socket
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from probing.features import Features
    from probing.probes.results import ProbeResults

# What every worker process runs with: one BLAS/OpenMP thread (a worker per core, not a
# worker per core times threads) and passive OpenMP waiting, without which two torch
# processes on the same cores slow each other down ~50x.
WORKER_ENV = {
    "OMP_WAIT_POLICY": "PASSIVE",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
    "TOKENIZERS_PARALLELISM": "false",
}


def pin_threads() -> None:
    """One compute thread in this process (torch intra-op and every BLAS threadpoolctl sees)."""
    for k, v in WORKER_ENV.items():
        os.environ.setdefault(k, v)
    from threadpoolctl import threadpool_limits

    threadpool_limits(1)
    import torch

    if torch.get_num_threads() != 1:
        torch.set_num_threads(1)


def _set_dirs(cache_dir: str, data_dir: str) -> None:
    # Passed with every task rather than inherited, so a Ray node far from the driver reads
    # the same (shared) folders the driver was told about.
    os.environ["CONTEXTLENS_CACHE_DIR"] = cache_dir
    os.environ["CONTEXTLENS_DATA_DIR"] = data_dir


def extract(job: dict, cache_dir: str, data_dir: str, device: str | None = None) -> dict:
    """Extract (or find cached) the features of one split; a worker task.

    Args:
        job: :class:`~probing.sweep.grid.ExtractJob` fields.
        cache_dir, data_dir: the feature cache and data folders (as seen by every node).
        device: ``cuda`` on a GPU worker, else None (CPU).

    Returns:
        ``{"folder", "key", "sample", "layer_ids", "layer_names", "n_words", "n_sentences",
        "seconds", "cpu_s", "worker", "cached"}``.
    """
    pin_threads()
    _set_dirs(cache_dir, data_dir)
    from probing.features import extract_features, load_features
    from probing.models.registry import load_encoder

    t0, c0 = time.perf_counter(), time.process_time()
    encoder = load_encoder(job["model"], device=device, dtype=job["dtype"])
    encoded = []  # any (done, total) call before the end means the split was encoded now
    feats = extract_features(
        encoder,
        job["dataset"],
        job["split"],
        layers=job["layers"],
        pooling=job["pooling"],
        max_sentences=job["max_sentences"],
        progress=lambda d, t: encoded.append(d < t),
    )
    # A capped split may be a seeded sample viewed from a cached whole split; the fitting
    # workers then rebuild the same view from the entry (see open_split).
    whole = load_features(feats.path, feats.key)
    sample = job["max_sentences"] if len(whole.sent_ids) != len(feats.sent_ids) else None
    return {
        "folder": str(feats.path),
        "key": feats.key,
        "sample": sample,
        "layer_ids": list(feats.layer_ids),
        "layer_names": list(encoder.info.layer_names),
        "n_words": feats.n_words_total,
        "n_sentences": len(feats.sent_ids),
        "seconds": round(time.perf_counter() - t0, 3),
        "cpu_s": round(time.process_time() - c0, 3),  # < seconds: the worker waited for a core
        "worker": worker_name(),
        "cached": not any(encoded),
    }


def fit(cell: dict, cache_dir: str, data_dir: str) -> dict:
    """Fit one (task, seed, layer) cell on cached features; a worker task.

    Args:
        cell: :class:`~probing.sweep.grid.Cell` fields (``features``: (split, folder, key,
            sample)).

    Returns:
        ``{"results": ProbeResults.to_dict(), "timing": {"load_s", "fit_s", "cpu_s", "worker"}}``.
    """
    import json

    pin_threads()
    _set_dirs(cache_dir, data_dir)
    from probing.probes import run as probe_run
    from probing.probes.settings import ProbeSettings
    from probing.probes.tasks import get_task

    t0, c0 = time.perf_counter(), time.process_time()
    task = get_task(cell["task"])
    label = task.field_for(cell["dataset"])
    feats = {}
    for split, folder, key, sample in cell["features"]:
        feats[split] = open_split(folder, key, sample, int(cell["layer"])).with_label(label)
    t1 = time.perf_counter()
    training = json.loads(cell["settings"])
    settings = ProbeSettings(
        model=cell["model"],
        task=task.name,
        dataset=cell["dataset"],
        seed=int(cell["seed"]),
        max_train_words=training["max_train_words"],
        cs=tuple(training["Cs"]),
        n_boot=training["n_boot"],
        scalar_mix=False,
        control=training["control"],
    )
    results = probe_run.probe_features(
        feats, settings, model=cell["model"], dataset=cell["dataset"]
    )
    results.meta.update(
        {
            "label_field": label,
            "pooling": training["pooling"],
            "max_train_sentences": training["max_train_sentences"],
        }
    )
    t2 = time.perf_counter()
    return {
        "results": results.to_dict(),
        "timing": {
            "load_s": round(t1 - t0, 3),
            "fit_s": round(t2 - t1, 3),
            "cpu_s": round(time.process_time() - c0, 3),
            "worker": worker_name(),
        },
    }


def open_split(folder: str, key: str, sample: int | None, layer: int) -> Features:
    """One layer of an extracted split: the cache entry, or its seeded ``sample`` of sentences
    (exactly the view :func:`~probing.features.extract_features` returned)."""
    from probing import features

    entry = features.load_features(Path(folder), key)
    if sample is not None:
        entry = features._sample_view(entry, features._sample(len(entry.sent_ids), sample))
    return features._view_layers(entry, (layer,))


def worker_name() -> str:
    """``host:pid`` of this process, for the timing log."""
    return f"{socket.gethostname()}:{os.getpid()}"


def probe_results(
    model: str, task: str, dataset: str, rows: list[dict], meta: dict
) -> ProbeResults:
    """A :class:`~probing.probes.run.ProbeResults` from merged cell rows (tidy records)."""
    import numpy as np

    from probing.probes import results as stored
    from probing.probes.metrics import centre_of_gravity
    from probing.probes.tasks import get_task

    table = stored.typed_table([{c: r.get(c) for c in stored.COLUMNS} for r in rows])
    metric = get_task(task).metric
    per_layer = table[table["layer"].notna() & (table["metric"] == metric)].sort_values("layer")
    cog = (
        centre_of_gravity(per_layer["value"].to_numpy(), per_layer["layer"].to_numpy(dtype=float))
        if len(per_layer)
        else float(np.nan)
    )
    return stored.ProbeResults(
        model=model,
        task=task,
        dataset=dataset,
        table=table,
        scalar_mix=None,
        centre_of_gravity=cog,
        meta=meta,
    )
