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


def load_encoder(name_or_path: str, device: str | None = None):
    """Load an encoder by registry name, hub id or local folder (cached per process)."""
    from probing.models.registry import load_encoder as _load

    return _load(name_or_path, device=device)


def available_models() -> list[str]:
    """Registry names, embedded defaults first."""
    from probing.models.registry import available_models as _available

    return _available()
