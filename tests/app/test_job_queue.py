"""Heavy jobs wait in arrival order and the waiting page says where it stands; heavy work
runs at a lower CPU priority than the light clicks that never queue."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable

import pytest

from ui import jobs
from ui.gate import Gate


@pytest.fixture
def one_slot(monkeypatch):
    """The server's gate with one slot (the demo's), fresh for the test."""
    monkeypatch.setenv("CONTEXTLENS_DEMO", "1")
    jobs._gate.clear()
    yield jobs._gate()
    jobs._gate.clear()


def _job(name: str, order: list, hold: threading.Event, notes: dict) -> threading.Thread:
    def body() -> None:
        def waiting(ahead: int, seconds: float) -> None:
            notes.setdefault(name, []).append(jobs.queued_text(name, ahead, seconds))

        with jobs.slot(lambda: True, waiting, name):
            order.append(name)
            hold.wait(30)

    t = threading.Thread(target=body, daemon=True)
    t.start()
    return t


def _wait_until(cond: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def test_waiting_heavy_jobs_are_served_in_arrival_order(one_slot):
    """Three heavy jobs: the first holds the slot, the second and third wait; when the slot
    frees, a newcomer arriving at that moment goes behind them (it used to overtake them:
    waiters re-polled every second, the newcomer took the free slot at once)."""
    order: list[str] = []
    notes: dict[str, list[str]] = {}
    holds = {n: threading.Event() for n in ("first", "second", "third", "newcomer")}
    threads = [_job("first", order, holds["first"], notes)]
    _wait_until(lambda: order == ["first"])
    threads.append(_job("second", order, holds["second"], notes))
    _wait_until(lambda: one_slot.status() == (1, 1))
    threads.append(_job("third", order, holds["third"], notes))
    _wait_until(lambda: one_slot.status() == (1, 2))
    holds["first"].set()
    threads.append(_job("newcomer", order, holds["newcomer"], notes))
    for name in ("second", "third", "newcomer"):
        _wait_until(lambda name=name: name in order)
        holds[name].set()
    for t in threads:
        t.join(10)
    assert order == ["first", "second", "third", "newcomer"]
    # Each waiting page said how many jobs are ahead of it and about how long.
    assert notes["second"][0].startswith("second: queued behind 1 job, about ")
    assert notes["third"][0].startswith("third: queued behind 2 jobs, about ")


def test_the_expected_wait_comes_from_the_jobs_ahead():
    gate = Gate(1)
    first = gate.acquire("fit")
    gate.release(first)  # a "fit" took ~0 s: the expected wait is the floor of 1 s per job
    running = gate.acquire("fit")
    seen: list[tuple[int, float]] = []
    waiter = threading.Thread(
        target=lambda: gate.release(gate.acquire("umap", waiting=lambda n, t: seen.append((n, t)))),
        daemon=True,
    )
    waiter.start()
    _wait_until(lambda: seen)
    assert seen[0][0] == 1 and 0.5 <= seen[0][1] <= 2.0
    gate.release(running)
    waiter.join(10)
    assert gate.status() == (0, 0)


def test_a_waiter_that_leaves_gives_up_its_place():
    gate = Gate(1)
    held = gate.acquire("a")
    gone = threading.Event()
    result: list = []
    t = threading.Thread(
        target=lambda: result.append(
            gate.acquire("b", alive=lambda: not gone.is_set(), poll_s=0.05)
        )
    )
    t.start()
    _wait_until(lambda: gate.status() == (1, 1))
    gone.set()
    t.join(5)
    assert result == [None] and gate.status() == (1, 0)
    gate.release(held)


@pytest.mark.skipif(not hasattr(os, "getpriority"), reason="needs per-thread nice (Linux)")
def test_heavy_work_runs_at_a_lower_cpu_priority(one_slot):
    seen: list[int] = []

    def body() -> None:
        with jobs.slot(lambda: True, None, "job"):
            seen.append(os.getpriority(os.PRIO_PROCESS, threading.get_native_id()))

    before = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    t = threading.Thread(target=body)
    t.start()
    t.join(10)
    assert seen == [min(19, before + jobs.HEAVY_NICE)]
    # The caller's own thread (a light click's) keeps its priority.
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == before
