"""Housekeeping of the on-disk feature cache: size bound, LRU eviction, stale temp folders.

Entries are the folders :mod:`probing.features` writes under ``features_dir()``. Each use of
an entry touches its ``manifest.json`` (the mtime is the "last used" time), so eviction drops
the least recently used entries first until the cache is under its bound
(``config.limits().feature_cache_bytes``). Eviction renames an entry away before deleting
it; a process that still has its arrays memory-mapped keeps reading them (POSIX keeps an
unlinked file's pages until the last map closes).

Temporary build folders are named ``.tmp-<entry>-<pid>-<random>``: one whose process is gone
(a killed extraction) or that is older than a day is removed at the next build.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import threading
import time
from pathlib import Path

STALE_AFTER_S = 24 * 3600.0  # a temp folder this old is stale whatever its process


def entry_size(folder: Path) -> int:
    """Bytes of the files of one entry (0 when it is gone)."""
    total = 0
    with contextlib.suppress(OSError):
        for f in folder.iterdir():
            with contextlib.suppress(OSError):
                total += f.stat().st_size
    return total


def entries(root: Path) -> list[Path]:
    """The complete entries (folders with a manifest) under ``root``."""
    if not root.is_dir():
        return []
    return [
        p for p in root.iterdir() if not p.name.startswith(".") and (p / "manifest.json").exists()
    ]


def total_size(root: Path) -> int:
    """Bytes held by the cache's entries."""
    return sum(entry_size(p) for p in entries(root))


def touch(folder: Path) -> None:
    """Mark an entry as used now (its manifest's mtime is the LRU clock)."""
    with contextlib.suppress(OSError):
        os.utime(folder / "manifest.json")


def _last_used(folder: Path) -> float:
    try:
        return (folder / "manifest.json").stat().st_mtime
    except OSError:
        return 0.0


def evict(root: Path, max_bytes: int, keep: Path | None = None) -> list[Path]:
    """Remove least recently used entries until the cache holds at most ``max_bytes``.

    ``keep`` (the entry just built or being used) is removed last, and only when it alone
    exceeds the bound. Returns the folders removed.
    """
    found = sorted(entries(root), key=_last_used)
    sizes = {p: entry_size(p) for p in found}
    total = sum(sizes.values())
    removed: list[Path] = []
    order = [p for p in found if keep is None or p != keep] + ([keep] if keep in sizes else [])
    for folder in order:
        if total <= max_bytes:
            break
        remove(folder)
        total -= sizes[folder]
        removed.append(folder)
    return removed


def remove(folder: Path) -> None:
    """Delete an entry; rename first so that a concurrent reader never sees half of one."""
    trash = folder.with_name(f".trash-{folder.name}-{os.getpid()}-{threading.get_ident()}")
    try:
        os.replace(folder, trash)
    except OSError:
        return
    shutil.rmtree(trash, ignore_errors=True)


def temp_prefix(folder: Path) -> str:
    """Prefix of a temporary build folder for entry ``folder`` (holds this process's id)."""
    return f".tmp-{folder.name}-{os.getpid()}-"


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process
        return True
    return True


def clean_stale(root: Path, now: float | None = None) -> list[Path]:
    """Remove temporary (``.tmp-*``) and half-deleted (``.trash-*``) folders whose process
    is gone or that are older than :data:`STALE_AFTER_S`. Returns what was removed."""
    if not root.is_dir():
        return []
    now = time.time() if now is None else now
    removed = []
    for p in root.iterdir():
        if not p.name.startswith((".tmp-", ".trash-")):
            continue
        try:
            age = now - p.stat().st_mtime
        except OSError:
            continue
        pid = _pid_of(p.name)
        if age > STALE_AFTER_S or (pid is not None and not _pid_alive(pid)):
            shutil.rmtree(p, ignore_errors=True)
            removed.append(p)
    return removed


def _pid_of(name: str) -> int | None:
    # .tmp-<entry>-<pid>-<random> / .trash-<entry>-<pid>-<thread>: the pid is the
    # second-to-last dash-separated part.
    parts = name.rsplit("-", 2)
    if len(parts) == 3 and parts[1].isdigit():
        return int(parts[1])
    return None


def install(tmp: Path, folder: Path, is_sound) -> None:  # noqa: ANN001 - (Path) -> bool
    """Rename the finished build ``tmp`` into place as ``folder``.

    When another process finished the same entry first (the rename finds a non-empty folder)
    and that entry is sound, theirs is kept and ours dropped: the same key means the same
    content, so that is success, not an error. A damaged leftover is replaced.
    """
    for _ in range(3):
        try:
            os.replace(tmp, folder)
            return
        except OSError:
            if not folder.exists():
                continue  # it went away meanwhile (evicted): try again
            if is_sound(folder):
                shutil.rmtree(tmp, ignore_errors=True)
                return
            remove(folder)
    os.replace(tmp, folder)  # a last try; its error (if any) is the true cause
