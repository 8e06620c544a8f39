"""Extraction writes the feature cache as it goes: a cancelled or killed run resumes where
it stopped, and the resumed entry equals one built in a single go."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pytest

from probing import feature_cache
from probing.features import extract_features, features_dir

if TYPE_CHECKING:
    from probing.encoders.base import Encoder

N = 96  # sentences of UD-EWT dev (a seeded sample), encoded 8 at a time: 12 batches


class Cancelled(Exception):
    pass


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CONTEXTLENS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(feature_cache, "CHECKPOINT_S", 0.0)  # record after every batch
    return tmp_path / "cache"


def _first_progress(minilm: Encoder) -> tuple[int, np.ndarray]:
    seen: list[int] = []
    feats = extract_features(
        minilm,
        "ud-ewt",
        "dev",
        max_sentences=N,
        batch_size=8,
        progress=lambda done, total: seen.append(done),
    )
    return seen[0], np.asarray(feats.layers)


def _fresh(minilm: Encoder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> np.ndarray:
    monkeypatch.setenv("CONTEXTLENS_CACHE_DIR", str(tmp_path / "fresh"))
    whole = extract_features(minilm, "ud-ewt", "dev", max_sentences=N, batch_size=8)
    return np.asarray(whole.layers)


def test_a_cancelled_extraction_resumes_where_it_stopped(minilm, cache, tmp_path, monkeypatch):
    def stop_halfway(done: int, total: int) -> None:
        if done >= total // 2:
            raise Cancelled  # what a closed page or the job budget does to the thread

    with pytest.raises(Cancelled):
        extract_features(
            minilm, "ud-ewt", "dev", max_sentences=N, batch_size=8, progress=stop_halfway
        )
    partial = [p for p in features_dir().iterdir() if p.name.startswith(".partial-") and p.is_dir()]
    assert len(partial) == 1 and (partial[0] / "progress.json").is_file()
    first, resumed = _first_progress(minilm)
    assert N // 2 <= first < N  # it started from the recorded batches, not from 0
    assert not partial[0].exists()  # installed as the entry
    assert np.array_equal(resumed, _fresh(minilm, tmp_path, monkeypatch))


def _in_a_fresh_process(cache: Path, body: str) -> subprocess.CompletedProcess:
    """Run ``body`` in a new interpreter on ``cache``: a killed server and the one that comes
    back share nothing but the disk (and no state of this test session leaks into them)."""
    code = textwrap.dedent("""
        import os, sys
        import numpy as np
        from probing import feature_cache
        from probing.features import extract_features
        from probing.models.registry import load_encoder
        feature_cache.CHECKPOINT_S = 0.0
        encoder = load_encoder("minilm-l6")
    """) + textwrap.dedent(body)
    env = {**os.environ, "CONTEXTLENS_CACHE_DIR": str(cache)}
    return subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        capture_output=True,
        timeout=600,
        cwd=Path(__file__).resolve().parents[2],
    )


def test_a_killed_extraction_resumes_where_it_stopped(minilm, cache, tmp_path, monkeypatch):
    killed = _in_a_fresh_process(
        cache,
        f"""
        def kill_halfway(done, total):
            if done >= total // 2:
                os._exit(9)  # no clean-up runs, as with SIGKILL

        extract_features(encoder, "ud-ewt", "dev", max_sentences={N}, batch_size=8,
                         progress=kill_halfway)
    """,
    )
    assert killed.returncode == 9, killed.stderr.decode()[-2000:]
    out = tmp_path / "resumed.npy"
    resumed = _in_a_fresh_process(
        cache,
        f"""
        seen = []
        feats = extract_features(encoder, "ud-ewt", "dev", max_sentences={N}, batch_size=8,
                                 progress=lambda done, total: seen.append(done))
        np.save({str(out)!r}, np.asarray(feats.layers))
        print("first", seen[0])
    """,
    )
    assert resumed.returncode == 0, resumed.stderr.decode()[-2000:]
    first = int(resumed.stdout.decode().split("first")[-1])
    assert N // 2 <= first < N  # it started from the recorded batches, not from 0
    assert np.array_equal(np.load(out), _fresh(minilm, tmp_path, monkeypatch))


def test_a_journal_of_another_plan_starts_over(minilm, cache):
    with pytest.raises(Cancelled):
        extract_features(
            minilm,
            "ud-ewt",
            "dev",
            max_sentences=N,
            batch_size=8,
            progress=lambda d, t: (_ for _ in ()).throw(Cancelled) if d >= t // 2 else None,
        )
    seen: list[int] = []
    # Another batch size is another batch order: nothing on disk can be trusted to match.
    extract_features(
        minilm,
        "ud-ewt",
        "dev",
        max_sentences=N,
        batch_size=16,
        progress=lambda done, total: seen.append(done),
    )
    assert seen[0] == 0
