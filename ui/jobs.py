"""One gate for heavy work (feature extraction, probe fitting, UMAP) across all sessions.

Streamlit runs every session's script in its own thread of one process; without a gate, a
handful of users starting probes at once would each load features into memory together.
The gate (:class:`ui.gate.Gate`, sized by ``config.limits().heavy_jobs``) serves waiting
jobs in arrival order and tells a waiting page "queued behind N jobs, about T s". Light
interactions (typing a sentence, changing a layer) never pass through it.

The heavy work itself runs in a worker process (:func:`offload`, :mod:`ui.worker`): a job
in a thread of the server held the GIL through long pure-Python stretches and stalled every
session's light clicks at once. What stays in the server's thread (relaying progress, the
jobs not yet moved) runs at a lower CPU priority.

Each job runs under a :class:`probing.budget.Budget`: a wall-clock and memory budget
(``config.limits().job_seconds`` / ``job_memory_bytes``) and the session's liveness. A job
over budget, or whose page was closed, is stopped at once and frees the slot; the page
shows why (a :class:`~probing.errors.JobStoppedError`). A session closed while waiting
gives up its place.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import streamlit as st

from probing.budget import Budget, BudgetExceeded
from probing.config import limits
from probing.errors import JobStoppedError
from ui import worker
from ui.gate import Gate

T = TypeVar("T")

WAIT_S = 600.0  # the longest a session waits for a slot
HEAVY_NICE = 10  # a heavy job's thread runs this much nicer than the server (19 at most)


@st.cache_resource(show_spinner=False)
def _gate() -> Gate:
    # cache_resource: one gate per server process, shared by every session.
    return Gate(limits().heavy_jobs)


@st.cache_resource(show_spinner=False)
def _pool() -> worker.Pool:
    # cache_resource: one pool of worker processes per server, as many as heavy-job slots.
    return worker.Pool(lambda: limits().heavy_jobs)


_current = threading.local()  # the budget of the heavy job this thread runs, if any


@contextlib.contextmanager
def job_context(budget: Budget) -> Iterator[Budget]:
    """Mark the body as this thread's heavy job under ``budget``: :func:`offload` in it runs
    its function in a worker process under the same budget."""
    before = getattr(_current, "budget", None)
    _current.budget = budget
    try:
        yield budget
    finally:
        _current.budget = before


def offload(
    fn: Callable[..., T], *args: Any, progress: Callable[..., None] | None = None, **kwargs: Any
) -> T:
    """``fn(*args, **kwargs)`` in a worker process when called inside a heavy job
    (:func:`heavy_job`, a background run), else here. ``fn`` is a module-level function and
    the arguments picklable (model *names*, not models); ``progress``, when given, is passed
    on to ``fn`` and its calls come back to this thread. Errors come back typed."""
    budget = getattr(_current, "budget", None)
    if budget is None or not worker.enabled():
        return fn(*args, **kwargs) if progress is None else fn(*args, progress=progress, **kwargs)
    return _pool().run(fn, args, kwargs, budget=budget, progress=progress)


_prestart_asked = threading.Event()  # app.py calls this on every script run: once is enough


def prestart_worker() -> None:
    """In a running server with workers on, start the first heavy-job worker now (once),
    while nobody waits for it. Not under ``AppTest`` or scripts: no server, no worker."""
    if _prestart_asked.is_set():
        return
    from streamlit.runtime import Runtime

    if worker.enabled() and Runtime.exists():
        _prestart_asked.set()
        _pool().prestart()


def worker_pids() -> list[int]:
    """The heavy-job worker processes of this server now."""
    return _pool().pids()


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


def queued_text(label: str, ahead: int, seconds: float) -> str:
    """``"Probing: queued behind 2 jobs, about 40 s…"``."""
    wait = f"{seconds:.0f} s" if seconds < 90 else f"{seconds / 60:.0f} min"
    return f"{label}: queued behind {ahead} job{'s' if ahead != 1 else ''}, about {wait}…"


@contextlib.contextmanager
def lower_priority() -> Iterator[None]:
    """The body at a lower CPU priority (Linux: a thread's nice value is its own, and the
    threads torch starts from it inherit it), so that light clicks of other sessions, which
    never queue at the gate, go first on the cores. Restored after where the system allows
    (raising priority again needs privilege; the threads that run jobs end with them)."""
    tid = threading.get_native_id()
    try:
        before = os.getpriority(os.PRIO_PROCESS, tid)
        os.setpriority(os.PRIO_PROCESS, tid, min(19, before + HEAVY_NICE))
    except (AttributeError, OSError):
        before = None
    try:
        yield
    finally:
        if before is not None:
            with contextlib.suppress(OSError):
                os.setpriority(os.PRIO_PROCESS, tid, before)


@contextlib.contextmanager
def slot(
    alive: Callable[[], bool],
    waiting: Callable[[int, float], None] | None = None,
    label: str = "job",
    expected_s: float | None = None,
) -> Iterator[None]:
    """Hold one of the server's heavy-job slots for the body, served in arrival order.

    When every slot is taken, waits up to :data:`WAIT_S`, calling ``waiting(jobs ahead,
    expected wait s)`` whenever the queue in front moves (and every few seconds). Raises
    JobStoppedError when the page is closed meanwhile and ServerBusyError when no slot comes
    free in time. The body runs at a lower CPU priority (:func:`lower_priority`).
    ``expected_s``: how long the body is expected to take, for the jobs queued behind it.
    """
    gate = _gate()
    ticket = gate.acquire(
        label, timeout=WAIT_S, alive=alive, waiting=waiting, expected_s=expected_s
    )
    if ticket is None:
        if not alive():
            raise JobStoppedError("The page was closed while waiting for a free slot.")
        raise ServerBusyError("The server is busy; please try again in a few minutes.")
    try:
        with lower_priority():
            yield
    finally:
        gate.release(ticket)


@contextlib.contextmanager
def heavy_job(
    label: str,
    *,
    seconds: float | None = None,
    memory_bytes: int | None = None,
    expected_s: float | None = None,
) -> Iterator[Budget]:
    """Run the body when a heavy-job slot is free, under the job budget (see module doc);
    show a waiting message meanwhile. ``seconds`` / ``memory_bytes`` override the budget;
    ``expected_s``: the body's estimated length, told to the jobs queued behind it."""
    alive = session_alive()
    held = contextlib.ExitStack()
    note = st.empty()
    try:
        held.enter_context(
            slot(
                alive,
                lambda n, t: note.info(queued_text(label, n, t), icon="⏳"),
                label,
                expected_s,
            )
        )
    except ServerBusyError as exc:
        note.empty()
        st.error(str(exc))
        st.stop()
    note.empty()
    lim = limits()
    budget = Budget(
        lim.job_seconds if seconds is None else seconds,
        lim.job_memory_bytes if memory_bytes is None else memory_bytes,
        what=label,
        alive=alive,
    )
    with held:
        try:
            with budget, job_context(budget):
                yield budget
        except BudgetExceeded:  # fired just as the body ended, past the budget's own handler
            raise JobStoppedError(budget.reason or f"{label} was stopped.") from None
