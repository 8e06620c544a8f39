"""A first-come-first-served gate for heavy jobs, with the queue's length and expected wait.

A semaphore polled by its waiters let a newcomer overtake a job that had waited for
minutes (whoever polled first when the slot came free got it). Here each waiter holds a
ticket; a slot goes to the oldest ticket, always. Also kept: what runs now and since when,
how long each kind of job took, and the estimate a job came with (the Probing page's cost
model), so a waiting page can say "queued behind 2 jobs, about 40 s" and keep saying it as
the jobs ahead go on.

No Streamlit here: :mod:`ui.jobs` holds one gate per server process.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections import deque
from collections.abc import Callable

DEFAULT_JOB_S = 30.0  # assumed length of a kind of job never seen finishing
REFRESH_S = 5.0  # a waiting page's estimate is said again this often (the jobs ahead go on)


class Gate:
    """``capacity`` slots served in arrival order (see the module doc)."""

    def __init__(self, capacity: int) -> None:
        self.capacity = max(1, int(capacity))
        self._cond = threading.Condition()
        self._queue: deque[tuple[int, str]] = deque()  # (ticket, label), oldest first
        self._running: dict[int, tuple[str, float]] = {}  # ticket -> (label, started)
        self._tickets = itertools.count()
        self._took: dict[str, float] = {}  # label -> seconds of the last finished job
        self._estimate: dict[int, float] = {}  # ticket -> seconds its caller expected

    def acquire(
        self,
        label: str = "job",
        *,
        timeout: float | None = None,
        alive: Callable[[], bool] = lambda: True,
        waiting: Callable[[int, float], None] | None = None,
        poll_s: float = 1.0,
        expected_s: float | None = None,
    ) -> int | None:
        """Wait for a slot in arrival order; return its ticket, or None after ``timeout``.

        ``alive()`` is asked every ``poll_s``: False gives up the place (returns None, and
        the caller says why). ``waiting(jobs ahead, expected wait s)`` is called when the
        queue in front changes, and every :data:`REFRESH_S` while it waits. ``expected_s``:
        how long this job is expected to take (the caller's estimate), for those behind it.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            ticket = next(self._tickets)
            self._queue.append((ticket, label))
            if expected_s is not None and expected_s > 0:
                self._estimate[ticket] = float(expected_s)
            shown, shown_at = None, 0.0
            try:
                while not (self._queue[0][0] == ticket and len(self._running) < self.capacity):
                    ahead = self._ahead(ticket)
                    stale = time.monotonic() - shown_at >= REFRESH_S
                    if waiting is not None and (ahead != shown or stale):
                        shown, shown_at = ahead, time.monotonic()
                        expected = self._expected_wait(ticket)
                        self._cond.release()  # the page's update must not hold the gate
                        try:
                            waiting(ahead, expected)
                        finally:
                            self._cond.acquire()
                        continue  # the queue may have moved meanwhile
                    left = None if deadline is None else deadline - time.monotonic()
                    if left is not None and left <= 0:
                        return None
                    self._cond.wait(poll_s if left is None else min(poll_s, left))
                    if not alive():
                        return None
                self._queue.popleft()
                self._running[ticket] = (label, time.monotonic())
                return ticket
            finally:
                if ticket not in self._running:
                    self._queue.remove((ticket, label))
                    self._estimate.pop(ticket, None)
                self._cond.notify_all()

    def release(self, ticket: int) -> None:
        """Free the slot of ``ticket``; the oldest waiter gets it."""
        with self._cond:
            label, started = self._running.pop(ticket)
            self._estimate.pop(ticket, None)
            self._took[label] = time.monotonic() - started
            self._cond.notify_all()

    def _ahead(self, ticket: int) -> int:
        """Jobs that run or wait before ``ticket``."""
        return len(self._running) + next(i for i, (t, _) in enumerate(self._queue) if t == ticket)

    def _length(self, ticket: int, label: str) -> float:
        """How long job ``ticket`` is expected to take: its caller's estimate, else how long
        its kind took last time, else :data:`DEFAULT_JOB_S`."""
        return self._estimate.get(ticket) or self._took.get(label, DEFAULT_JOB_S)

    def _expected_wait(self, ticket: int) -> float:
        """Seconds until ``ticket`` gets a slot: the slots' queue played forward. Each slot
        is free once its running job has what it has left; the jobs queued before ``ticket``
        then take the first free slot in turn, each for its expected length.

        A running job past its expected length has, by the best guess there is, about as long
        again to go as it has run (not the 1 s a countdown would say: the first job on a fresh
        server, a probe run of 129 s against the 30 s default, was announced 4x short)."""
        now = time.monotonic()
        free = [0.0] * (self.capacity - len(self._running))
        for t, (label, started) in self._running.items():
            ran = now - started
            length = self._length(t, label)
            free.append(max(1.0, length - ran if ran < length else ran))
        for t, label in self._queue:
            if t == ticket:
                break
            free.sort()
            free[0] += self._length(t, label)
        return min(free) if free else 0.0

    def status(self) -> tuple[int, int]:
        """(jobs running, jobs waiting)."""
        with self._cond:
            return len(self._running), len(self._queue)
