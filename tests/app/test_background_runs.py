"""A probe run can be left running when its tab closes and picked up from the page later."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

import pytest

from probing.errors import JobStoppedError
from ui import background, jobs

if TYPE_CHECKING:
    from ui.background import ProgressSink


@pytest.fixture
def closed_tab(monkeypatch):
    """The starting session's browser tab is closed (its liveness check says so)."""
    monkeypatch.setattr(jobs, "session_alive", lambda: lambda: False)
    monkeypatch.setenv("CONTEXTLENS_DEMO", "1")
    jobs._gate.clear()
    yield
    jobs._gate.clear()


def _work(release: threading.Event) -> Callable[[ProgressSink], str]:
    def work(sink: ProgressSink) -> str:
        sink.progress(0.5, "half way")
        deadline = time.monotonic() + 20
        while not release.is_set() and time.monotonic() < deadline:
            time.sleep(0.05)  # Python steps: where a stop lands
        return "results saved"

    return work


def test_a_run_tied_to_its_tab_stops_when_the_tab_closes(closed_tab):
    run = background.start("s1:probe", "Probing", _work(threading.Event()))
    assert run.done.wait(20)
    assert isinstance(run.error, JobStoppedError) and "closed" in str(run.error)


def test_a_detached_run_goes_on_and_another_session_picks_it_up(closed_tab):
    release = threading.Event()
    shared = background.shared_key("probe", [("minilm-l6", "pos", 20)])
    run = background.start("s1:probe", "Probing", _work(release), detached=True, shared_key=shared)
    time.sleep(1.0)  # the closed tab's session would have stopped it by now
    assert not run.done.is_set()
    # A new session (a new tab) with the same settings computes the same key and finds it.
    again = background.shared_key("probe", [("minilm-l6", "pos", 20)])
    assert background.get(again) is run and run.text == "half way"
    assert background.collect(again) is None  # still running: nothing to collect yet
    release.set()
    assert run.done.wait(20)
    assert background.collect(again) is run and run.result == "results saved" and run.error is None
    assert background.get("s1:probe") is None  # collected under both keys
