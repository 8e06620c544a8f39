"""Heavy jobs in worker processes, so that they never hold the server's GIL.

Streamlit serves every session from threads of one process. A heavy job run in one of those
threads (SemCor and CoNLL-U parsing, feature extraction, probe fits, UMAP) holds the GIL for
long pure-Python stretches, and at a lower OS priority it is also preempted while holding it:
every light click of every session then waits (measured: 7 of 45 Fill Mask clicks stalled
~50 s together, docs/benchmarks.md). Here the work runs in long-lived worker processes
(``spawn``: no fork of a threaded server), one per heavy-job slot, at a lower OS priority and
with one torch thread; the server's thread only relays progress and receives the result.

A job is a module-level function and picklable arguments (:func:`Pool.run`); the worker
calls it with a ``progress`` callable when the caller gave one, whose calls come back to the
caller's callback in the server (progress bars work as before). The result, or the error
(typed library errors stay typed), comes back the same way. The job's budget
(:class:`probing.budget.Budget`) holds for the worker: its resident memory growth is read
from ``/proc/<pid>`` and a worker over budget, or whose job is cancelled (page closed, time
budget, a rerun), is killed, which frees its memory at once; a fresh one takes its place.

No Streamlit here (the worker imports this module); :mod:`ui.jobs` holds one pool per server.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import signal
import socket
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterator
from multiprocessing.connection import Connection
from typing import Any

from probing.budget import Budget, memory_message, rss_bytes
from probing.config import REPO_ROOT
from probing.errors import ContextLensError, JobStoppedError

WORKER_NICE = 10  # a worker runs this much nicer than the server (light clicks go first)


def _target_nice() -> int:
    """The server's own niceness (its main thread's) plus :func:`worker_nice`, at most 19."""
    try:
        base = os.getpriority(os.PRIO_PROCESS, os.getpid())
    except (OSError, AttributeError):
        base = 0
    return min(19, base + worker_nice())


def worker_nice() -> int:
    """How much nicer than the server a worker runs: ``CONTEXTLENS_WORKER_NICE`` or 10."""
    try:
        return max(0, min(19, int(os.environ.get("CONTEXTLENS_WORKER_NICE", WORKER_NICE))))
    except ValueError:
        return WORKER_NICE


POLL_S = 0.1  # how often the server looks at a running job's messages, memory and budget
READY_S = 300.0  # the longest a new worker may take to start (imports torch) on a busy host
ENV_PREFIXES = ("CONTEXTLENS_", "HF_", "TRANSFORMERS_")  # settings a job reads from os.environ


class WorkerFailure(RuntimeError):
    """A worker's job failed with an unexpected error that could not be sent back as it was
    (its type and text; the worker's log has the traceback). Not a typed error: a page shows
    it as an unexpected one, with an id."""


class WorkerDied(JobStoppedError):
    """The worker process ended during the job (killed from outside, out of memory)."""


def died_message(what: str) -> str:
    """What a page says when ``what``'s worker process ended mid-job (its pipe closed)."""
    return (
        f"{what} stopped: the worker process running it ended (stopped from outside, or the "
        "server ran short of memory). Start it again: what it had saved (extracted features) "
        "is kept, so it resumes from there."
    )


def enabled() -> bool:
    """Workers are on unless ``CONTEXTLENS_JOB_WORKERS=0`` (then jobs run in the server's
    threads, as before: a fallback for platforms without ``/proc`` or ``spawn``)."""
    return os.environ.get("CONTEXTLENS_JOB_WORKERS", "1").strip() != "0"


# -- the worker process ------------------------------------------------------------------


def _job_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k.startswith(ENV_PREFIXES)}


def _apply_env(env: dict[str, str]) -> None:
    """The server's settings as of this job (the data folder can change while it runs)."""
    for k in [k for k in os.environ if k.startswith(ENV_PREFIXES) and k not in env]:
        del os.environ[k]
    os.environ.update(env)


