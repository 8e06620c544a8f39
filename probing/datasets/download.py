"""Downloading the data sets into the data dir: canonical sources or a mirror.

Two modes:

- **Canonical** (default): each set is fetched from where its publishers put it
  (:data:`SOURCES`): UD EWT CoNLL-U files from the treebank's GitHub repository pinned to
  the commit our reference copy was built from, the WordNet 3.0 tarball from Princeton,
  SemCor 3.0 from its maintainer (Rada Mihalcea), the Brown corpus from the NLTK data
  repository. Archives are unpacked member by member into the data-dir layout the readers
  expect (only regular files, only names that map inside the target folder and are in the
  manifest: no path traversal, no links, no stray files).
- **Mirror** (``base_url=`` or ``CONTEXTLENS_DATA_URL``): every file of
  :data:`~probing.datasets.manifest.MANIFEST` is fetched as ``{base_url}/{folder}/{path}``,
  i.e. from a server whose root looks like the data dir (tests serve ``../shared/data``
  from ``127.0.0.1``; a lab can host its own copy), each checked by size and sha256.

Every file is written through :func:`probing.io.download_file` (progress, size and
checksum checks, atomic rename) or, for archive members, written to a temporary name and
renamed only after the whole archive unpacked cleanly.
"""

from __future__ import annotations

import os
import shutil
import tarfile
import tempfile
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import IO, Literal
from urllib.parse import quote

from probing.datasets.manifest import MANIFEST
from probing.datasets.registry import dataset_path, get_dataset, resolve_data_dir
from probing.errors import DatasetNotFoundError, DownloadError
from probing.io import ProgressFn, download_file, sha256_of

BASE_URL_ENV = "CONTEXTLENS_DATA_URL"

UD_COMMIT = "15d613d8"  # UD_English-EWT commit the reference copy was built from (May 2025)
_UD_RAW = f"https://github.com/UniversalDependencies/UD_English-EWT/raw/{UD_COMMIT}"


@dataclass(frozen=True)
class Source:
    """One canonical download.

    Attributes:
        url: where to get it.
        kind: ``file`` (saved as ``dest``), ``tar.gz`` or ``zip`` (unpacked).
        dest: for ``file``: path inside the data set's folder.
        sha256, size: of the downloaded file/archive, where known (``None``: not known, the
            transfer is then checked for truncation only).
        members: for archives, ``(member prefix, destination prefix)`` rules, first match
            wins; members matching no rule, or mapping to a path not in the manifest, are
            skipped.
        identical: the resulting files are known to be byte-identical to the manifest, so
            they are checked against it (a mismatch is a DownloadError).
        note: provenance remark shown by ``data list``/the report.
    """

    url: str
    kind: Literal["file", "tar.gz", "zip"]
    dest: str = ""
    sha256: str | None = None
    size: int | None = None
    members: tuple[tuple[str, str], ...] = ()
    identical: bool = False
    note: str = ""


SOURCES: dict[str, tuple[Source, ...]] = {
    "ud-ewt": (
        Source(
            f"{_UD_RAW}/en_ewt-ud-dev.conllu",
            "file",
            dest="en_ewt-ud-dev.conllu",
            sha256=MANIFEST["ud-ewt"]["en_ewt-ud-dev.conllu"][0],
            size=MANIFEST["ud-ewt"]["en_ewt-ud-dev.conllu"][1],
            identical=True,
            note="byte-identical to the reference copy (see ../shared/data/README.md)",
        ),
        Source(
            f"{_UD_RAW}/en_ewt-ud-train.conllu",
            "file",
            dest="en_ewt-ud-train.conllu",
            note="reference copy rebuilt from the per-document sources by the procedure that "
            "reproduces dev byte for byte; identity with the published file not verified",
        ),
        Source(
            f"{_UD_RAW}/en_ewt-ud-test.conllu",
            "file",
            dest="en_ewt-ud-test.conllu",
            note="sha256 of the published file not recorded",
        ),
        Source(f"{_UD_RAW}/LICENSE.txt", "file", dest="LICENSE.txt"),
    ),
    "wordnet": (
        Source(
            "https://wordnetcode.princeton.edu/3.0/WordNet-3.0.tar.gz",
            "tar.gz",
            sha256="640db279c949a88f61f851dd54ebbb22d003f8b90b85267042ef85a3781d3a52",
            size=11_537_239,
            members=(("WordNet-3.0/dict/", ""), ("WordNet-3.0/LICENSE", "LICENSE")),
            note="archive checksum as published by package managers (Spack); the dict files "
            "are not verified against the reference copy",
        ),
    ),
    "semcor": (
        Source(
            "http://web.eecs.umich.edu/~mihalcea/downloads/semcor/semcor3.0.tar.gz",
            "tar.gz",
            members=(("semcor3.0/", ""),),
            note="archive checksum not recorded; only served over plain http",
        ),
    ),
    "brown": (
        Source(
            "https://raw.githubusercontent.com/nltk/nltk_data/gh-pages/packages/corpora/brown.zip",
            "zip",
            members=(("brown/", ""),),
            note="NLTK data package; archive checksum not recorded",
        ),
    ),
}


