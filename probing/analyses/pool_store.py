"""Neighbour pools on disk: a SemCor pool is encoded once per model and data, not once per
server start (the first open of Static vs Contextual took ~58 s building it).

An entry is ``<cache_dir>/neighbour-pools/<key>.safetensors`` (the unit-length vectors as
float16: cosines move by < 1e-3) beside ``<key>.json`` (words, contexts, senses, glosses).
The key hashes the model's fingerprint, the data files' fingerprint, the pooling and the
pool size, so a changed model or data set is a new entry. Safetensors + JSON only, never
pickle.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from probing import config
from probing.analyses.contextual import unit_rows
from probing.io import atomic_write, atomic_write_json, cache_writes

if TYPE_CHECKING:
    from probing.encoders.base import Encoder

FORMAT = 1


def pool_dir() -> Path:
    """Root of the stored pools: ``config.cache_dir()/neighbour-pools``."""
    return config.cache_dir() / "neighbour-pools"


def pool_key(encoder: Encoder, dataset: str, split: str, pooling: str, size: int) -> str:
    """Hex SHA-256 naming a pool of ``encoder`` over ``dataset``/``split``."""
    from probing.features import dataset_fingerprint, model_fingerprint

    dtype = getattr(encoder, "dtype", "float32")
    spec = {
        "format": FORMAT,
        "model": model_fingerprint(encoder),
        "dtype": str(dtype),
        "dataset": dataset,
        "split": split,
        "data": dataset_fingerprint(dataset, split),
        "pooling": pooling,
        "size": size,
    }
    return hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()


def has_pool(key: str) -> bool:
    """Whether a pool is stored under ``key`` (its JSON is written last: see :func:`save_pool`)."""
    stem = pool_dir() / key
    return stem.with_suffix(".json").is_file() and stem.with_suffix(".safetensors").is_file()


def load_pool(key: str) -> tuple[dict, np.ndarray, np.ndarray] | None:
    """(fields, layers, static) of a stored pool, or None when absent or unreadable (then it
    is simply built again)."""
    from safetensors.numpy import load_file

    stem = pool_dir() / key
    try:
        fields = json.loads(stem.with_suffix(".json").read_text(encoding="utf-8"))
        arrays = load_file(str(stem.with_suffix(".safetensors")))
        layers, static = arrays["layers"], arrays["static"]
    except (OSError, ValueError, KeyError):
        return None
    if fields.get("format") != FORMAT or len(fields.get("words", ())) != static.shape[0]:
        return None
    # float16 on disk: back to float32 rows of unit length
    return fields, unit_rows(layers.astype(np.float32)), unit_rows(static.astype(np.float32))


def save_pool(key: str, fields: dict, layers: np.ndarray, static: np.ndarray) -> None:
    """Store a pool; the vectors first, the JSON last (a pool without its JSON is absent).

    Raises:
        DiskFullError, CacheNotWritableError: the cache folder is full or read-only.
    """
    from safetensors.numpy import save_file

    stem = pool_dir() / key
    # C order: safetensors writes the buffer as it lies (a transposed view came back scrambled)
    arrays = {
        "layers": np.ascontiguousarray(layers, dtype=np.float16),
        "static": np.ascontiguousarray(static, dtype=np.float16),
    }
    with cache_writes("the neighbour pool"):
        stem.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(
            stem.with_suffix(".safetensors"),
            lambda tmp: save_file(arrays, str(tmp)),
            suffix=".safetensors",
        )
        atomic_write_json(stem.with_suffix(".json"), {"format": FORMAT, **fields}, indent=None)
