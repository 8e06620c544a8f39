"""The shared demo's bounds: heavy jobs under a budget, the feature cache under its size,
sizes from presets only (the upload cap through the real server: ``test_demo_server.py``)."""

from __future__ import annotations

import threading
import time

import pytest
from streamlit.testing.v1 import AppTest

from probing import config, feature_cache
from probing.budget import Budget
from probing.errors import JobStoppedError
from probing.features import extract_features, features_dir
from ui import jobs


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CONTEXTLENS_CACHE_DIR", str(tmp_path))
    return tmp_path


def test_cache_stays_under_its_bound_after_many_distinct_sizes(minilm, cache, monkeypatch):
    monkeypatch.setenv("CONTEXTLENS_FEATURE_CACHE_MB", "1")
    bound = config.limits().feature_cache_bytes
    assert bound == 1024 * 1024
    sizes = range(2, 8)  # every value a visitor could type makes a new sample
    for n in sizes:
        feats = extract_features(minilm, "ud-ewt", "dev", "upos", max_sentences=n, batch_size=8)
        assert feature_cache.total_size(features_dir()) <= bound
        assert feats.path.is_dir()  # the entry just used is kept
    kept = feature_cache.entries(features_dir())
    assert 1 <= len(kept) < len(sizes)  # older entries were evicted, least recently used first
    # A layer subset or a label field is a view onto the entry: no new entry.
    before = sorted(p.name for p in kept)
    extract_features(minilm, "ud-ewt", "dev", None, layers=[0, 6], max_sentences=7, batch_size=8)
    assert sorted(p.name for p in feature_cache.entries(features_dir())) == before


def test_least_recently_used_entry_goes_first(minilm, cache, monkeypatch):
    a = extract_features(minilm, "ud-ewt", "dev", max_sentences=3, batch_size=8)
    b = extract_features(minilm, "ud-ewt", "dev", max_sentences=4, batch_size=8)
    time.sleep(0.01)  # distinct mtimes
    extract_features(minilm, "ud-ewt", "dev", max_sentences=3, batch_size=8)  # a used again
    size = feature_cache.entry_size(a.path)
    removed = feature_cache.evict(features_dir(), size + 1)
    assert removed == [b.path] and a.path.is_dir()


def test_budget_stops_a_heavy_job_while_another_session_stays_responsive(minilm):
    sentences = [["The", "label", "bomb", "keeps", "the", "server", "busy", "."]] * 64
    light_done = threading.Event()
    events: list[str] = []

    def light_session() -> None:
        minilm.encode(["A visitor on another page."])  # a light request, meanwhile
        events.append("light finished")
        light_done.set()

    budget = Budget(3, 8 * 2**30, what="Probing")
    with pytest.raises(JobStoppedError, match=r"stopped after \d+ s.*at most 3 s") as info, budget:
        threading.Thread(target=light_session).start()
        while True:  # heavy work that never ends on its own
            minilm.encode(sentences, batch_size=32)
            events.append("heavy batch")
    events.append("heavy stopped")
    assert light_done.wait(60)
    assert events.index("light finished") < events.index("heavy stopped")
    assert budget.elapsed_s < 3 + 30  # stopped at its budget (a batch or so late at most)
    assert "Ask for less" in str(info.value)


def test_a_job_whose_page_is_closed_stops():
    open_page = threading.Event()
    open_page.set()
    threading.Timer(0.5, open_page.clear).start()  # the visitor closes the tab
    with (
        pytest.raises(JobStoppedError, match="page was closed"),
        Budget(600, 8 * 2**30, what="Probing", alive=open_page.is_set),
    ):
        while True:
            sum(range(1000))


def test_a_job_over_its_memory_budget_stops():
    hog = []
    with pytest.raises(JobStoppedError, match="more than 64 MB"), Budget(600, 64 * 2**20):
        while True:
            hog.append(bytearray(8 * 2**20))
            hog[-1][::4096] = b"x" * len(range(0, 8 * 2**20, 4096))  # make the pages resident


