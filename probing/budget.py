"""A wall-clock and memory budget for one heavy job running in a thread.

A watchdog thread looks at the job every ``poll_s`` seconds; when the job has run longer
than ``seconds``, the process's resident memory has grown by more than ``memory_bytes``
since the job started, or ``alive()`` says nobody is waiting for the result any more (the
page was closed), it raises :class:`BudgetExceeded` *inside the job's thread*
(``PyThreadState_SetAsyncExc``). That lands at the job's next Python bytecode: between two
batches, two optimiser steps, two probe fits — no cooperation from the library needed.
``BudgetExceeded`` derives from ``BaseException`` so that no ``except Exception`` on the way
swallows it; :meth:`Budget.__exit__` turns it into a :class:`~probing.errors.JobStoppedError`
with the reason.

    with Budget(seconds=300, memory_bytes=1 << 30, what="Probing"):
        probe_layers(...)
"""

from __future__ import annotations

import ctypes
import os
import threading
import time
from collections.abc import Callable
from types import TracebackType

from probing.errors import JobStoppedError


class BudgetExceeded(BaseException):  # a signal, like KeyboardInterrupt
    """Raised inside a job's thread by its watchdog; turned into ``JobStoppedError``."""


def rss_bytes(pid: int | None = None) -> int:
    """Resident memory of this process (or of process ``pid``) now; 0 where ``/proc`` is not
    available or the process is gone."""
    try:
        with open(f"/proc/{pid or 'self'}/statm", encoding="ascii") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def memory_message(what: str, memory_bytes: int) -> str:
    """The page's text for a job stopped at its memory budget."""
    return (
        f"{what} was stopped: it needed more than {memory_bytes / 2**20:,.0f} MB of memory, the "
        "most one job may use on this server. Ask for less (fewer sentences, layers or models)."
    )


class Budget:
    """Context manager: the body runs under a wall-clock and memory budget (see module doc).

    Attributes after exit: ``reason`` (None, or why the job was stopped), ``elapsed_s``,
    ``peak_growth_bytes`` (the largest RSS growth the watchdog saw).
    """

    def __init__(
        self,
        seconds: float,
        memory_bytes: int,
        *,
        what: str = "The job",
        alive: Callable[[], bool] | None = None,
        poll_s: float = 0.2,
    ) -> None:
        self.seconds, self.memory_bytes, self.what = float(seconds), int(memory_bytes), what
        self.alive, self.poll_s = alive, poll_s
        self.reason: str | None = None
        self.elapsed_s = 0.0
        self.peak_growth_bytes = 0
        self._lock = threading.Lock()
        self._done = threading.Event()
        self._active = False
        self._fired = False

    def __enter__(self) -> Budget:
        self._thread_id = threading.get_ident()
        self._t0 = time.monotonic()
        self._rss0 = rss_bytes()
        self._active = True
        self._watch = threading.Thread(target=self._watchdog, name="job-budget", daemon=True)
        self._watch.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool:
        with self._lock:
            self._active = False
            if self._fired and exc_type is not BudgetExceeded:
                # Fired as the body finished: the exception is still pending; cancel it.
                ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(self._thread_id), None)
        self._done.set()
        self.elapsed_s = time.monotonic() - self._t0
        if exc_type is BudgetExceeded:
            raise JobStoppedError(self.reason or f"{self.what} was stopped.") from None
        return False

    def over(self) -> str | None:
        """Why the job must stop now, or None."""
        elapsed = time.monotonic() - self._t0
        if elapsed > self.seconds:
            return (
                f"{self.what} was stopped after {elapsed:.0f} s: jobs on this server may run at "
                f"most {self.seconds:.0f} s. Ask for less (fewer sentences, layers or models)."
            )
        growth = rss_bytes() - self._rss0 if self._rss0 else 0
        self.peak_growth_bytes = max(self.peak_growth_bytes, growth)
        if growth > self.memory_bytes:
            return memory_message(self.what, self.memory_bytes)
        if self.alive is not None and not self.alive():
            return f"{self.what} was stopped because its page was closed."
        return None

    def _watchdog(self) -> None:
        while not self._done.wait(self.poll_s):
            reason = self.over()
            if reason is None:
                continue
            with self._lock:
                if not self._active:
                    return
                self.reason, self._fired = reason, True
                ctypes.pythonapi.PyThreadState_SetAsyncExc(
                    ctypes.c_ulong(self._thread_id), ctypes.py_object(BudgetExceeded)
                )
            return
