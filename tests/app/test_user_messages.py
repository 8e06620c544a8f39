"""Issue 48.5 on the pages: every failure the hostile battery met as a library's raw text (or
Streamlit's generic error box) is one readable message; an error nobody expected shows a
short id that the operator's log has with its traceback; a killed worker says what happened
and that the run resumes."""

from __future__ import annotations

import errno
import logging
import os
import re
import signal
import time
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from streamlit.testing.v1 import AppTest

from probing.budget import Budget
from probing.errors import InputTooLongError

if TYPE_CHECKING:
    from collections.abc import Callable

    from probing.analyses.sense_pairs import SenseVocabulary
    from probing.encoders.base import Encoder
    from ui.background import ProgressSink

REPO = Path(__file__).resolve().parents[2]
LAYER_SIMILARITY = str(REPO / "pages" / "9_Layer_Similarity.py")
FILL_MASK = str(REPO / "pages" / "2_Fill_Mask.py")
PROBING = str(REPO / "pages" / "4_Probing.py")
MB = 2**20


@pytest.fixture(autouse=True)
def local_mode(tmp_path, monkeypatch):
    monkeypatch.delenv("CONTEXTLENS_DEMO", raising=False)
    monkeypatch.setenv("CONTEXTLENS_CACHE_DIR", str(tmp_path / "cache"))


# -- an error nobody expected -----------------------------------------------------------------


def test_an_unexpected_error_shows_an_id_and_the_log_has_its_traceback(monkeypatch, caplog):
    import ui.views.layer_similarity as view

    def broken() -> None:
        raise RuntimeError("a library's words about /srv/contextlens/secret")

    monkeypatch.setattr(view, "shipped_view", broken)
    with caplog.at_level(logging.ERROR, logger="contextlens.ui"):
        at = AppTest.from_file(LAYER_SIMILARITY, default_timeout=120).run()
    assert not at.exception, at.exception  # not Streamlit's box
    (message,) = [e.value for e in at.error]
    assert message.startswith("The Layer Similarity page failed unexpectedly")
    error_id = re.search(r"error id `([0-9a-f]{8})`", message).group(1)
    assert "secret" not in message and "RuntimeError" not in message
    logged = [r for r in caplog.records if error_id in r.getMessage()]
    assert logged and "secret" in str(logged[0].exc_info[1])  # the traceback, for the operator


def test_friendly_errors_hide_an_unexpected_errors_text_behind_an_id(caplog):
    def script() -> None:
        from ui.common import friendly_errors

        with friendly_errors("Drawing the map"):
            raise EOFError("Ran out of input")

    with caplog.at_level(logging.ERROR, logger="contextlens.ui"):
        at = AppTest.from_function(script).run()
    (message,) = [e.value for e in at.error]
    assert message.startswith("Drawing the map failed unexpectedly (error id `")
    assert "EOFError" not in message and "Ran out" not in message
    assert any("Drawing the map" in r.getMessage() and r.exc_info for r in caplog.records)


def test_st_stop_and_st_rerun_pass_through_the_page_guard(monkeypatch):
    import streamlit as st

    import ui.views.layer_similarity as view

    monkeypatch.setattr(view, "shipped_view", st.stop)
    at = AppTest.from_file(LAYER_SIMILARITY, default_timeout=120).run()
    assert not at.exception and not at.error
    assert not at.get("plotly_chart")  # stopped where it was asked to
    runs: list[int] = []

    def rerun_once() -> None:
        runs.append(1)
        if len(runs) == 1:
            st.rerun()

    monkeypatch.setattr(view, "shipped_view", rerun_once)
    at = AppTest.from_file(LAYER_SIMILARITY, default_timeout=120).run()
    assert not at.exception and not at.error and len(runs) == 2


# -- the pages' own inputs ---------------------------------------------------------------------


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")])
def test_a_non_finite_cka_word_count_is_no_error_box(value):
    """Streamlit converted an integer box's NaN with int() before the page ran: its generic
    error box. The box is a float box shown whole now; Streamlit resets such a value."""
    at = AppTest.from_file(LAYER_SIMILARITY, default_timeout=120).run()
    at.number_input(key="cka_words").set_value(value).run()
    assert not at.exception, at.exception
    assert not at.error
    from probing.analyses.params import CkaParams
    from ui.settings_inputs import page_range

    smallest = page_range(CkaParams, "n_words")[0]  # the range the settings class declares
    assert at.number_input(key="cka_words").value == smallest  # the box's smallest
    assert at.query_params["words"] == str(smallest)  # the link stays a whole number


@pytest.mark.parametrize("token", ["[MASK]", "[CLS]", "[PAD]"])
def test_following_a_special_token_says_what_to_follow(token):
    at = AppTest.from_file(FILL_MASK, default_timeout=180)
    at.session_state["models"] = ["minilm-l6-mlm"]
    at.run()
    at.text_area(key="fill_mask_text").input("The capital of France is [MASK] .").run()
    at.text_input(key="fill_mask_follow").input(token).run()
    assert not at.exception, at.exception
    errors = [e.value for e in at.error]
    assert any("special tokens" in e and "pick a word" in e for e in errors), errors
    assert not any("KeyError" in e for e in errors)


