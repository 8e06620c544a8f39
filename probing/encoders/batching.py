"""Batching by piece count, shared by every encoder's ``encode()`` and the feature path.

A padded forward pass costs what its longest input costs, times the batch size. Sorting
sentences by their number of model pieces (not words: a word may be several pieces) and
filling each batch up to a budget of padded positions keeps padding near zero and the
matrix products large. Callers put results back in input order.

Also here: the compute dtype (``float32`` or ``bfloat16`` autocast) and device choice,
since both are decided once per encoder and used by every forward pass.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from probing.errors import InvalidArgumentError

if TYPE_CHECKING:  # torch is imported where a device or autocast is asked for
    import torch

DEFAULT_BATCH_SIZE = 64  # sentences per forward pass, at most
DEFAULT_MAX_TOKENS = 512  # padded positions (rows x longest row) per pass; more only pads more
DTYPES = ("float32", "bfloat16", "auto")


def check_batch_args(batch_size: int, max_tokens: int | None = None) -> None:
    """Raise InvalidArgumentError unless ``batch_size`` ≥ 1 and ``max_tokens`` is None or ≥ 1."""
    if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)):
        raise InvalidArgumentError(
            f"batch_size must be at least 1 (a whole number), not {batch_size!r}."
        )
    if batch_size < 1:
        raise InvalidArgumentError(f"batch_size must be at least 1, not {batch_size}.")
    if max_tokens is not None and (
        isinstance(max_tokens, bool)
        or not isinstance(max_tokens, (int, np.integer))
        or max_tokens < 1
    ):
        raise InvalidArgumentError(f"max_tokens must be None or at least 1, not {max_tokens!r}.")


def plan_batches(
    counts: Sequence[int],
    batch_size: int = DEFAULT_BATCH_SIZE,
    max_tokens: int | None = DEFAULT_MAX_TOKENS,
) -> list[np.ndarray]:
    """Group item indices into batches, longest first, each within the budgets.

    Args:
        counts: (n,) pieces per item (special tokens included).
        batch_size: most items per batch.
        max_tokens: most padded positions per batch (items x the batch's longest item);
            an item longer than this on its own still gets a batch (of one).

    Returns:
        Index arrays (int64) covering 0..n-1 once each; within a batch, longest first.
        Ties keep input order, so the plan is deterministic.
    """
    check_batch_args(batch_size, max_tokens)
    counts = np.asarray(counts, dtype=np.int64)
    order = np.argsort(-counts, kind="stable")
    batches: list[np.ndarray] = []
    start, n = 0, len(order)
    while start < n:
        longest = max(int(counts[order[start]]), 1)
        rows = batch_size if max_tokens is None else max(1, min(batch_size, max_tokens // longest))
        batches.append(order[start : start + rows])
        start += rows
    return batches


def padded_positions(counts: Sequence[int], batches: Sequence[np.ndarray]) -> int:
    """Positions computed by a plan (rows x longest row, summed): the padding overhead is
    this divided by ``sum(counts)``."""
    counts = np.asarray(counts, dtype=np.int64)
    return int(sum(len(b) * int(counts[b].max()) for b in batches if len(b)))


# -- compute dtype and device ---------------------------------------------------------------


@functools.lru_cache(maxsize=1)
def cpu_has_fast_bf16() -> bool:
    """True when this CPU multiplies bf16 natively (AVX512-BF16 or AMX-BF16).

    torch reports its dispatch level (``AVX512`` …) but not the bf16 extensions, so the
    kernel's flags (Linux ``/proc/cpuinfo``) decide; elsewhere we assume no.
    """
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("flags"):
                    flags = set(line.split(":", 1)[1].split())
                    return bool({"avx512_bf16", "amx_bf16"} & flags)
    except OSError:
        pass
    return False


def resolve_device(device: str | None = None) -> torch.device:
    """``None`` or ``"auto"``: CUDA when present, else CPU; anything else as given."""
    import torch

    if device is None or str(device) == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(device)


def resolve_dtype(dtype: str, device_type: str = "cpu") -> str:
    """``float32`` or ``bfloat16``: ``auto`` is bf16 on CUDA and on CPUs with fast bf16.

    Raises:
        InvalidArgumentError: a dtype other than float32, bfloat16 or auto.
    """
    name = {"fp32": "float32", "bf16": "bfloat16"}.get(str(dtype), str(dtype))
    if name not in DTYPES:
        raise InvalidArgumentError(f"dtype must be one of {', '.join(DTYPES)}; got {dtype!r}.")
    if name == "auto":
        return "bfloat16" if device_type == "cuda" or cpu_has_fast_bf16() else "float32"
    return name


def autocast(dtype: str, device_type: str) -> contextlib.AbstractContextManager[None]:
    """bf16 autocast for ``dtype == "bfloat16"`` (matmuls in bf16, sums and norms in
    fp32); a no-op context for float32."""
    if dtype != "bfloat16":
        return contextlib.nullcontext()
    import torch

    return torch.autocast(device_type=device_type, dtype=torch.bfloat16)
