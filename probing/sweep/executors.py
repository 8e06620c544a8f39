"""Where the sweep's tasks run: a local process pool, or Ray (a laptop's or a cluster's).

Both offer the same calls: ``submit(kind, fn, *args) -> handle``, ``next_done(handles)
-> (handle, value)`` (the first to finish; a task's exception is raised here),
``cancel(handles)`` and ``close()``. ``kind`` is ``extract`` or ``fit``; Ray gives an
extraction a GPU when the cluster has one. Neither executor computes anything itself: they
only ship the functions of :mod:`probing.sweep.adapter` (and the report's,
:mod:`probing.report.remote`) and their (small) arguments; features travel through the
feature-cache folder.
"""

from __future__ import annotations

import concurrent.futures as cf
import multiprocessing
import os
import sys
import types
from collections.abc import Callable, Iterable
from typing import Any

from probing import config
from probing.errors import ContextLensError, OptionalDependencyError
from probing.sweep.adapter import WORKER_ENV, pin_threads

EXECUTORS = ("local", "ray")


def default_workers() -> int:
    """The cores this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


class LocalExecutor:
    """A pool of ``workers`` spawned processes, each pinned to one compute thread.

    Spawned, not forked: a forked child inherits torch's thread pools and locks in whatever
    state the parent left them.
    """

    name = "local"
    gpu = False

    def __init__(self, workers: int | None = None) -> None:
        self.workers = workers or default_workers()
        # Children read these at start-up (before torch loads); the driver computes nothing
        # itself, so it loses nothing by carrying them too. Restored on close().
        self._saved = {k: os.environ.get(k) for k in WORKER_ENV}
        os.environ.update(WORKER_ENV)
        # A spawned child re-runs a script ``__main__`` (one without a module name) before it
        # works. When that script is a Streamlit page (the app, or AppTest in the tests) the
        # child would draw the page and die, so the children get an empty main instead; the
        # workers' functions all live in probing.sweep. Restored on close().
        self._main = sys.modules.get("__main__")
        if self._main is not None and getattr(self._main.__spec__, "name", None) is None:
            sys.modules["__main__"] = types.ModuleType("__main__")
        self._pool = cf.ProcessPoolExecutor(
            max_workers=self.workers,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=pin_threads,
        )

    def submit(self, kind: str, fn: Callable, *args: Any) -> cf.Future:
        return self._pool.submit(fn, *args)

    def next_done(self, handles: Iterable[cf.Future]) -> tuple[cf.Future, Any]:
        done, _ = cf.wait(list(handles), return_when=cf.FIRST_COMPLETED)
        fut = next(iter(done))
        return fut, fut.result()

    def cancel(self, handles: Iterable[cf.Future]) -> None:
        """Drop tasks not yet started (a started one runs to its end)."""
        for fut in handles:
            fut.cancel()

    def close(self, cancel: bool = False) -> None:
        self._pool.shutdown(wait=True, cancel_futures=cancel)
        if self._main is not None:
            sys.modules["__main__"] = self._main
        for k, v in self._saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


class RayExecutor:
    """Ray tasks: one CPU each; extraction also asks for one GPU when the cluster has GPUs.

    Args:
        address: ``None`` starts a local Ray instance with ``workers`` CPUs; ``auto`` joins
            the cluster this machine belongs to; ``ray://host:10001`` connects a client.
        workers: CPUs of the local instance (ignored when joining a cluster).
    """

    name = "ray"

    def __init__(self, address: str | None = None, workers: int | None = None) -> None:
        ray = import_ray()
        self._ray = ray
        self._started = False
        if not ray.is_initialized():
            env = {**WORKER_ENV, "PYTHONPATH": _pythonpath()}
            for k in (
                "HF_HUB_OFFLINE",
                "TRANSFORMERS_OFFLINE",
                "HF_HOME",
                "CONTEXTLENS_FEATURE_CACHE_MB",
            ):
                if k in os.environ:
                    env[k] = os.environ[k]
            kw: dict[str, Any] = {"runtime_env": {"env_vars": env}, "log_to_driver": False}
            if address is None:
                kw.update(num_cpus=workers or default_workers(), include_dashboard=False)
            ray.init(address=address, **kw)
            self._started = True
        resources = ray.cluster_resources()
        self.workers = int(resources.get("CPU", 1))
        self.gpu = resources.get("GPU", 0) >= 1
        self._remote: dict[tuple[Callable, str], Any] = {}

    def submit(self, kind: str, fn: Callable, *args: Any) -> Any:
        key = (fn, kind)
        if key not in self._remote:
            gpus = 1 if (kind == "extract" and self.gpu) else 0
            self._remote[key] = self._ray.remote(num_cpus=1, num_gpus=gpus, max_retries=1)(fn)
        return self._remote[key].remote(*args)

    def next_done(self, handles: Iterable[Any]) -> tuple[Any, Any]:
        ready, _ = self._ray.wait(list(handles), num_returns=1)
        ref = ready[0]
        try:
            return ref, self._ray.get(ref)
        except self._ray.exceptions.RayTaskError as exc:
            cause = getattr(exc, "cause", None)
            if isinstance(cause, ContextLensError):  # a typed error stays typed
                raise cause from exc
            raise

    def cancel(self, handles: Iterable[Any]) -> None:
        """Stop tasks (a Ray instance this executor joined outlives it, and so would they)."""
        for ref in handles:
            self._ray.cancel(ref, force=True)

    def close(self, cancel: bool = False) -> None:
        if self._started:
            self._ray.shutdown()


def import_ray() -> types.ModuleType:
    """Ray, or a typed error that says how to install it."""
    try:
        import ray
    except ImportError as exc:
        raise OptionalDependencyError(
            "--executor ray needs Ray, which is not installed: pip install 'ray>=2.9' "
            "(or use --executor local)"
        ) from exc
    return ray


def make_executor(
    name: str, workers: int | None = None, address: str | None = None
) -> LocalExecutor | RayExecutor:
    """``local`` or ``ray`` (see the classes)."""
    if name == "local":
        if address:
            raise ContextLensError("--address is for --executor ray")
        return LocalExecutor(workers)
    if name == "ray":
        return RayExecutor(address, workers)
    raise ContextLensError(f"unknown executor {name!r}; choose one of {', '.join(EXECUTORS)}")


def _pythonpath() -> str:
    # Ray workers import probing by name; a checkout at the same path on every node finds it.
    parts = [str(config.REPO_ROOT), os.environ.get("PYTHONPATH", "")]
    return os.pathsep.join(p for p in parts if p) or sys.path[0]