@dataclass
class DownloadResult:
    """What :func:`download_dataset` did."""

    name: str
    folder: Path
    downloaded: list[Path] = field(default_factory=list)
    skipped: list[Path] = field(default_factory=list)  # already present and verified
    notes: list[str] = field(default_factory=list)


def build_manifest(data_dir: str | Path) -> dict[str, dict[str, tuple[str, int]]]:
    """``{name: {relative path: (sha256, size)}}`` of the data sets found in ``data_dir``.

    Used to (re)generate the manifest (:func:`probing.datasets.manifest.write_manifest`)
    from a reference copy.
    """
    result: dict[str, dict[str, tuple[str, int]]] = {}
    for name in MANIFEST:
        base = Path(data_dir) / get_dataset(name).folder
        result[name] = {
            p.relative_to(base).as_posix(): (sha256_of(p), p.stat().st_size)
            for p in sorted(base.rglob("*"))
            if p.is_file()
        }
    return result


def download_dataset(
    name: str,
    data_dir: str | Path | None = None,
    progress: ProgressFn | None = None,
    base_url: str | None = None,
    *,
    force: bool = False,
) -> DownloadResult:
    """Fetch data set ``name`` into ``<data_dir>/<folder>``.

    Args:
        name: registry name (``ud-ewt``, ``semcor``, ``brown``, ``wordnet``).
        data_dir: target data folder (default: the data-dir setting).
        progress: called with (bytes done, total bytes or None) as data arrives; in mirror
            mode the counts cover the whole data set.
        base_url: mirror root (default: ``$CONTEXTLENS_DATA_URL``; unset means canonical
            sources).
        force: fetch again even if the files are already there.

    Raises:
        KeyError: unknown name. DownloadError: network failure, truncation, bad checksum,
        unsafe or incomplete archive; no partial file is left in place.
    """
    info = get_dataset(name)
    folder = resolve_data_dir(data_dir) / info.folder
    base_url = base_url if base_url is not None else os.environ.get(BASE_URL_ENV) or None
    result = DownloadResult(name=name, folder=folder)
    if base_url:
        _from_mirror(name, folder, base_url, progress, force, result)
    else:
        _from_sources(name, folder, progress, force, result)
    try:  # the readers' own check: say clearly if the set is still incomplete
        dataset_path(name, folder.parent)
    except DatasetNotFoundError as exc:
        raise DownloadError(f"Download of {name!r} finished but is incomplete: {exc}") from exc
    return result


def _verified(path: Path, sha256: str, size: int) -> bool:
    return path.is_file() and path.stat().st_size == size and sha256_of(path) == sha256


def _from_mirror(
    name: str,
    folder: Path,
    base_url: str,
    progress: ProgressFn | None,
    force: bool,
    result: DownloadResult,
) -> None:
    files = MANIFEST[name]
    total = sum(size for _, size in files.values())
    done = 0
    for rel, (sha, size) in files.items():
        dest = folder / rel
        if not force and _verified(dest, sha, size):
            result.skipped.append(dest)
        else:
            url = f"{base_url.rstrip('/')}/{quote(folder.name)}/{quote(rel)}"

            def file_progress(n: int, _total: int | None, _base: int = done) -> None:
                if progress:
                    progress(_base + n, total)

            download_file(url, dest, sha256=sha, size=size, progress=file_progress)
            result.downloaded.append(dest)
        done += size
        if progress:
            progress(done, total)


