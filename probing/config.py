"""Process-wide settings read from the environment (the CLI flags set the same variables).

- ``CONTEXTLENS_DATA_DIR``: folder holding the data sets (default ``~/.cache/contextlens/data``,
  or ``../shared/data`` beside the checkout when only that exists).
- ``CONTEXTLENS_CACHE_DIR``: feature cache and downloaded models (default ``~/.cache/contextlens``).
- ``CONTEXTLENS_FETCHED_MODELS_DIR``: where models fetched on request (mpnet-base) live
  (default ``<cache>/models``).
- ``CONTEXTLENS_DEMO``: ``1`` turns on demo mode (registry models only, caps on input sizes).
- ``CONTEXTLENS_FEATURE_CACHE_MB``: total size bound of the feature cache; least recently used
  entries are evicted beyond it (default 2,048 MB in demo mode, 20,480 MB otherwise).
- ``CONTEXTLENS_JOB_SECONDS`` / ``CONTEXTLENS_JOB_MEMORY_MB``: wall-clock and memory budget of
  one heavy job started from the UI (defaults: see :func:`limits`).
- ``CONTEXTLENS_MAX_MODEL_MB``: the largest model (float32 parameter bytes, read from its
  config before it is built) that may be loaded (default 2,048 MB in demo mode, half the
  machine's memory otherwise).
- ``CONTEXTLENS_MODEL_CACHE_MB``: parameter bytes of loaded models kept for reuse; least
  recently used models are dropped beyond it (default 1,536 MB in demo mode, a quarter of the
  machine's memory up to 8,192 MB otherwise).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
MODELS_DIR = REPO_ROOT / "models"


def results_dir() -> Path:
    """The committed results the app shows first and ``probe`` refuses to overwrite:
    ``$CONTEXTLENS_RESULTS_DIR``, else the checkout's ``results/`` (where
    ``results/regenerate.sh`` writes them)."""
    return Path(os.environ.get("CONTEXTLENS_RESULTS_DIR") or REPO_ROOT / "results")


def cache_dir() -> Path:
    """Root of everything ContextLens writes: downloads, feature cache, results."""
    return Path(os.environ.get("CONTEXTLENS_CACHE_DIR", Path.home() / ".cache" / "contextlens"))


SHARED_DATA = REPO_ROOT.parent / "shared" / "data"  # the team's read-only copy beside a checkout

# A relative data dir (the README's ``../shared/data``) names a folder from where the process
# started: fixed once here, so a later chdir or a child process started elsewhere reads the same.
if os.environ.get("CONTEXTLENS_DATA_DIR") and not os.path.isabs(os.environ["CONTEXTLENS_DATA_DIR"]):
    os.environ["CONTEXTLENS_DATA_DIR"] = os.path.abspath(
        os.path.expanduser(os.environ["CONTEXTLENS_DATA_DIR"])
    )


def data_dir() -> Path:
    """Folder of the data sets (see ``probing.datasets``).

    ``$CONTEXTLENS_DATA_DIR`` when set; else ``~/.cache/contextlens/data`` (where
    ``python -m probing data download`` puts them) when it exists; else ``../shared/data``
    beside the checkout when that exists; else the cache folder (to be downloaded into).
    """
    env = os.environ.get("CONTEXTLENS_DATA_DIR")
    if env:
        # Absolute: a relative path (the README's ``../shared/data``) would otherwise mean
        # another folder to a symlink made from it or to a process started elsewhere.
        return Path(env).expanduser().absolute()
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
    max_labels: int = 1_000  # distinct labels a linear probe may have to tell apart
    max_probe_params: int = 10_000_000  # labels x dim of one linear probe
    job_seconds: float = 3_600.0  # wall clock of one heavy job from the UI
    job_memory_bytes: int = 8 * 1024**3  # growth of the server's RSS during one heavy job
    feature_cache_bytes: int = 20 * 1024**3  # total size of the feature cache (LRU beyond)
    # Sentence counts the UI offers; None = any value (the demo allows only these presets,
    # so that visitors cannot mint a new cache entry per value).
    train_sizes: tuple[int, ...] | None = None
    eval_sizes: tuple[int, ...] | None = None  # 0 = the whole split
    max_lemma_occurrences: int = 2_000  # occurrences of one lemma in the sense-geometry view
    max_contextuality_sentences: int = 2_000  # corpus sentences for a contextuality run
    max_attention_corpus_sentences: int = 2_000  # corpus sentences for head statistics
    # Words in one uploaded sentence, per kind of task (None = no cap; the memory estimate
    # of probing.probes.upload_budget still applies): tree-distance targets are n x n.
    max_upload_sentence_words: int | None = None
    max_tree_sentence_words: int | None = None
    # Models: the largest one that may be built (float32 bytes its config implies, checked
    # before allocation) and the parameter bytes of loaded models kept for reuse (LRU).
    max_model_bytes: int = 8 * 1024**3
    model_cache_bytes: int = 8 * 1024**3


def _env_number(name: str, default: float, scale: float = 1.0) -> float:
    """A positive number from the environment (times ``scale``), else ``default``."""
    raw = os.environ.get(name, "").strip()
    try:
        value = float(raw) * scale
    except ValueError:
        return default
    return value if value > 0 else default


def _memory_bytes() -> int:
    """Physical memory of this machine (16 GiB when the OS does not say)."""
    try:
        return int(os.sysconf("SC_PHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (AttributeError, OSError, ValueError):
        return 16 * 1024**3


def limits() -> Limits:
    """The caps in force (see ``demo_mode``); budgets and the cache bound can be set in
    the environment (see the module doc)."""
    mb = 1024 * 1024
    if demo_mode():
        base = Limits(
            max_chars=2_000,
            max_sentences=12,
            max_probe_train_sentences=2_000,
            max_upload_bytes=2 * mb,
            heavy_jobs=1,
            max_labels=200,
            max_probe_params=1_000_000,
            job_seconds=300.0,
            job_memory_bytes=1536 * mb,
            feature_cache_bytes=2048 * mb,
            train_sizes=(200, 500, 1_000, 2_000),
            eval_sizes=(0, 500, 1_000),
            max_lemma_occurrences=300,
            max_contextuality_sentences=300,
            max_attention_corpus_sentences=200,
            max_upload_sentence_words=500,
            max_tree_sentence_words=200,
            max_model_bytes=2048 * mb,
            model_cache_bytes=1536 * mb,
        )
    else:
        memory = _memory_bytes()
        base = Limits(
            max_chars=50_000,
            max_sentences=200,
            max_probe_train_sentences=20_000,
            max_upload_bytes=50 * mb,
            heavy_jobs=2,
            max_model_bytes=memory // 2,
            model_cache_bytes=max(1024 * mb, min(8192 * mb, memory // 4)),
        )
    return replace(
        base,
        job_seconds=_env_number("CONTEXTLENS_JOB_SECONDS", base.job_seconds),
        job_memory_bytes=int(_env_number("CONTEXTLENS_JOB_MEMORY_MB", base.job_memory_bytes, mb)),
        feature_cache_bytes=int(
            _env_number("CONTEXTLENS_FEATURE_CACHE_MB", base.feature_cache_bytes, mb)
        ),
        max_model_bytes=int(_env_number("CONTEXTLENS_MAX_MODEL_MB", base.max_model_bytes, mb)),
        model_cache_bytes=int(
            _env_number("CONTEXTLENS_MODEL_CACHE_MB", base.model_cache_bytes, mb)
        ),
    )


def server_paths() -> list[str]:
    """Server folders whose names must not reach a demo visitor, as the strings they appear
    as in messages (given, resolved and home-relative forms), longest first."""
    import sys
    import tempfile

    roots = [
        data_dir(),
        cache_dir(),
        REPO_ROOT,
        MODELS_DIR,
        SHARED_DATA,
        Path.home(),
        Path(tempfile.gettempdir()),
        Path(sys.prefix),
        Path.cwd(),
    ]
    out: set[str] = set()
    for root in roots:
        for form in (root, root.expanduser(), root.resolve(), root.absolute()):
            text = str(form)
            if len(text) > 1:  # never "/" or "."
                out.add(text)
    return sorted(out, key=len, reverse=True)
