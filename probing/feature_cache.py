"""Housekeeping of the on-disk feature cache: size bound, LRU eviction, stale temp folders.

Entries are the folders :mod:`probing.features` writes under ``features_dir()``. Each use of
an entry touches its ``manifest.json`` (the mtime is the "last used" time), so eviction drops
the least recently used entries first until the cache is under its bound
(``config.limits().feature_cache_bytes``). Eviction renames an entry away before deleting
it; a process that still has its arrays memory-mapped keeps reading them (POSIX keeps an
unlinked file's pages until the last map closes).

Temporary build folders are named ``.tmp-<entry>-<pid>-<random>``: one whose process is gone
(a killed extraction) or that is older than a day is removed at the next build. A build
normally goes into ``.partial-<entry>`` instead (:class:`BuildJournal`): a cancelled or
killed one is resumed from its last recorded batch by the next build of the same entry.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

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
        if not p.name.startswith((".tmp-", ".trash-", PARTIAL)) or p.suffix == ".lock":
            continue
        try:
            age = now - p.stat().st_mtime
        except OSError:
            continue
        if p.name.startswith(PARTIAL):  # kept for a resume, unless nobody came back in a day
            if age > STALE_AFTER_S:
                shutil.rmtree(p, ignore_errors=True)
                removed.append(p)
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


def install(tmp: Path, folder: Path, is_sound: Callable[[Path], bool]) -> None:
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


# -- builds that survive a cancel or a kill -----------------------------------------------


PARTIAL = ".partial-"  # a build in progress (or stopped) that the next build resumes
CHECKPOINT_S = 2.0  # the encoded batches are flushed and recorded at most this often


class BuildJournal:
    """Where a build of entry ``folder`` stands, kept beside the cache so that a cancelled or
    killed extraction resumes at its last recorded batch instead of starting over.

    The build writes its memory-mapped arrays in ``.partial-<entry>/``; after every few
    seconds of batches they are flushed and ``progress.json`` records how many batches of
    which plan are on disk (flushed first, recorded second: a record never claims unwritten
    rows). One process at a time holds the build (an ``flock`` on ``.partial-<entry>.lock``);
    another process building the same entry meanwhile uses a private temporary folder.
    """

    def __init__(self, folder: Path, key: str) -> None:
        self.folder, self.key = folder, key
        self.path = folder.with_name(PARTIAL + folder.name)
        self._lock_file = None
        self._arrays: list = []
        self._plan = ""
        self._last = time.monotonic()

    def acquire(self) -> bool:
        """Hold the build (False: another process is building this entry now)."""
        import fcntl

        lock = open(self.path.with_name(self.path.name + ".lock"), "a+b")  # noqa: SIM115
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            lock.close()
            return False
        self._lock_file = lock
        self.path.mkdir(parents=True, exist_ok=True)
        return True

    def release(self, finished: bool = False) -> None:
        """Let go of the build (``finished``: the entry is installed, the lock file goes)."""
        if self._lock_file is not None:
            if finished:
                Path(self._lock_file.name).unlink(missing_ok=True)
            self._lock_file.close()
            self._lock_file = None

    def arrays(self, arrays: list) -> None:
        """The memory maps the build writes (flushed at each checkpoint)."""
        self._arrays = arrays

    def _state(self) -> dict:
        import json

        try:
            return json.loads((self.path / "progress.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}

    def has_arrays(self) -> bool:
        """A previous build of this key left its arrays here."""
        return self._state().get("key") == self.key

    def start(self, plan: str) -> int:
        """Batches already on disk for ``plan`` (a digest of the batch order), 0 when the
        previous build used another plan or none was recorded."""
        self._plan = plan
        state = self._state()
        if state.get("key") != self.key or state.get("plan") != plan:
            self._write(0)
            return 0
        return int(state.get("batches", 0))

    def done(self, batches: int, force: bool = False) -> None:
        """``batches`` batches are encoded: flush and record them (every CHECKPOINT_S)."""
        if not force and time.monotonic() - self._last < CHECKPOINT_S:
            return
        for a in self._arrays:
            a.flush()
        self._write(batches)
        self._last = time.monotonic()

    def _write(self, batches: int) -> None:
        import json

        from probing.io import atomic_write_text

        atomic_write_text(
            self.path / "progress.json",
            json.dumps({"key": self.key, "plan": self._plan, "batches": int(batches)}),
        )


def plan_digest(batches: Sequence[np.ndarray]) -> str:  # index arrays
    """A digest of a build's batch order (a resumed build must follow the same one)."""
    import hashlib

    h = hashlib.sha256()
    for idx in batches:
        h.update(len(idx).to_bytes(4, "little"))
        h.update(bytes(memoryview(idx.astype("int64"))))
    return h.hexdigest()


# -- disk space: checked before a build, reserved before writing (issue 32) ----------------

SPACE_MARGIN = 1.05  # words, labels and the manifest come on top of the two arrays


def _mb(n_bytes: float) -> str:
    return f"{n_bytes / 1024**2:,.1f} MB"


def check_free_space(root: Path, need_bytes: int) -> None:
    """Raise DiskFullError unless the file system of ``root`` has ``need_bytes`` free (the
    size of a build is known before it starts: words x layers x dims)."""
    from probing.errors import DiskFullError

    free = shutil.disk_usage(root).free
    if need_bytes * SPACE_MARGIN > free:
        raise DiskFullError(
            f"The feature cache needs about {_mb(need_bytes * SPACE_MARGIN)} for this extraction "
            f"and its disk has {_mb(free)} free. Free some space (or point CONTEXTLENS_CACHE_DIR "
            "at a larger disk), or extract fewer sentences."
        )


def is_disk_full(exc: BaseException) -> bool:
    """True for an OSError that says the disk (or the user's quota) is full."""
    import errno

    return isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT)


def reserve(path: Path) -> None:
    """Allocate every block of the (sparse) file ``path`` now, so that a full disk is an
    ENOSPC here, not a SIGBUS later when a memory-mapped write finds no block to land on.

    Raises:
        DiskFullError: the disk has no room for the whole file.
    """
    import errno

    from probing.errors import DiskFullError

    size = path.stat().st_size
    fd = os.open(path, os.O_RDWR)
    try:
        os.posix_fallocate(fd, 0, size)
    except OSError as exc:
        if is_disk_full(exc):
            raise DiskFullError(
                f"The feature cache's disk has no room for {_mb(size)} more. Free some space "
                "(or point CONTEXTLENS_CACHE_DIR at a larger disk), or extract fewer sentences."
            ) from None
        if exc.errno not in (errno.EOPNOTSUPP, errno.EINVAL):  # no fallocate on this disk
            raise
    finally:
        os.close(fd)
