"""One gate for heavy work (feature extraction, probe fitting, UMAP) across all sessions.

Streamlit runs every session's script in its own thread of one process; without a gate, a
handful of users starting probes at once would each load features into memory together.
The gate is a process-wide semaphore sized by ``config.limits().heavy_jobs``; a session that
has to wait is told how many jobs are ahead of it.

Each job runs under a :class:`probing.budget.Budget`: a wall-clock and memory budget
(``config.limits().job_seconds`` / ``job_memory_bytes``) and the session's liveness. A job
over budget, or whose page was closed, is stopped at once and frees the slot; the page
shows why (a :class:`~probing.errors.JobStoppedError`). A session closed while waiting
gives up its place.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator

import streamlit as st

from probing.budget import Budget, BudgetExceeded
from probing.config import limits
from probing.errors import JobStoppedError

WAIT_S = 600.0  # the longest a session waits for a slot


@st.cache_resource(show_spinner=False)
def _gate() -> tuple[threading.BoundedSemaphore, list[int]]:
    # cache_resource: one semaphore per server process, shared by every session.
    return threading.BoundedSemaphore(limits().heavy_jobs), [0]


def session_alive() -> Callable[[], bool]:
    """A check that this script run's browser session is still connected (always True
    outside a running server, e.g. under ``AppTest``)."""
    from streamlit.runtime import Runtime
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    if ctx is None or not Runtime.exists():
        return lambda: True
    runtime, session_id = Runtime.instance(), ctx.session_id
    return lambda: runtime.is_active_session(session_id)


class ServerBusyError(JobStoppedError):
    """No heavy-job slot came free within :data:`WAIT_S`."""


def _acquire(sem: threading.BoundedSemaphore, alive: Callable[[], bool]) -> bool:
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        if sem.acquire(timeout=1.0):
            return True
        if not alive():
            raise JobStoppedError("The page was closed while waiting for a free slot.")
    return False


@contextlib.contextmanager
def slot(
    alive: Callable[[], bool],
    waiting: Callable[[int], contextlib.AbstractContextManager] | None = None,
) -> Iterator[None]:
    """Hold one of the server's heavy-job slots for the body.

    When every slot is taken, waits up to :data:`WAIT_S` inside ``waiting(jobs ahead)`` (a
    spinner, a progress note). Raises JobStoppedError when the page is closed meanwhile and
    ServerBusyError when no slot comes free in time.
    """
    sem, queue = _gate()
    acquired = sem.acquire(blocking=False)
    if not acquired:
        queue[0] += 1
        try:
            with waiting(queue[0]) if waiting else contextlib.nullcontext():
                acquired = _acquire(sem, alive)
        finally:
            queue[0] -= 1
    if not acquired:
        raise ServerBusyError("The server is busy; please try again in a few minutes.")
    try:
        yield
    finally:
        sem.release()


@contextlib.contextmanager
def heavy_job(
    label: str, *, seconds: float | None = None, memory_bytes: int | None = None
) -> Iterator[Budget]:
    """Run the body when a heavy-job slot is free, under the job budget (see module doc);
    show a waiting message meanwhile. ``seconds`` / ``memory_bytes`` override the budget."""
    alive = session_alive()
    held = contextlib.ExitStack()
    try:
        held.enter_context(
            slot(
                alive,
                lambda n: st.spinner(f"{label}: waiting for {n} other job(s) on this server…"),
            )
        )
    except ServerBusyError as exc:
        st.error(str(exc))
        st.stop()
    lim = limits()
    budget = Budget(
        lim.job_seconds if seconds is None else seconds,
        lim.job_memory_bytes if memory_bytes is None else memory_bytes,
        what=label,
        alive=alive,
    )
    with held:
        try:
            with budget:
                yield budget
        except BudgetExceeded:  # fired just as the body ended, past the budget's own handler
            raise JobStoppedError(budget.reason or f"{label} was stopped.") from None
