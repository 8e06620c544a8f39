"""Long runs (probe fits) that go on when the user changes page, with their progress on return.

A run used to live inside the page's script run, and Streamlit stops a script when the user
goes to another page: a started probe was silently cancelled. Here a run is a daemon thread
in a process-wide registry, keyed per session; the page shows its progress in a fragment
that refreshes itself every second, and reruns the page once the run has ended.

Runs share :mod:`ui.jobs`'s heavy-job gate (one semaphore per server process) and its
budget (:class:`probing.budget.Budget`: time, memory, the browser session still open), taken
by the run's thread itself, so a background run counts against the server's capacity and
limits like any other heavy job. The run's heavy steps go to a worker process
(:func:`ui.jobs.offload`); the thread relays their progress.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import streamlit as st

from probing.budget import Budget
from probing.config import limits
from ui import jobs, worker
from ui.common import page_errors

Report = Callable[[float, str], None]  # (fraction done 0..1, text)

RESUMING = (
    "{label}: its worker process ended (stopped from outside, or the server ran short of "
    "memory); resuming in a fresh one from what it had saved…"
)


@dataclass
class Run:
    """One background run: its progress events, its result or error."""

    label: str
    started: float = field(default_factory=time.time)
    fraction: float = 0.0
    text: str = ""
    events: queue.Queue = field(default_factory=queue.Queue)
    done: threading.Event = field(default_factory=threading.Event)
    result: Any = None
    error: BaseException | None = None
    thread: threading.Thread | None = None

    def report(self, fraction: float, text: str) -> None:
        self.fraction, self.text = min(1.0, max(0.0, fraction)), text
        self.events.put((self.fraction, text))


class ProgressSink:
    """Looks like ``st.progress``'s element to code that reports into one (``.progress``)."""

    def __init__(self, run: Run) -> None:
        self._run = run

    def progress(self, value: float, text: str = "") -> None:
        self._run.report(value, text)


@st.cache_resource(show_spinner=False)
def _runs() -> dict[str, Run]:
    # cache_resource: one registry per server process, shared by every session.
    return {}


def session_key(name: str) -> str:
    """A key for this session's run called ``name`` (stable across its page changes)."""
    import uuid

    return f"{st.session_state.setdefault('_background_id', uuid.uuid4().hex)}:{name}"


def start(
    key: str,
    label: str,
    work: Callable[[ProgressSink], Any],
    *,
    detached: bool = False,
    shared_key: str | None = None,
    expected_s: float | None = None,
) -> Run:
    """Run ``work(sink)`` in a daemon thread once a heavy-job slot is free.

    ``detached``: the run goes on when its tab is closed (it stays under the job's time and
    memory budget). ``shared_key``: the run is also found under this key, which any session
    can compute from the run's settings (:func:`shared_key`), so a page opened later picks
    it up. ``expected_s``: the run's estimated length, which jobs queued behind it are told.
    """
    # The job's budget (time, memory, and, unless detached, the browser session still open:
    # a change of page keeps the session, a closed tab ends it) as for any heavy job.
    alive = (lambda: True) if detached else jobs.session_alive()
    lim = limits()
    run = Run(label)

    def target() -> None:
        def waiting(n: int, seconds: float) -> None:
            run.report(0.0, jobs.queued_text(label, n, seconds))

        try:
            with (
                jobs.slot(alive, waiting, label, expected_s),
                Budget(lim.job_seconds, lim.job_memory_bytes, what=label, alive=alive) as budget,
                jobs.job_context(budget),
            ):
                try:
                    run.result = work(ProgressSink(run))
                except worker.WorkerDied:
                    # Killed from outside (not by its budget: that is a JobStoppedError of its
                    # own): once more in a fresh worker, under the same budget, from what the
                    # first one saved (extracted features), and the page says so.
                    run.report(run.fraction, RESUMING.format(label=label))
                    run.result = work(ProgressSink(run))
        except BaseException as exc:  # handed to the page, which shows it
            run.error = exc
        finally:
            run.done.set()

    run.thread = threading.Thread(target=target, name=f"contextlens-{label}", daemon=True)
    _runs()[key] = run
    if shared_key is not None:
        _runs()[shared_key] = run
    run.thread.start()
    return run


def shared_key(name: str, settings: object) -> str:
    """A key every session computes alike for a run of ``settings`` (its repr)."""
    import hashlib

    return f"shared:{name}:{hashlib.sha256(repr(settings).encode()).hexdigest()[:16]}"


def get(key: str) -> Run | None:
    """The run under ``key`` (running or ended and not yet collected), or None."""
    return _runs().get(key)


def collect(key: str) -> Run | None:
    """Remove and return an ended run (None while it is still running or when there is none);
    its other key (shared or session) goes with it."""
    runs = _runs()
    run = runs.get(key)
    if run is None or not run.done.is_set():
        return None
    for k in [k for k, r in runs.items() if r is run]:
        runs.pop(k, None)
    return run


def _drain(run: Run) -> list[tuple[float, str]]:
    """Queued progress events, thinned to one per stage (the text before its counts) plus
    the latest, so that a page coming back to a long run does not replay thousands."""
    events: list[tuple[float, str]] = []
    while True:
        try:
            events.append(run.events.get_nowait())
        except queue.Empty:
            break
    shown, last_stage = [], None
    for i, (fraction, text) in enumerate(events):
        stage = text.rsplit(",", 1)[0]
        if stage != last_stage or i == len(events) - 1:
            shown.append((fraction, text))
            last_stage = stage
    return shown


def show_progress(key: str, note: str = "") -> None:
    """The run's progress bar, refreshed every second; reruns the page when the run ends."""

    @st.fragment(run_every=1.0)
    def progress() -> None:
        # A fragment's rerun runs without its page's guard: its own one.
        with page_errors("The progress display"):
            show(get(key))

    def show(run: Run | None) -> None:
        if run is None:
            return
        if note:
            st.caption(note)
        # Redrawn every second with the time so far, so a long stage visibly goes on.
        since = f" · {elapsed(time.time() - run.started)}"
        bar = st.progress(run.fraction, text=(run.text or f"{run.label}: starting…") + since)
        for fraction, text in _drain(run):
            bar.progress(fraction, text=text + since)
        if run.done.is_set():
            st.rerun()

    progress()


def elapsed(seconds: float) -> str:
    """``"12 s so far"``, ``"3 min 05 s so far"``."""
    m, sec = divmod(int(seconds), 60)
    return f"{m} min {sec:02d} s so far" if m else f"{sec} s so far"
