"""The per-run timing log the load test reads (``CONTEXTLENS_RUN_LOG``, ui/run_log.py)."""

from __future__ import annotations

import json

import pytest

from ui import run_log


def test_each_run_is_logged_with_its_page_time_and_how_it_ended(tmp_path, monkeypatch):
    log = tmp_path / "runs.jsonl"
    monkeypatch.setenv("CONTEXTLENS_RUN_LOG", str(log))
    with run_log.timed("Fill_Mask"):
        sum(range(100_000))
    with pytest.raises(KeyError), run_log.timed("Probing"):  # st.stop / reruns end a run so
        raise KeyError("x")
    first, second = (json.loads(line) for line in log.read_text().splitlines())
    assert first["page"] == "Fill_Mask" and first["ended"] == "finished"
    assert first["thread_cpu_s"] > 0 and 0 < first["seconds"] < 60
    assert second["page"] == "Probing" and second["ended"] == "KeyError"
    assert second["start"] >= first["start"]


def test_nothing_is_written_unless_the_operator_asks(tmp_path, monkeypatch):
    monkeypatch.delenv("CONTEXTLENS_RUN_LOG", raising=False)
    monkeypatch.chdir(tmp_path)
    with run_log.timed("Fill_Mask"):
        pass
    assert list(tmp_path.iterdir()) == []