def _main(conn: Connection, nice: int) -> None:
    """The worker's loop: run each job sent, send its progress and its result or error.
    ``nice``: the niceness to run at (the server's own plus :func:`worker_nice`)."""
    threading.Thread(target=_end_with_server, args=(os.getppid(),), daemon=True).start()
    # One thread per worker: the cores go to the server's light work and the other slots.
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        os.environ[var] = "1"
    # A child starts at the niceness of the server *thread* that started it (Linux: nice is
    # per thread), which may already be a heavy job's +10: set the target, not an increment.
    with contextlib.suppress(OSError, AttributeError):
        os.setpriority(os.PRIO_PROCESS, 0, max(nice, os.getpriority(os.PRIO_PROCESS, 0)))
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl+C stops the server; it ends us
    import torch

    torch.set_num_threads(1)
    conn.send(("ready", os.getpid()))
    while True:
        try:
            fn, args, kwargs, env, with_progress = conn.recv()
        except (EOFError, OSError):
            return  # the server is gone
        _apply_env(env)
        if with_progress:
            kwargs = {**kwargs, "progress": lambda *a: conn.send(("progress", a))}
        try:
            conn.send(("done", fn(*args, **kwargs)))
        except Exception as exc:
            text = traceback.format_exc()
            if not isinstance(exc, ContextLensError):
                print(f"contextlens worker {os.getpid()}: job failed\n{text}", file=sys.stderr)
            conn.send(("error", _sendable(exc)))


def _sendable(exc: Exception) -> Exception:
    """``exc`` when it comes back whole through pickle; else a typed error keeps its message
    (written for the user) as a plain ContextLensError, and any other becomes a WorkerFailure.
    Checked here: an error that pickles but cannot be rebuilt (an ``__init__`` with more
    arguments than its ``args``) failed in the server's ``recv`` with a TypeError about the
    error class instead of the job's own message."""
    try:
        back = pickle.loads(pickle.dumps(exc))
        if type(back) is type(exc) and str(back) == str(exc):
            return exc
    except Exception:
        pass
    if isinstance(exc, ContextLensError):
        return ContextLensError(str(exc))
    return WorkerFailure(f"{type(exc).__name__}: {exc}")


def _end_with_server(server: int) -> None:
    """Exit when the server has gone, even in the middle of a job (orphans get a new parent)."""
    while os.getppid() == server:
        time.sleep(2.0)
    os._exit(0)


# -- the server's side -------------------------------------------------------------------


class Worker:
    """One worker process (``python -m ui.worker``) and the server's end of its socket.

    Started as a fresh interpreter rather than by ``multiprocessing``'s spawn, which would
    re-import the server's ``__main__`` (Streamlit's launcher, or whatever embeds the app).
    """

    def __init__(self) -> None:
        ours, theirs = socket.socketpair()
        env = dict(os.environ)
        root = str(REPO_ROOT)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
        with theirs:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "ui.worker", str(theirs.fileno()), str(_target_nice())],
                pass_fds=[theirs.fileno()],
                env=env,
                stdin=subprocess.DEVNULL,
            )
        self.conn = Connection(ours.detach())
        self.ready = False

    @property
    def pid(self) -> int:
        return self.process.pid

    def alive(self) -> bool:
        return self.process.poll() is None

    def rss(self) -> int:
        return rss_bytes(self.pid) if self.alive() else 0

    def kill(self) -> None:
        """End the process now (its memory goes with it)."""
        with contextlib.suppress(Exception):
            self.process.kill()
            self.process.wait(10)
        with contextlib.suppress(Exception):
            self.conn.close()


