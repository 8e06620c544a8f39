"""The README's test command gives a *relative* data dir (``../shared/data``): the library
must treat it as the folder it names from where the command ran, also through symlinks
and after the working directory changes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from probing import config
from probing.datasets import read_sentences

REPO = Path(__file__).resolve().parents[2]


def _relative_data(monkeypatch: pytest.MonkeyPatch) -> Path:
    real = config.data_dir().resolve()
    monkeypatch.chdir(REPO)
    monkeypatch.setenv("CONTEXTLENS_DATA_DIR", os.path.relpath(real, REPO))
    return real


def test_a_relative_data_dir_is_made_absolute(monkeypatch, tmp_path):
    real = _relative_data(monkeypatch)
    assert not Path(os.environ["CONTEXTLENS_DATA_DIR"]).is_absolute()
    folder = config.data_dir()
    assert folder.is_absolute() and folder.resolve() == real
    # A link made from it (as tests and the cache do) points at the real folder.
    link = tmp_path / "ud"
    link.symlink_to(folder / "ud-english-ewt")
    assert (link / "en_ewt-ud-dev.conllu").is_file()
    assert len(list(read_sentences("ud-ewt", "dev"))) == 2001


def test_a_relative_data_dir_survives_a_change_of_directory(tmp_path):
    """Fixed when the library is imported: a later chdir (or a child process started in
    another folder) still reads the folder the command named."""
    real = config.data_dir().resolve()
    code = (
        "import os, probing.config; os.chdir(os.environ['ELSEWHERE']);"
        "from probing.datasets import read_sentences;"
        "print(len(list(read_sentences('ud-ewt', 'dev'))), os.environ['CONTEXTLENS_DATA_DIR'])"
    )
    env = {
        **os.environ,
        "CONTEXTLENS_DATA_DIR": os.path.relpath(real, REPO),
        "ELSEWHERE": str(tmp_path),
    }
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr[-2000:]
    n, folder = out.stdout.split()
    assert n == "2001" and Path(folder).resolve() == real


def test_the_cli_reads_data_from_a_relative_dir(tmp_path):
    real = config.data_dir().resolve()
    env = {**os.environ, "CONTEXTLENS_DATA_DIR": os.path.relpath(real, REPO)}
    out = subprocess.run(
        [sys.executable, "-m", "probing", "data", "list", "--json"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    import json

    rows = {r["name"]: r for r in json.loads(out.stdout)}
    assert rows["ud-ewt"]["present"] and Path(rows["ud-ewt"]["path"]).is_absolute()
