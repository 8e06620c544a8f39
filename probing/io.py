"""Files: the one file hash, the one atomic writer, and downloads with checks.

A file is first written to a temporary name beside its destination and renamed into place
only after it is complete (and, for downloads, every check passed), so a crash or a
truncated transfer never leaves a file that looks complete.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import re
import tempfile
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from probing.cache import LRUCache
from probing.errors import CacheNotWritableError, ContextLensError, DiskFullError, DownloadError

ProgressFn = Callable[[int, int | None], None]  # (bytes done, total bytes or None)
_CHUNK = 1 << 16


def sha256_of(path: str | os.PathLike[str]) -> str:
    """Hex SHA-256 of a file's content."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


_file_hashes: LRUCache[str] = LRUCache(8192)  # a data set's files: ~1k at most


def file_sha256(path: str | os.PathLike[str]) -> str:
    """Hex SHA-256 of a file, memoised per (path, size, mtime) for this process."""
    st = os.stat(path)
    memo = (str(Path(path).resolve()), st.st_size, st.st_mtime_ns)
    return _file_hashes.get_or_make(memo, lambda: sha256_of(path))


def atomic_write(
    path: str | os.PathLike[str],
    write: Callable[[Path], object],
    *,
    suffix: str = ".tmp",
    prefix: str | None = None,
    durable: bool = False,
) -> Path:
    """Call ``write(tmp)`` on a temporary file beside ``path``, then rename it over ``path``.

    Readers see the old file or the whole new one, never a half-written one. The file gets
    mode 0644 (these files are committed or shared between sessions). ``suffix`` keeps a
    writer that insists on an extension (``np.savez``: ``.npz``) from renaming the file;
    ``prefix`` names the temporary file (default ``.<name>.``) so that a folder's owner can
    sweep leftovers by pattern; ``durable`` flushes the file to disk before the rename, so
    that a machine crash cannot leave a complete-looking name with lost content.
    """
    path = Path(path)
    pre = f".{path.name}." if prefix is None else prefix
    fd, tmp_name = tempfile.mkstemp(prefix=pre, suffix=suffix, dir=path.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        write(tmp)
        if durable:
            with open(tmp, "rb+") as fh:
                os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)  # mkstemp makes 0600
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path


def atomic_write_text(path: str | os.PathLike[str], text: str, **options: Any) -> Path:
    """Write UTF-8 ``text`` to ``path`` atomically (``options``: see :func:`atomic_write`)."""
    return atomic_write(path, lambda tmp: tmp.write_text(text, encoding="utf-8"), **options)


def atomic_write_json(
    path: str | os.PathLike[str], data: Any, indent: int = 2, **options: Any
) -> Path:
    """Write ``data`` as indented JSON (with a final newline) to ``path`` atomically
    (``options``: see :func:`atomic_write`)."""
    return atomic_write_text(path, json.dumps(data, indent=indent) + "\n", **options)


_FULL = (errno.ENOSPC, errno.EDQUOT)
_NOT_WRITABLE = (errno.EROFS, errno.EACCES, errno.EPERM)
# A library that writes files itself says the OS error only in its text (safetensors:
# "IoError(Os { code: 28, kind: StorageFull, message: "No space left on device" })").
_CODE_RE = re.compile(r"\bOs \{ code: (\d+)|\[Errno (\d+)\]")
_TEXTS = {
    "no space left": errno.ENOSPC,
    "quota exceeded": errno.EDQUOT,
    "read-only file system": errno.EROFS,
    "permission denied": errno.EACCES,
}


def write_errno(exc: BaseException) -> int | None:
    """The OS error number behind a failed write: an OSError's own, else one that a library's
    error carries in its text; None when there is none."""
    if isinstance(exc, OSError) and exc.errno is not None:
        return exc.errno
    text = str(exc)
    if m := _CODE_RE.search(text):
        return int(m.group(1) or m.group(2))
    return next((code for words, code in _TEXTS.items() if words in text.lower()), None)


@contextlib.contextmanager
def cache_writes(what: str) -> Iterator[None]:
    """Writes into the cache folder (``CONTEXTLENS_CACHE_DIR``) in the body: a full disk
    raises DiskFullError and a read-only folder CacheNotWritableError, each naming the folder
    and what to do, in place of the OS's or a library's own text. ``what``: what was being
    saved ("the feature cache entry"), for the message.
    """
    try:
        yield
    except ContextLensError:
        raise  # already says what happened (the feature cache's own DiskFullError)
    except Exception as exc:
        code = write_errno(exc)
        if code not in _FULL + _NOT_WRITABLE:
            raise
        from probing.config import cache_dir

        root = cache_dir()
        if code in _FULL:
            raise DiskFullError(
                f"The cache folder {root} is full, so {what} could not be saved (nothing "
                "half-written was kept). Free some space there, or set CONTEXTLENS_CACHE_DIR "
                "to a folder on a disk with room."
            ) from exc
        raise CacheNotWritableError(
            f"The cache folder {root} cannot be written ({os.strerror(code).lower()}), so "
            f"{what} could not be saved. Set CONTEXTLENS_CACHE_DIR to a folder you can write "
            "to."
        ) from exc


def download_file(
    url: str,
    dest: str | os.PathLike[str],
    *,
    sha256: str | None = None,
    size: int | None = None,
    progress: ProgressFn | None = None,
    timeout: float = 60.0,
) -> Path:
    """Fetch ``url`` into ``dest`` atomically.

    Args:
        url: http(s) or file URL.
        dest: final path; its folder is created.
        sha256: expected hex digest, checked before the file is moved into place.
        size: expected size in bytes; also checked against the server's Content-Length.
        progress: called as bytes arrive with (done, total or None).
        timeout: socket timeout in seconds.

    Raises:
        DownloadError: network failure, truncated transfer, wrong size or checksum.
    """
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    h = hashlib.sha256()
    done = 0
    fd, tmp_name = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".part", dir=dest.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            try:
                with urllib.request.urlopen(url, timeout=timeout) as resp:
                    header = resp.headers.get("Content-Length")
                    announced = int(header) if header and header.isdigit() else None
                    total = size if size is not None else announced
                    if progress:
                        progress(0, total)
                    while True:
                        block = resp.read(_CHUNK)
                        if not block:
                            break
                        out.write(block)
                        h.update(block)
                        done += len(block)
                        if progress:
                            progress(done, total)
            except (urllib.error.URLError, OSError, ValueError) as exc:
                raise DownloadError(f"Could not download {url}: {exc}") from exc
        if announced is not None and done != announced:
            raise DownloadError(
                f"Download of {url} was truncated: got {done} of {announced} bytes."
            )
        if size is not None and done != size:
            raise DownloadError(f"Download of {url} has {done} bytes; expected {size}.")
        if sha256 is not None and h.hexdigest() != sha256.lower():
            raise DownloadError(
                f"Checksum mismatch for {url}: got sha256 {h.hexdigest()}, expected {sha256}."
            )
        os.replace(tmp_name, dest)
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise
    return dest
