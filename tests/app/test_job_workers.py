"""Heavy jobs run in a worker process (issue 31.4): the server's threads never hold the GIL
for them. Their progress and results come back, their errors come back typed, and the job
budget holds for the worker (its memory read from /proc, a stop kills it)."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable

import pytest

from probing.budget import Budget, rss_bytes
from probing.errors import JobStoppedError, TooFewSensesError
from ui import jobs, tasks, worker

MB = 2**20


# Module-level jobs: the worker imports this module to run them.
def counted(n: int, progress: Callable[..., None]) -> tuple[int, int]:
    """Report n steps; return (this process's id, its parent's)."""
    for i in range(n):
        progress(i + 1, n)
    return os.getpid(), os.getppid()


def hog(mb_per_step: int, progress: Callable[..., None]) -> None:
    """Take memory (resident) step by step until stopped."""
    held = []
    while True:
        block = bytearray(mb_per_step * MB)
        block[::4096] = b"x" * len(range(0, len(block), 4096))
        held.append(block)
        progress(len(held) * mb_per_step)
        time.sleep(0.01)  # reports more often than the server polls (worker.POLL_S)


def sleeper(seconds: float, progress: Callable[..., None]) -> str:
    progress("started")
    time.sleep(seconds)
    return "woke"


@pytest.fixture(scope="module")
def pool():
    p = worker.Pool(lambda: 1)
    yield p
    p.shutdown()


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_a_job_runs_in_another_process_and_its_progress_and_result_come_back(pool):
    seen: list[tuple[int, int]] = []
    with Budget(300, 1536 * MB, what="Probing") as budget:
        pid, parent = pool.run(counted, (5,), budget=budget, progress=lambda *a: seen.append(a))
    assert pid != os.getpid() and parent == os.getpid()
    assert seen == [(i, 5) for i in range(1, 6)]  # every report, in order
    assert pool.pids() == [pid]  # kept for the next job (models stay loaded there)
    # The worker runs nicer than the server, so that light clicks get the cores first.
    assert os.getpriority(os.PRIO_PROCESS, pid) == worker._target_nice()
    assert worker._target_nice() == min(19, os.getpriority(os.PRIO_PROCESS, 0) + 10)
    with Budget(300, 1536 * MB) as budget:
        assert pool.run(counted, (0,), budget=budget, progress=print)[0] == pid


def test_a_job_over_its_memory_budget_is_stopped_with_the_typed_message(pool):
    """The worker's own RSS (from /proc) counts, not the server's: the server does not grow,
    the worker is killed (its memory freed) and the next job gets a fresh one."""
    with Budget(300, 1536 * MB) as budget:
        pool.run(counted, (0,), budget=budget, progress=print)
    (before,) = pool.pids()
    server0 = rss_bytes()
    grown: list[int] = []
    with (
        pytest.raises(JobStoppedError, match="more than 128 MB of memory") as info,
        Budget(300, 128 * MB, what="Probing") as budget,
    ):
        pool.run(hog, (16,), budget=budget, progress=grown.append)
    assert "Probing was stopped" in str(info.value)
    assert 128 * MB < budget.peak_growth_bytes < 1024 * MB and grown
    assert rss_bytes() - server0 < 64 * MB
    deadline = time.monotonic() + 10
    while not gone(before) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert gone(before) and pool.pids() == []
    with Budget(300, 1536 * MB) as budget:
        pid, _ = pool.run(counted, (1,), budget=budget, progress=lambda *a: None)
    assert pid != before


def test_a_cancelled_job_ends_its_worker(pool):
    """A closed page (the budget's liveness check) stops the job at once, worker and all."""
    open_page = threading.Event()
    open_page.set()
    started: list[str] = []
    threading.Timer(2.0, open_page.clear).start()
    t0 = time.monotonic()
    with (
        pytest.raises(JobStoppedError, match="page was closed"),
        Budget(300, 1536 * MB, what="Probing", alive=open_page.is_set, poll_s=0.1) as budget,
    ):
        pool.run(sleeper, (120.0,), budget=budget, progress=started.append)
    assert time.monotonic() - t0 < 60  # not the job's 120 s
    assert pool.pids() == []


def test_a_library_error_in_the_worker_comes_back_typed(data_dir, monkeypatch):
    """Through ``jobs.offload`` inside a heavy job, as the pages call it."""
    monkeypatch.setenv("CONTEXTLENS_DEMO", "1")
    budget = Budget(300, 1536 * MB, what="Sense geometry")
    with budget, jobs.job_context(budget):
        with pytest.raises(TooFewSensesError, match="needs two or more"):
            jobs.offload(tasks.sense_table, "minilm-l6", "wife", "n", 50)
        table = jobs.offload(tasks.sense_table, "minilm-l6", "bank", "n", 50)
        assert jobs.worker_pids() and os.getpid() not in jobs.worker_pids()
    assert table["layer_name"].tolist()[:2] == ["static", "embeddings"]
    # Outside a heavy job (a CLI, a cached call already made) the call runs here.
    assert jobs.offload(os.getpid) == os.getpid()


def test_a_prestarted_worker_takes_the_first_job():
    """The server starts one worker before any job (ui.jobs.prestart_worker), once: the
    first heavy job runs there instead of waiting for a new interpreter."""
    p = worker.Pool(lambda: 1)
    try:
        p.prestart()
        (pid,) = p.pids()
        p.prestart()
        assert p.pids() == [pid]
        with Budget(300, 1536 * MB) as budget:
            assert p.run(counted, (1,), budget=budget, progress=print)[0] == pid
    finally:
        p.shutdown()
    before = jobs.worker_pids()
    jobs.prestart_worker()  # no running server here (a script, AppTest): nothing started
    assert jobs.worker_pids() == before
