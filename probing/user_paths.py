"""Paths a user names (a model folder, a weights or config file, a sweep spec): a regular
file or a folder of bounded size, checked with ``stat`` before anything opens it.

Opening a FIFO blocks until a writer comes (an ``encode`` waited 29 minutes), and reading
``/dev/zero`` never ends (a sweep spec read until a MemoryError at 5.4 GB); a symlink loop
surfaces as a library's raw error. ``stat`` answers all of these at once without opening
the file.
"""

from __future__ import annotations

import errno
import json
import os
import stat
from pathlib import Path
from typing import Any

from probing.errors import UserFileError

MB = 1024 * 1024
JSON_MAX_BYTES = 16 * MB  # a config.json / options.json: real ones are a few KB

_KINDS = (
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISDIR, "a folder"),
)


def kind_of(mode: int) -> str:
    """What a ``st_mode`` is, in words ("a FIFO (named pipe)", "a folder", "a file")."""
    return next((word for test, word in _KINDS if test(mode)), "a file")


def _stat(path: Path, what: str) -> tuple[Path, os.stat_result]:
    """The resolved path and its ``stat`` (symlinks followed, loops refused).

    Raises:
        FileNotFoundError: nothing there (callers word that case themselves).
        UserFileError: a symlink loop, or a path that cannot be looked at.
    """
    try:
        # Python 3.11-3.12 raise RuntimeError on a loop, 3.13 OSError(ELOOP).
        resolved = path.expanduser().resolve(strict=True)
        return resolved, os.stat(resolved)
    except RuntimeError:
        raise UserFileError(
            f"{what} {path} is a symbolic link that points back to itself (a symlink loop); "
            "give the real file or folder."
        ) from None
    except FileNotFoundError:
        raise
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UserFileError(
                f"{what} {path} is a symbolic link that points back to itself (a symlink "
                "loop); give the real file or folder."
            ) from None
        raise UserFileError(f"{what} {path} cannot be read: {exc.strerror or exc}.") from None


def regular_file(
    path: str | os.PathLike[str], what: str = "The file", max_bytes: int | None = None
) -> Path:
    """``path`` resolved, when it is a regular file of at most ``max_bytes`` bytes.

    Args:
        path: as the user gave it (``~`` expanded, symlinks followed).
        what: how messages name it ("The sweep spec", "config.json").
        max_bytes: size bound (None: any size).

    Raises:
        FileNotFoundError: there is nothing at ``path``.
        UserFileError: a FIFO, device, socket, folder, symlink loop, or a file too large.
    """
    path = Path(path)
    resolved, info = _stat(path, what)
    if not stat.S_ISREG(info.st_mode):
        raise UserFileError(
            f"{what} {path} is {kind_of(info.st_mode)}, not a regular file; give a file "
            "saved on disk."
        )
    if max_bytes is not None and info.st_size > max_bytes:
        raise UserFileError(
            f"{what} {path} is {info.st_size / MB:,.1f} MB; files of this kind are at most "
            f"{max_bytes / MB:,.0f} MB. Check that this is the file you meant."
        )
    return resolved


def folder(path: str | os.PathLike[str], what: str = "The folder") -> Path:
    """``path`` resolved, when it is a folder.

    Raises:
        FileNotFoundError: there is nothing at ``path``.
        UserFileError: a symlink loop, or something other than a folder.
    """
    path = Path(path)
    resolved, info = _stat(path, what)
    if not stat.S_ISDIR(info.st_mode):
        raise UserFileError(f"{what} {path} is {kind_of(info.st_mode)}, not a folder.")
    return resolved


def special(path: str | os.PathLike[str], what: str = "The file") -> None:
    """Raise when something exists at ``path`` that no loader may open (a FIFO, device,
    socket or symlink loop); missing paths, regular files and folders pass.

    Raises:
        UserFileError: naming what the path is.
    """
    path = Path(path)
    if not os.path.lexists(path):
        return
    try:
        _, info = _stat(path, what)
    except FileNotFoundError:  # a dangling symlink: the loader says "not found"
        return
    if not (stat.S_ISREG(info.st_mode) or stat.S_ISDIR(info.st_mode)):
        raise UserFileError(
            f"{what} {path} is {kind_of(info.st_mode)}, not a regular file or folder."
        )


def read_text(
    path: str | os.PathLike[str], what: str = "The file", max_bytes: int | None = JSON_MAX_BYTES
) -> str:
    """The UTF-8 text of a regular file of bounded size (see :func:`regular_file`).

    Raises:
        FileNotFoundError, UserFileError: as :func:`regular_file`.
        UnicodeDecodeError: not UTF-8 (callers say which file).
    """
    resolved = regular_file(path, what, max_bytes)
    with open(resolved, "rb") as f:
        # Read one byte past the bound: a file that grew after stat is still refused.
        data = f.read(max_bytes + 1) if max_bytes is not None else f.read()
    if max_bytes is not None and len(data) > max_bytes:
        raise UserFileError(f"{what} {path} is over {max_bytes / MB:,.0f} MB.")
    return data.decode("utf-8")


def parse_json(text: str | bytes, what: str) -> Any:
    """``json.loads(text)``; JSON nested too deeply for the parser is a typed error.

    Raises:
        json.JSONDecodeError: not JSON (callers give the line).
        UserFileError: nested deeper than Python's parser goes (RecursionError).
    """
    try:
        return json.loads(text)
    except RecursionError:
        raise UserFileError(
            f"{what} is nested too deeply to read (thousands of levels of brackets); it is not "
            "a file ContextLens writes or reads. Check that this is the file you meant."
        ) from None