def _from_sources(
    name: str, folder: Path, progress: ProgressFn | None, force: bool, result: DownloadResult
) -> None:
    files = MANIFEST[name]
    if not force and all((folder / rel).is_file() for rel in files):
        result.skipped.extend(folder / rel for rel in files)
        result.notes.append("already present; pass force=True to fetch again")
        return
    folder.mkdir(parents=True, exist_ok=True)
    for src in SOURCES[name]:
        if src.note:
            result.notes.append(f"{src.url}: {src.note}")
        if src.kind == "file":
            dest = folder / src.dest
            download_file(src.url, dest, sha256=src.sha256, size=src.size, progress=progress)
            result.downloaded.append(dest)
            written = [dest]
        else:
            with tempfile.TemporaryDirectory(dir=folder.parent, prefix=".download-") as tmp:
                archive = Path(tmp) / ("archive." + src.kind)
                download_file(src.url, archive, sha256=src.sha256, size=src.size, progress=progress)
                written = extract_archive(archive, folder, src.members, allowed=set(files))
                result.downloaded.extend(written)
        for path in written:
            rel = path.relative_to(folder).as_posix()
            if rel in files and not _verified(path, *files[rel]):
                if src.identical:
                    path.unlink(missing_ok=True)
                    raise DownloadError(f"{src.url}: {rel} does not match the manifest checksum.")
                result.notes.append(f"{rel} differs from the reference copy")


def _map_member(name: str, rules: tuple[tuple[str, str], ...]) -> str | None:
    """Destination path for archive member ``name`` under ``rules``; None to skip it."""
    for prefix, dest_prefix in rules:
        if name == prefix or (prefix.endswith("/") and name.startswith(prefix)):
            rel = dest_prefix + name[len(prefix) :]
            if not rel:  # the prefix folder itself
                return None
            parts = PurePosixPath(rel).parts
            # Refuse anything that could step out of the folder or name a hidden place.
            if (
                not rel
                or rel.startswith("/")
                or "\\" in rel
                or any(p in {"", ".", ".."} for p in parts)
            ):
                raise DownloadError(f"unsafe path in archive: {name!r}")
            return rel
    return None


def _members(archive: Path) -> Iterator[tuple[str, Callable[[], IO[bytes]] | None]]:
    """(name, opener) for each member of a zip or tar archive; opener None unless the
    member is a regular file (directories, links and devices are never written)."""
    if zipfile.is_zipfile(archive):
        with zipfile.ZipFile(archive) as zf:
            for info in zf.infolist():
                kind = (info.external_attr >> 16) & 0o170000  # unix mode bits, 0 if unset
                regular = not info.is_dir() and kind in (0, 0o100000)
                yield info.filename, (lambda i=info: zf.open(i)) if regular else None
    else:
        with tarfile.open(archive, "r:*") as tf:
            for member in tf:
                opener = (lambda m=member: tf.extractfile(m)) if member.isreg() else None
                yield member.name, opener


def extract_archive(
    archive: str | Path,
    folder: str | Path,
    members: tuple[tuple[str, str], ...],
    allowed: set[str] | None = None,
) -> list[Path]:
    """Safely unpack the members of ``archive`` selected by ``members`` into ``folder``.

    Only regular files are written; a member whose mapped path is absolute, contains
    ``..`` or a backslash raises DownloadError (before anything is moved into place). With
    ``allowed``, members mapping to other paths are skipped. Files are first written under
    a temporary folder and moved into place only when the whole archive unpacked.
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    staged: list[tuple[Path, Path]] = []
    with tempfile.TemporaryDirectory(dir=folder, prefix=".unpack-") as tmp:
        for name, opener in _members(Path(archive)):
            if opener is None:  # directories, links, devices: never written
                continue
            rel = _map_member(name, members)
            if rel is None:
                continue
            if allowed is not None and rel not in allowed:
                continue
            target = (folder / rel).resolve()
            if not target.is_relative_to(folder.resolve()):
                raise DownloadError(f"unsafe path in archive: {name!r}")
            part = Path(tmp) / f"{len(staged)}"
            with opener() as f, open(part, "wb") as out:
                shutil.copyfileobj(f, out)
            staged.append((part, target))
        for part, target in staged:
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(part, target)
    if not staged:
        raise DownloadError(f"{archive}: no expected files in the archive")
    return [target for _, target in staged]
