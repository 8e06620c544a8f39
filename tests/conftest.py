"""Shared test set-up: real data from ../shared/data, no network, one torch thread; the
markers each test folder gives its tests."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DATA = REPO.parent / "shared" / "data"

os.environ.setdefault("CONTEXTLENS_DATA_DIR", str(DEFAULT_DATA))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
# Models fetched on request (mpnet-base, ~440 MB) are read from where `models fetch` put them
# (CI: its cache folder), not fetched again into each test run's cache.
os.environ.setdefault(
    "CONTEXTLENS_FETCHED_MODELS_DIR",
    str(
        Path(os.environ.get("CONTEXTLENS_CACHE_DIR", Path.home() / ".cache" / "contextlens"))
        / "models"
    ),
)
# Feature caches and saved probe runs go to a folder of this test run, never the user's cache.
if "CONTEXTLENS_CACHE_DIR" not in os.environ:
    _run_cache = tempfile.mkdtemp(prefix="contextlens-tests-")
    os.environ["CONTEXTLENS_CACHE_DIR"] = _run_cache
    atexit.register(shutil.rmtree, _run_cache, ignore_errors=True)

TESTS = Path(__file__).resolve().parent
# Markers are set once per folder, here, not on each test: the fast subset
# `pytest -m "not slow and not browser"` is tests/unit/.
FOLDER_MARKERS: dict[str, tuple[str, ...]] = {
    "unit": ("unit",),  # pure functions and small objects, a sentence or two through a model
    "library": ("library", "slow"),  # the library on real models over real data sets
    "app": ("app", "slow"),  # pages through streamlit.testing's AppTest; ui/ helpers
    "e2e": ("e2e", "browser", "slow"),  # a real `streamlit run` server, most in Chromium
    "bench": ("bench", "slow"),  # timing, memory and speed claims; bench/ scripts
}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Give each test its folder's markers. A test file not yet sorted into a folder (at
    tests/ root) counts as slow, so that it cannot slow the fast subset down."""
    for item in items:
        try:
            parts = item.path.resolve().relative_to(TESTS).parts
        except ValueError:  # not under tests/
            continue
        for name in FOLDER_MARKERS.get(parts[0], ()) if len(parts) > 1 else ("slow",):
            item.add_marker(name)


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """The real data folder (CI: ../shared/data)."""
    path = Path(os.environ["CONTEXTLENS_DATA_DIR"])
    assert path.is_dir(), f"data folder {path} is missing; set CONTEXTLENS_DATA_DIR"
    return path


@pytest.fixture(scope="session")
def minilm():
    """The embedded pretrained encoder, loaded once for the whole run."""
    import probing

    return probing.load_encoder("minilm-l6")