class Pool:
    """Up to ``size()`` workers, started on first use (or one at server start:
    :meth:`prestart`) and kept (their models stay loaded)."""

    def __init__(self, size: Callable[[], int]) -> None:
        self._size = size
        self._cond = threading.Condition()
        self._idle: list[Worker] = []
        self._busy: set[Worker] = set()
        self._prestarted = False

    def pids(self) -> list[int]:
        """The worker processes now (for the load test's memory figures and the tests)."""
        with self._cond:
            return [w.pid for w in [*self._idle, *self._busy]]

    def prestart(self) -> None:
        """Start one worker now, once per pool, if none runs: the first heavy job then does
        not wait for a fresh interpreter to import torch (10-37 s on the loaded machine)."""
        with self._cond:
            if self._prestarted or self._idle or self._busy:
                return
            self._prestarted = True
            self._idle.append(Worker())

    def _take(self) -> Worker:
        with self._cond:
            while True:
                while self._idle:
                    w = self._idle.pop()
                    if w.alive():
                        self._busy.add(w)
                        return w
                    w.kill()
                if len(self._busy) < max(1, self._size()):
                    w = Worker()
                    self._busy.add(w)
                    return w
                self._cond.wait(1.0)

    def _give_back(self, w: Worker, keep: bool) -> None:
        with self._cond:
            self._busy.discard(w)
            if keep and w.alive():
                self._idle.append(w)
            else:
                w.kill()
            self._cond.notify_all()

    def shutdown(self) -> None:
        with self._cond:
            for w in [*self._idle, *self._busy]:
                w.kill()
            self._idle.clear()

    def run(
        self,
        fn: Callable[..., Any],
        args: tuple = (),
        kwargs: dict | None = None,
        *,
        budget: Budget,
        progress: Callable[..., None] | None = None,
    ) -> Any:
        """``fn(*args, **kwargs)`` in a worker under ``budget``; ``progress(*a)`` is called
        here for each ``progress(*a)`` the job makes. Raises what the job raised, or
        :class:`~probing.errors.JobStoppedError` when it was stopped (memory, a dead worker).
        Any exception here meanwhile (the time budget, a closed page, a rerun) kills the
        worker: the job is cancelled with it."""
        w = self._take()
        finished, rss0 = False, 0
        try:
            self._wait_ready(w)
            rss0 = w.rss()
            with _pipe(w, budget.what):
                w.conn.send((fn, args, dict(kwargs or {}), _job_env(), progress is not None))
            checked = 0.0
            while True:
                with _pipe(w, budget.what):
                    message = w.conn.recv() if w.conn.poll(POLL_S) else None
                if message is not None:
                    kind, value = message
                    if kind != "progress":
                        finished = True
                        if kind == "error":
                            raise value
                        return value
                    if progress is not None:
                        progress(*value)
                # Checked after progress reports too, at most every POLL_S: a job reporting
                # more often than that never let poll() time out, and grew unchecked (12.9 GB
                # against a 128 MB budget in CI).
                if time.monotonic() - checked < POLL_S:
                    continue
                checked = time.monotonic()
                growth = w.rss() - rss0 if rss0 else 0
                budget.peak_growth_bytes = max(budget.peak_growth_bytes, growth)
                if growth > budget.memory_bytes:
                    raise JobStoppedError(memory_message(budget.what, budget.memory_bytes))
                if not w.alive():
                    raise WorkerDied(died_message(budget.what))
        finally:
            # A job that did not finish (stopped, cancelled, failed to send) takes its worker
            # with it; a worker that grew far past a job's budget is retired to free memory.
            keep = finished and w.rss() < 2 * budget.memory_bytes
            self._give_back(w, keep)

    @staticmethod
    def _wait_ready(w: Worker) -> None:
        if w.ready:
            return
        deadline = time.monotonic() + READY_S
        while not w.conn.poll(POLL_S):
            if not w.alive() or time.monotonic() > deadline:
                raise WorkerDied("The job's worker process did not start. Please try again.")
        with _pipe(w, "The job"):
            kind, _ = w.conn.recv()
        w.ready = kind == "ready"


@contextlib.contextmanager
def _pipe(w: Worker, what: str) -> Iterator[None]:
    """Talk to worker ``w`` in the body. Its end of the pipe closing (the process killed) is
    WorkerDied with the page's message, not the pipe's bare EOFError; an answer that cannot
    be unpickled is a WorkerFailure naming why."""
    try:
        yield
    except (EOFError, ConnectionError) as exc:
        raise WorkerDied(died_message(what)) from exc
    except pickle.UnpicklingError as exc:
        raise WorkerFailure(f"{what}'s answer from its worker could not be read: {exc}") from exc


if __name__ == "__main__":
    # The module's own copy (not __main__'s), so that its exceptions unpickle in the server.
    from ui.worker import _main as main

    main(Connection(int(sys.argv[1])), int(sys.argv[2]))
