"""The data-set downloader, against a mirror of ../shared/data served on 127.0.0.1."""

from __future__ import annotations

import filecmp
import functools
import http.server
import io
import tarfile
import threading
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from probing.datasets import download as dl
from probing.datasets.download import Source, download_dataset, extract_archive
from probing.datasets.manifest import MANIFEST
from probing.datasets.ud import read_ud
from probing.errors import DownloadError


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def mirror(data_dir: Path) -> Iterator[str]:
    """``http://127.0.0.1:PORT`` serving the data dir, in a thread, on a free port."""
    handler = functools.partial(_QuietHandler, directory=str(data_dir))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def _leftovers(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*") if p.name.endswith(".part") or p.name.startswith(".")]


def test_manifest_matches_reference_copy(data_dir: Path) -> None:
    for name, files in MANIFEST.items():
        folder = data_dir / dl.get_dataset(name).folder
        on_disk = {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}
        assert on_disk == set(files), name
        for rel, (_sha, size) in files.items():
            assert (folder / rel).stat().st_size == size, rel


def test_mirror_download_is_identical(mirror: str, data_dir: Path, tmp_path: Path) -> None:
    calls: list[tuple[int, int | None]] = []
    result = download_dataset(
        "ud-ewt", tmp_path, progress=lambda d, t: calls.append((d, t)), base_url=mirror
    )
    total = sum(size for _, size in MANIFEST["ud-ewt"].values())
    assert calls and calls[-1] == (total, total)
    assert all(b[0] >= a[0] for a, b in zip(calls, calls[1:], strict=False))  # monotonic
    ref = data_dir / "ud-english-ewt"
    got = tmp_path / "ud-english-ewt"
    assert sorted(p.name for p in got.iterdir()) == sorted(MANIFEST["ud-ewt"])
    for rel in MANIFEST["ud-ewt"]:
        assert filecmp.cmp(ref / rel, got / rel, shallow=False), rel
    assert len(result.downloaded) == 4 and not _leftovers(got)
    assert next(read_ud("dev", tmp_path)).words[0] == "From"
    # A second run finds everything in place and verified.
    again = download_dataset("ud-ewt", tmp_path, base_url=mirror)
    assert again.downloaded == [] and len(again.skipped) == 4


def test_base_url_from_environment(
    mirror: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(dl.BASE_URL_ENV, mirror)
    monkeypatch.setitem(MANIFEST, "wordnet", dict(MANIFEST["wordnet"]))
    # Keep it small: only the files the reader requires.
    for rel in list(MANIFEST["wordnet"]):
        if rel not in {"data.noun", "index.sense", "lexnames", "LICENSE"}:
            del MANIFEST["wordnet"][rel]
    result = download_dataset("wordnet", tmp_path)
    assert {p.name for p in result.downloaded} == {
        "data.noun",
        "index.sense",
        "lexnames",
        "LICENSE",
    }


def test_bad_checksum_leaves_no_file(
    mirror: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = dict(MANIFEST["ud-ewt"])
    sha, size = files["en_ewt-ud-dev.conllu"]
    files["en_ewt-ud-dev.conllu"] = ("0" * 64, size)
    monkeypatch.setitem(MANIFEST, "ud-ewt", files)
    with pytest.raises(DownloadError, match="(?i)checksum"):
        download_dataset("ud-ewt", tmp_path, base_url=mirror)
    folder = tmp_path / "ud-english-ewt"
    assert not (folder / "en_ewt-ud-dev.conllu").exists()
    assert not _leftovers(folder)


def test_unreachable_mirror(tmp_path: Path) -> None:
    with pytest.raises(DownloadError):
        download_dataset("ud-ewt", tmp_path, base_url="http://127.0.0.1:9")


def test_unknown_dataset(tmp_path: Path) -> None:
    with pytest.raises(KeyError, match="ud-ewt"):
        download_dataset("imagenet", tmp_path)


# --------------------------------------------------------------------------- archives


def test_canonical_zip_is_unpacked(
    data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The Brown source is NLTK's brown.zip; rebuild one from the mirror and install it."""
    archive = tmp_path / "brown.zip"
    ref = data_dir / "brown"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_STORED) as zf:
        zf.writestr("brown/", "")
        for rel in MANIFEST["brown"]:
            zf.write(ref / rel, f"brown/{rel}")
        zf.writestr("brown/extra-not-in-manifest.txt", "skipped")
    src = Source(archive.as_uri(), "zip", members=(("brown/", ""),))
    monkeypatch.setitem(dl.SOURCES, "brown", (src,))
    calls: list[int] = []
    result = download_dataset("brown", tmp_path / "data", progress=lambda d, t: calls.append(d))
    folder = tmp_path / "data" / "brown"
    assert len(result.downloaded) == len(MANIFEST["brown"]) and calls
    assert not (folder / "extra-not-in-manifest.txt").exists()
    assert filecmp.cmp(ref / "ca01", folder / "ca01", shallow=False)
    assert not _leftovers(folder) and not _leftovers(tmp_path / "data")


def test_canonical_tar_checksum_mismatch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    archive = tmp_path / "wn.tar.gz"
    with tarfile.open(archive, "w:gz") as tf:
        _add(tf, "WordNet-3.0/dict/lexnames", b"00\tadj.all\t3\n")
    src = Source(archive.as_uri(), "tar.gz", sha256="0" * 64, members=(("WordNet-3.0/dict/", ""),))
    monkeypatch.setitem(dl.SOURCES, "wordnet", (src,))
    with pytest.raises(DownloadError, match="(?i)checksum"):
        download_dataset("wordnet", tmp_path / "data")
    assert not (tmp_path / "data" / "wordnet-3.0" / "lexnames").exists()


def _add(tf: tarfile.TarFile, name: str, data: bytes, **kw: object) -> None:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    for key, value in kw.items():
        setattr(info, key, value)
    tf.addfile(info, io.BytesIO(data))


@pytest.mark.parametrize(
    "evil", ["pkg/../../escape.txt", "pkg/../escape.txt", "pkg//abs.txt", "pkg/a\\..\\b"]
)
def test_tar_path_traversal_is_refused(tmp_path: Path, evil: str) -> None:
    archive = tmp_path / "evil.tar.gz"
    with tarfile.open(archive, "w:gz") as tf:
        _add(tf, "pkg/good.txt", b"ok")
        _add(tf, evil, b"pwned")
    target = tmp_path / "out" / "folder"
    with pytest.raises(DownloadError, match="unsafe"):
        extract_archive(archive, target, (("pkg/", ""),))
    assert not (target / "good.txt").exists()  # nothing is moved into place
    assert not list((tmp_path / "out").rglob("*.txt"))


def test_links_and_absolute_names_are_not_written(tmp_path: Path) -> None:
    archive = tmp_path / "links.tar"
    with tarfile.open(archive, "w") as tf:
        _add(tf, "pkg/good.txt", b"ok")
        _add(tf, "pkg/link", b"", type=tarfile.SYMTYPE, linkname="/etc/passwd")
        _add(tf, "/etc/evil.txt", b"pwned")  # matches no rule: skipped
    target = tmp_path / "out"
    written = extract_archive(archive, target, (("pkg/", ""),))
    assert written == [(target / "good.txt").resolve()]
    assert not (target / "link").exists() and not (target / "link").is_symlink()


def test_zip_traversal_is_refused(tmp_path: Path) -> None:
    archive = tmp_path / "evil.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("pkg/good.txt", "ok")
        zf.writestr("pkg/../../evil.txt", "pwned")
    with pytest.raises(DownloadError, match="unsafe"):
        extract_archive(archive, tmp_path / "out", (("pkg/", ""),))
    assert not (tmp_path / "evil.txt").exists()