def test_patching_bad_forms_or_a_long_pair_says_why():
    def script() -> None:
        import streamlit as st

        from probing.models.registry import load_encoder
        from ui.views.interventions import check_and_patch

        a, b, sg, pl = st.session_state["pair"]
        check_and_patch(load_encoder("minilm-l6-mlm"), a, b, sg, pl)

    a, b = "The key to the cabinets [MASK] here.", "The keys to the cabinets [MASK] here."
    for sg, pl, said in [
        ("is", "is", "Both verb forms are 'is'"),
        ("", "", "Type the singular verb form"),
        ("\x00", "are", "control characters"),
    ]:
        at = AppTest.from_function(script, default_timeout=120)
        at.session_state["pair"] = (a, b, sg, pl)
        at.run()
        assert not at.exception, at.exception
        assert [e.value for e in at.error] and said in at.error[0].value
        assert "zip()" not in at.error[0].value
    # A pair over the model's 512 pieces: the limit and the length, not the two sentences.
    long_a = "The key " + "very " * 600 + "[MASK] here."
    long_b = "The keys " + "very " * 600 + "[MASK] here."
    at = AppTest.from_function(script, default_timeout=120)
    at.session_state["pair"] = (long_a, long_b, "is", "are")
    at.run()
    assert not at.exception, at.exception
    (message,) = [e.value for e in at.error]
    assert "at most 512" in message and "very very" not in message and len(message) < 200


def test_a_read_only_cache_on_the_probing_page_names_the_folder(minilm, monkeypatch):
    import probing.feature_cache
    from ui import background

    def read_only(*args, **kwargs):
        raise OSError(errno.EROFS, "Read-only file system", "/cache/features")

    monkeypatch.setattr(probing.feature_cache, "clean_stale", read_only)
    monkeypatch.setenv("CONTEXTLENS_JOB_WORKERS", "0")  # the patch above must be seen
    at = AppTest.from_file(PROBING, default_timeout=300)
    at.session_state["models"] = ["minilm-l6"]
    at.run()
    at.button(key="probe_run").click().run()
    for run in list(background._runs().values()):
        run.thread.join(300)
    at.run()
    assert not at.exception, at.exception
    errors = [e.value for e in at.error]
    assert any("cannot be written (read-only file system)" in e for e in errors), errors
    assert any("CONTEXTLENS_CACHE_DIR" in e for e in errors)
    assert not any("Errno" in e or "OSError" in e for e in errors)


def test_a_neighbour_pool_the_cache_cannot_take_is_still_used(minilm, monkeypatch, caplog):
    """Static vs Contextual: a full disk raised SafetensorError's own text; the pool is
    built, so it is kept in memory and the operator's log says why it was not stored."""
    import numpy as np
    import safetensors.numpy
    from safetensors import SafetensorError

    from probing.analyses import contextual, sense_pairs

    def small_pool(encoder: Encoder, *args: object, **kwargs: object) -> SenseVocabulary:
        v = np.ones((minilm.info.n_contextual_layers + 1, 2, minilm.info.dim), np.float32)
        base = contextual.NeighbourVocabulary(encoder.name, ["a", "b"], ["a", "b"], v, v[0])
        return sense_pairs.SenseVocabulary(base, ["", ""], ["", ""])

    def full(*args, **kwargs):
        raise SafetensorError('IoError(Os { code: 28, message: "No space left on device" })')

    monkeypatch.setattr(sense_pairs, "_build_semcor_pool", small_pool)
    monkeypatch.setattr(safetensors.numpy, "save_file", full)
    monkeypatch.setattr(sense_pairs, "_pool_cache", {})
    with caplog.at_level(logging.WARNING, logger="contextlens"):
        pool = sense_pairs.semcor_vocabulary(minilm, max_occurrences=7)
    assert pool.words == ["a", "b"]
    assert any("is full" in r.getMessage() for r in caplog.records)


# -- the worker process -------------------------------------------------------------------------


def sleeper(seconds: float, progress: Callable[..., None]) -> str:  # run in the worker
    progress("started")
    time.sleep(seconds)
    return "woke"


def too_long() -> None:  # run in the worker
    raise InputTooLongError(600, 512)


def test_a_killed_worker_says_so_and_typed_errors_cross_whole():
    from ui.worker import Pool, WorkerDied

    pool = Pool(lambda: 1)
    try:
        with (
            Budget(300, 1536 * MB, what="Probing") as budget,
            pytest.raises(InputTooLongError) as typed,  # was: TypeError … 'limit'
        ):
            pool.run(too_long, budget=budget)
        assert typed.value.limit == 512
        killed: list[int] = []

        def kill(*_: object) -> None:  # the job has started: kill its worker from outside
            (pid,) = pool.pids()
            os.kill(pid, signal.SIGKILL)
            killed.append(pid)

        with (
            Budget(300, 1536 * MB, what="Probing") as budget,
            pytest.raises(WorkerDied) as died,
        ):
            pool.run(sleeper, (60.0,), budget=budget, progress=kill)
        message = str(died.value)
        assert killed and "EOFError" not in message
        assert message.startswith("Probing stopped: the worker process running it ended")
        assert "resumes" in message
    finally:
        pool.shutdown()


def test_a_background_run_whose_worker_died_resumes_and_says_so():
    from ui import background, worker

    calls: list[int] = []

    def work(sink: ProgressSink) -> str:
        calls.append(1)
        if len(calls) == 1:
            sink.progress(0.4, "Probing: extracting the features")
            raise worker.WorkerDied(worker.died_message("Probing"))
        return "done"

    run = background.start("test-resume", "Probing", work, detached=True)
    run.thread.join(30)
    background.collect("test-resume")
    assert run.error is None and run.result == "done" and len(calls) == 2
    said = [text for _, text in background._drain(run)]
    assert any("worker process ended" in t and "resuming" in t for t in said), said
