"""Process-wide settings read from the environment (the CLI flags set the same variables).

- ``CONTEXTLENS_DATA_DIR``: folder holding the data sets (default ``~/.cache/contextlens/data``).
- ``CONTEXTLENS_CACHE_DIR``: feature cache and downloaded models (default ``~/.cache/contextlens``).
- ``CONTEXTLENS_DEMO``: ``1`` turns on demo mode (registry models only, caps on input sizes).
"""

from __future__ import annotations

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
MODELS_DIR = REPO_ROOT / "models"


def cache_dir() -> Path:
    """Root of everything ContextLens writes: downloads, feature cache, results."""
    return Path(os.environ.get("CONTEXTLENS_CACHE_DIR", Path.home() / ".cache" / "contextlens"))


def data_dir() -> Path:
    """Folder of the data sets (see ``probing.datasets``)."""
    env = os.environ.get("CONTEXTLENS_DATA_DIR")
    return Path(env) if env else cache_dir() / "data"


def set_data_dir(path: str | os.PathLike[str]) -> None:
    """Point the data layer at ``path`` for this process (what ``--data-dir`` does)."""
    os.environ["CONTEXTLENS_DATA_DIR"] = str(Path(path).expanduser().resolve())


def demo_mode() -> bool:
    """True when running as the shared demo."""
    return os.environ.get("CONTEXTLENS_DEMO", "").lower() in {"1", "true", "yes", "on"}
