"""A first-come-first-served gate for heavy jobs, with the queue's length and expected wait.

A semaphore polled by its waiters let a newcomer overtake a job that had waited for
minutes (whoever polled first when the slot came free got it). Here each waiter holds a
ticket; a slot goes to the oldest ticket, always. Also kept: what runs now and since when,
and how long each kind of job took, so a waiting page can say "queued behind 2 jobs,
about 40 s".

No Streamlit here: :mod:`ui.jobs` holds one gate per server process.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections import deque
from collections.abc import Callable

DEFAULT_JOB_S = 30.0  # assumed length of a kind of job never seen finishing


class Gate:
    """``capacity`` slots served in arrival order (see the module doc)."""

    def __init__(self, capacity: int) -> None:
        self.capacity = max(1, int(capacity))
        self._cond = threading.Condition()
        self._queue: deque[tuple[int, str]] = deque()  # (ticket, label), oldest first
        self._running: dict[int, tuple[str, float]] = {}  # ticket -> (label, started)
        self._tickets = itertools.count()
        self._took: dict[str, float] = {}  # label -> seconds of the last finished job

    def acquire(
        self,
        label: str = "job",
        *,
        timeout: float | None = None,
        alive: Callable[[], bool] = lambda: True,
        waiting: Callable[[int, float], None] | None = None,
        poll_s: float = 1.0,
    ) -> int | None:
        """Wait for a slot in arrival order; return its ticket, or None after ``timeout``.

        ``alive()`` is asked every ``poll_s``: False gives up the place (returns None, and
        the caller says why). ``waiting(jobs ahead, expected wait s)`` is called when the
        queue in front changes.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            ticket = next(self._tickets)
            self._queue.append((ticket, label))
            shown = None
            try:
                while not (self._queue[0][0] == ticket and len(self._running) < self.capacity):
                    ahead = self._ahead(ticket)
                    if waiting is not None and ahead != shown:
                        shown, expected = ahead, self._expected_wait(ticket)
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
                self._cond.notify_all()

    def release(self, ticket: int) -> None:
        """Free the slot of ``ticket``; the oldest waiter gets it."""
        with self._cond:
            label, started = self._running.pop(ticket)
            self._took[label] = time.monotonic() - started
            self._cond.notify_all()

    def _ahead(self, ticket: int) -> int:
        """Jobs that run or wait before ``ticket``."""
        return len(self._running) + next(i for i, (t, _) in enumerate(self._queue) if t == ticket)

    def _expected_wait(self, ticket: int) -> float:
        """Seconds until ``ticket`` gets a slot: what the running jobs have left plus the
        jobs queued before it, each as long as its kind took last time, spread over the
        slots."""
        now = time.monotonic()
        left = [
            max(1.0, self._took.get(label, DEFAULT_JOB_S) - (now - started))
            for label, started in self._running.values()
        ]
        for t, label in self._queue:
            if t == ticket:
                break
            left.append(self._took.get(label, DEFAULT_JOB_S))
        return sum(left) / self.capacity

    def status(self) -> tuple[int, int]:
        """(jobs running, jobs waiting)."""
        with self._cond:
            return len(self._running), len(self._queue)