def _heavy_page() -> None:
    import streamlit as st

    from ui.common import friendly_errors
    from ui.jobs import heavy_job

    with friendly_errors("Probing"), heavy_job("Probing", seconds=2):
        while True:
            sum(range(10_000))
    st.write("never")


def _light_page() -> None:
    import streamlit as st

    st.write("still here")


def test_heavy_job_on_a_page_stops_with_a_message_and_frees_the_slot():
    heavy = AppTest.from_function(_heavy_page, default_timeout=120)
    light = AppTest.from_function(_light_page, default_timeout=60)
    runner = threading.Thread(target=heavy.run)
    runner.start()
    # Each AppTest run ends by clearing Streamlit's Runtime singleton: the light run must not
    # end before the heavy script has started (that race failed CI on a loaded machine).
    deadline = time.monotonic() + 60
    while jobs._gate().status()[0] == 0 and time.monotonic() < deadline:
        time.sleep(0.02)
    light.run()  # a second session is served while the first one's job runs
    assert [m.value for m in light.markdown] == ["still here"]
    runner.join(120)
    assert not heavy.exception
    assert "stopped after" in heavy.error[0].value
    heavy.run()  # the slot was released: the next job gets it (and is stopped again)
    assert "stopped after" in heavy.error[0].value


def test_demo_offers_preset_sizes_only(monkeypatch, cache):
    monkeypatch.setenv("CONTEXTLENS_DEMO", "1")
    at = AppTest.from_file(str(config.REPO_ROOT / "pages" / "4_Probing.py"), default_timeout=120)
    at.run()
    assert not at.exception
    train = at.select_slider(key="probe_train")
    assert list(map(int, train.options)) == list(config.limits().train_sizes)
    assert list(map(int, at.selectbox(key="probe_eval").options)) == [0, 500, 1000]


def test_a_sample_read_from_a_larger_entry_is_that_sample(minilm, cache):
    """What a cached whole split serves for a sample: the same words, vectors and sentence
    numbering as encoding just those sentences."""
    from probing.features import _sample_view, features_of_sentences, read_sentences

    whole = extract_features(minilm, "ud-ewt", "dev", max_sentences=12, batch_size=8)
    keep = [1, 4, 7, 10]
    view = _sample_view(whole, keep).with_label("upos")
    by_id = {s.sent_id: s for s in read_sentences("ud-ewt", "dev")}
    chosen = [by_id[whole.sent_ids[i]] for i in keep]
    direct = features_of_sentences(minilm, chosen, "upos", batch_size=8)
    assert view.sent_ids == direct.sent_ids
    assert list(view.words) == list(direct.words) and list(view.labels) == list(direct.labels)
    assert list(view.sentence_index) == list(direct.sentence_index)
    for layer in (0, 6):
        assert abs(view.layer(layer) - direct.layer(layer)).max() < 2e-2


def test_uploads_per_session_are_bounded_and_freed_with_the_session():
    from streamlit.runtime.memory_uploaded_file_manager import MemoryUploadedFileManager
    from streamlit.runtime.uploaded_file_manager import UploadedFileRec

    from ui.demo_guard import bound_session_uploads, free_closed_sessions

    mgr = MemoryUploadedFileManager("/_stcore/upload_file")
    assert bound_session_uploads(mgr, 4 * 2**20)
    for i in range(10):  # ten capped files PUT straight to one session
        mgr.add_file("visitor", UploadedFileRec(f"f{i}", "x.conllu", "text/plain", b"x" * 2**21))
    kept = mgr.file_storage["visitor"]
    assert list(kept) == ["f8", "f9"]  # the newest, within 2 x the cap
    mgr.add_file("other", UploadedFileRec("g", "y.conllu", "text/plain", b"y" * 100))
    # The visitor's tab closed and Streamlit dropped the session: its bytes go too.
    assert free_closed_sessions(mgr, lambda sid: sid == "other") == ["visitor"]
    assert list(mgr.file_storage) == ["other"]
