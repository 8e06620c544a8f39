"""Process-wide settings read from the environment (the CLI flags set the same variables).

- ``CONTEXTLENS_DATA_DIR``: folder holding the data sets (default ``~/.cache/contextlens/data``,
  or ``../shared/data`` beside the checkout when only that exists).
- ``CONTEXTLENS_CACHE_DIR``: feature cache and downloaded models (default ``~/.cache/contextlens``).
- ``CONTEXTLENS_DEMO``: ``1`` turns on demo mode (registry models only, caps on input sizes).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
MODELS_DIR = REPO_ROOT / "models"


def cache_dir() -> Path:
    """Root of everything ContextLens writes: downloads, feature cache, results."""
    return Path(os.environ.get("CONTEXTLENS_CACHE_DIR", Path.home() / ".cache" / "contextlens"))


SHARED_DATA = REPO_ROOT.parent / "shared" / "data"  # the team's read-only copy beside a checkout


def data_dir() -> Path:
    """Folder of the data sets (see ``probing.datasets``).

    ``$CONTEXTLENS_DATA_DIR`` when set; else ``~/.cache/contextlens/data`` (where
    ``python -m probing data download`` puts them) when it exists; else ``../shared/data``
    beside the checkout when that exists; else the cache folder (to be downloaded into).
    """
    env = os.environ.get("CONTEXTLENS_DATA_DIR")
    if env:
        return Path(env)
    default = cache_dir() / "data"
    if not default.is_dir() and SHARED_DATA.is_dir():
        return SHARED_DATA
    return default


def set_data_dir(path: str | os.PathLike[str]) -> None:
    """Point the data layer at ``path`` for this process (what ``--data-dir`` does)."""
    os.environ["CONTEXTLENS_DATA_DIR"] = str(Path(path).expanduser().resolve())


def demo_mode() -> bool:
    """True when running as the shared demo."""
    return os.environ.get("CONTEXTLENS_DEMO", "").lower() in {"1", "true", "yes", "on"}


@dataclass(frozen=True)
class Limits:
    """Caps on what one request may ask for. Demo mode is strict; local use is generous."""

    max_chars: int  # characters of typed text per request
    max_sentences: int  # sentences typed on one page
    max_probe_train_sentences: int  # training sentences for a probe run from the UI
    max_upload_bytes: int  # uploaded CoNLL-U files
    heavy_jobs: int  # concurrent heavy jobs (extraction, probing, UMAP) per server process
    max_lemma_occurrences: int  # occurrences of one lemma in the sense-geometry view
    max_contextuality_sentences: int  # corpus sentences for a contextuality run from the UI
    max_attention_corpus_sentences: int  # corpus sentences for head statistics from the UI


def limits() -> Limits:
    """The caps in force (see ``demo_mode``)."""
    if demo_mode():
        return Limits(
            max_chars=2_000,
            max_sentences=12,
            max_probe_train_sentences=2_000,
            max_upload_bytes=2 * 1024 * 1024,
            heavy_jobs=1,
            max_lemma_occurrences=300,
            max_contextuality_sentences=300,
            max_attention_corpus_sentences=200,
        )
    return Limits(
        max_chars=50_000,
        max_sentences=200,
        max_probe_train_sentences=20_000,
        max_upload_bytes=50 * 1024 * 1024,
        heavy_jobs=2,
        max_lemma_occurrences=2000,
        max_contextuality_sentences=2000,
        max_attention_corpus_sentences=2000,
    )
