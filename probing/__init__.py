"""ContextLens library: encoders, data sets, probes and analyses. Never imports Streamlit."""

from __future__ import annotations

from probing.encoding import Encoding, ModelInfo
from probing.errors import (
    ContextLensError,
    DatasetNotFoundError,
    InputTooLongError,
    ModelUnavailableError,
    UnknownModelError,
)

__all__ = [
    "ContextLensError",
    "DatasetNotFoundError",
    "Encoding",
    "InputTooLongError",
    "ModelInfo",
    "ModelUnavailableError",
    "UnknownModelError",
    "available_models",
    "load_encoder",
]


def load_encoder(name_or_path: str, device: str | None = None, dtype: str = "float32"):
    """Load an encoder by registry name, hub id or local folder (cached per process).

    ``device``: None or ``"auto"`` = CUDA when present, else CPU. ``dtype``: ``float32``,
    ``bfloat16`` (autocast) or ``auto`` (bf16 on CUDA and CPUs with AVX512-BF16/AMX), as
    :func:`probing.models.registry.load_encoder`.
    """
    from probing.models.registry import load_encoder as _load

    return _load(name_or_path, device=device, dtype=dtype)


def available_models() -> list[str]:
    """Registry names, embedded defaults first."""
    from probing.models.registry import available_models as _available

    return _available()
