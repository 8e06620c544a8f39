"""Holes a hostile battery found in the demo (issue 32): every limit enforced on the server
before the work it bounds, every failure contained and typed.

Real embedded model (minilm-l6) and real data; the hostile files are made here, in memory or
in ``tmp_path``. Memory is read from ``/proc/self/statm`` while the code runs.
"""

from __future__ import annotations

import threading
import time
import types
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import pytest
from streamlit.testing.v1 import AppTest

from probing import config
from probing.budget import rss_bytes
from probing.errors import ResourceLimitError

if TYPE_CHECKING:
    from probing.analyses.fill_mask import MaskPrediction
    from probing.encoders.base import Encoder
    from probing.probes.results import ProbeResults

REPO = Path(__file__).resolve().parents[2]
MB = 1024 * 1024


class PeakRss:
    """Context manager: the largest growth of this process's RSS (``/proc``) over the body."""

    def __init__(self, every_s: float = 0.02) -> None:
        self.every_s, self.peak_growth = every_s, 0
        self._stop = threading.Event()

    def _watch(self) -> None:
        while not self._stop.is_set():
            self.peak_growth = max(self.peak_growth, rss_bytes() - self.rss0)
            time.sleep(self.every_s)

    def __enter__(self) -> PeakRss:
        self.rss0 = rss_bytes()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def conllu_file(sentences: list[list[dict]]) -> bytes:
    """CoNLL-U bytes; each word a dict with form, upos, xpos, head, deprel."""
    blocks = []
    for words in sentences:
        blocks.append(
            "\n".join(
                f"{i}\t{w['form']}\t_\t{w.get('upos', 'NOUN')}\t{w.get('xpos', 'NN')}\t_\t"
                f"{w.get('head', 0 if i == 1 else i - 1)}\t{w.get('deprel', 'root' if i == 1 else 'dep')}\t_\t_"
                for i, w in enumerate(words, 1)
            )
        )
    return ("\n\n".join(blocks) + "\n\n").encode()


def refuse_encoding(encoder: Encoder, monkeypatch: pytest.MonkeyPatch) -> list:
    """Make ``encoder.encode`` record its calls and fail: nothing may be encoded."""
    calls: list = []

    def encode(*args, **kwargs):
        calls.append(1)
        raise AssertionError("the upload was encoded")

    monkeypatch.setattr(encoder, "encode", encode)
    return calls


# -- 1. the label check counts the column the task uses -------------------------------------


@pytest.mark.parametrize(("task", "column"), [("xpos", "xpos"), ("deprel", "deprel")])
def test_label_bomb_in_the_tasks_own_column_is_refused_before_encoding(
    minilm, monkeypatch, task, column
):
    """The attack: a ~1.9 MB file whose XPOS (or DEPREL) column has ~55,000 distinct tags
    and an ordinary UPOS column."""
    from probing.datasets.upload import read_conllu_upload
    from probing.probes.upload import probe_upload

    monkeypatch.setenv("CONTEXTLENS_DEMO", "1")
    sentences = [
        [{"form": f"w{i}", column: f"T{2 * i}"}, {"form": f"v{i}", column: f"T{2 * i + 1}"}]
        for i in range(27_940)
    ]
    data = conllu_file(sentences)
    assert 1.5 * MB < len(data) < config.limits().max_upload_bytes
    calls = refuse_encoding(minilm, monkeypatch)
    cpu0 = time.process_time()  # reading is CPU-bound: its CPU time does not depend on load
    parsed = read_conllu_upload(data, config.limits().max_upload_bytes)
    t0 = time.perf_counter()  # the part that holds the job slot
    with pytest.raises(ResourceLimitError, match=rf"{column.upper()} probe.*different labels"):
        probe_upload(minilm, parsed, task=task)
    assert time.perf_counter() - t0 < 10
    assert time.process_time() - cpu0 < 10
    assert calls == []


# -- 2. (and issue 31.3) allocations estimated from the input's size before they are made ---


def long_sentence_upload(n_words: int) -> bytes:
    """One sentence of ``n_words`` words in a chain (a valid tree), then four short ones."""
    long = [{"form": f"w{i % 50}"} for i in range(n_words)]
    short = [[{"form": w} for w in ("Dogs", "bark", "loudly", ".")]] * 4
    return conllu_file([long, *short])


def test_ten_thousand_word_sentence_is_refused_in_the_demo_within_a_memory_bound(
    minilm, monkeypatch
):
    from probing.datasets.upload import read_conllu_upload
    from probing.probes.upload import probe_upload

    monkeypatch.setenv("CONTEXTLENS_DEMO", "1")
    parsed = read_conllu_upload(long_sentence_upload(10_000), config.limits().max_upload_bytes)
    calls = refuse_encoding(minilm, monkeypatch)
    for task in ("dep-distance", "dep-depth", "pos"):
        t0 = time.perf_counter()
        with PeakRss() as rss, pytest.raises(ResourceLimitError, match=r"10,000 words.*at most"):
            probe_upload(minilm, parsed, task=task)
        assert time.perf_counter() - t0 < 5
        assert rss.peak_growth < 100 * MB, (task, rss.peak_growth / MB)
    assert calls == []


def test_long_sentence_is_refused_from_the_memory_estimate_without_a_length_cap(
    minilm, monkeypatch
):
    """Local mode has no length cap; the estimate against the job budget still refuses
    (13,000 words: the n x n targets alone are ~2 GB)."""
    from probing.datasets.upload import read_conllu_upload
    from probing.probes.upload import probe_upload
    from probing.probes.upload_budget import estimate_bytes

    monkeypatch.delenv("CONTEXTLENS_DEMO", raising=False)
    monkeypatch.setenv("CONTEXTLENS_JOB_MEMORY_MB", "1536")
    parsed = read_conllu_upload(long_sentence_upload(13_000), 10**8)
    calls = refuse_encoding(minilm, monkeypatch)
    with PeakRss() as rss, pytest.raises(ResourceLimitError, match=r"about [\d,]+ MB.*1,536 MB"):
        probe_upload(minilm, parsed, task="dep-distance")
    assert rss.peak_growth < 100 * MB and calls == []
    # The estimate grows as n^2 for tree distances, linearly for tagging.
    assert estimate_bytes([13_000], "dep-distance", 7, 384) > 2 * 1024**3
    assert estimate_bytes([13_000], "pos", 7, 384) < 1024 * MB


def test_shipped_treebank_sentences_fit_the_demo_caps(data_dir, monkeypatch):
    """The caps refuse only hostile files: every UD-EWT sentence fits them."""
    from probing.datasets import read_sentences
    from probing.probes.upload_budget import sentence_cap

    monkeypatch.setenv("CONTEXTLENS_DEMO", "1")
    longest = max(
        len(s.words) for split in ("train", "dev", "test") for s in read_sentences("ud-ewt", split)
    )
    assert longest <= sentence_cap("dep-distance") <= sentence_cap("pos")


def test_long_sentence_upload_on_the_demo_page_stays_inside_the_budget(
    minilm, monkeypatch, tmp_path
):
    """Issue 31.3 through the page: the upload is refused with one message, memory measured."""
    monkeypatch.setenv("CONTEXTLENS_DEMO", "1")
    monkeypatch.setenv("CONTEXTLENS_CACHE_DIR", str(tmp_path / "cache"))
    at = AppTest.from_file(str(REPO / "pages" / "4_Probing.py"), default_timeout=300).run()
    at.get("file_uploader")[0].set_value(
        ("long.conllu", long_sentence_upload(10_000), "text/plain")
    )
    at.run()
    at.selectbox(key="probe_upload_task").set_value("dep-distance").run()
    with PeakRss() as rss:
        at.button(key="probe_upload_run").click().run()
    assert not at.exception
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and "10,000 words" in errors[0], errors
    assert rss.peak_growth < config.limits().job_memory_bytes / 4, rss.peak_growth / MB


# -- 4. every text limit kept on the server, for widgets and query parameters ----------------


def shown_text(at: AppTest) -> str:
    """Everything the page shows as text, and the values of its text boxes."""
    parts = [
        e.value
        for kind in ("error", "warning", "info", "markdown", "caption", "exception")
        for e in getattr(at, kind)
    ]
    parts += [b.value for b in [*at.text_input, *at.text_area]]
    return "\n".join(str(p) for p in parts)


def demo_page(page: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> AppTest:
    monkeypatch.setenv("CONTEXTLENS_DEMO", "1")
    monkeypatch.setenv("CONTEXTLENS_CACHE_DIR", str(tmp_path / "cache"))
    return AppTest.from_file(str(REPO / "pages" / page), default_timeout=180)


def test_oversized_sentence_parameter_is_refused_before_work(minilm, monkeypatch, tmp_path):
    """``?sentence=`` of 100,000 characters: one warning with the sizes, the page works on
    its default sentence, the address loses the parameter, the text is never echoed."""
    import ui.views.fill_mask as view

    seen: list[int] = []
    real = view.fill_mask

    def fill_mask(
        encoder: Encoder,
        text: str,
        *args: Any,
        **kwargs: Any,  # Any: passed on as given
    ) -> list[MaskPrediction]:
        seen.append(len(text))
        return real(encoder, text, *args, **kwargs)

    monkeypatch.setattr(view, "fill_mask", fill_mask)
    at = demo_page("2_Fill_Mask.py", monkeypatch, tmp_path)
    at.query_params["sentence"] = "bank " * 20_000
    t0 = time.perf_counter()
    at.run()
    assert time.perf_counter() - t0 < 120  # a sanity bound; `seen` below is the real check
    assert not at.exception
    notes = [w.value for w in at.warning if "`sentence`" in w.value]
    assert notes and "100,000 characters" in notes[0] and "at most 2,000" in notes[0]
    assert "sentence" not in at.query_params or len(at.query_params["sentence"]) <= 2_000
    assert "bank bank bank bank bank bank" not in shown_text(at)
    assert seen and all(n <= 2_000 for n in seen)  # the default sentence was filled


@pytest.mark.parametrize(
    ("page", "key", "limit"),
    [
        ("1_Static_vs_Contextual.py", "sc_target", 40),
        ("1_Static_vs_Contextual.py", "sc_lemma", 40),
        ("2_Fill_Mask.py", "fill_mask_follow", 40),
        ("2_Fill_Mask.py", "fill_mask_text", 2_000),
    ],
)
def test_oversized_box_values_are_refused_on_the_server(
    minilm, monkeypatch, tmp_path, page, key, limit
):
    """A value the browser's max_chars would stop, sent straight to the server (as a
    hand-made websocket message does): refused with its size, never echoed."""
    at = demo_page(page, monkeypatch, tmp_path)
    at.session_state[key] = "q" * 100_000
    at.run()
    assert not at.exception
    notes = [w.value for w in at.warning if "100,000 characters" in w.value]
    assert len(notes) == 1 and f"at most {limit:,}" in notes[0], [w.value for w in at.warning]
    assert "q" * 50 not in shown_text(at)
    assert key not in at.session_state or len(at.session_state[key]) <= limit


def test_a_linked_value_over_its_box_limit_is_ignored(minilm, monkeypatch, tmp_path):
    """``?follow=`` under the page's text limit but over the follow box's 40 characters."""
    at = demo_page("2_Fill_Mask.py", monkeypatch, tmp_path)
    at.query_params["follow"] = "z" * 1_000
    at.run()
    assert not at.exception
    assert at.text_input(key="fill_mask_follow").value == ""


# -- 6. NSP checkpoint look-up follows the once-per-process offline decision ----------------


@pytest.fixture
def unreachable_hub(monkeypatch):
    """No HF_HUB_OFFLINE, and a hub address that refuses connections (a machine without
    internet access)."""
    from probing.models import hub

    for var in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")
    hub.reset()
    yield hub
    hub.reset()


def test_nsp_look_up_offline_answers_at_once_and_is_remembered(unreachable_hub, monkeypatch):
    from probing.analyses.nsp import load_nsp_model
    from probing.errors import NotCachedOfflineError

    t0 = time.perf_counter()
    with pytest.raises(NotCachedOfflineError, match="not in the local Hugging Face cache"):
        load_nsp_model("google-bert/bert-base-uncased")
    assert time.perf_counter() - t0 < 2

    def must_not_run(*_a, **_k):
        raise AssertionError("a remembered failure must not look the checkpoint up again")

    monkeypatch.setattr(unreachable_hub, "cached_snapshot", must_not_run)
    t0 = time.perf_counter()
    with pytest.raises(NotCachedOfflineError):
        load_nsp_model("google-bert/bert-base-uncased")
    assert time.perf_counter() - t0 < 0.1


def _warm_up() -> None:
    import streamlit as st

    st.write("ready")


def _nsp_tab() -> None:
    from ui.views import nsp

    nsp.render()


def test_nsp_tab_answers_in_under_two_seconds_offline(unreachable_hub):
    import ui.views.nsp  # noqa: F401 - imported before the clock starts, as in a running server

    AppTest.from_function(_warm_up, default_timeout=60).run()  # AppTest's own start-up
    at = AppTest.from_function(_nsp_tab, default_timeout=60)
    at.session_state["nsp_model"] = "google-bert/bert-base-uncased"  # BERT's own head
    t0 = time.perf_counter()
    at.run()
    assert time.perf_counter() - t0 < 2
    assert not at.exception
    errors = [e.value for e in at.error]
    assert errors and "not in the local Hugging Face cache" in errors[0]


def test_nsp_tab_in_the_demo_says_what_it_needs(unreachable_hub, monkeypatch):
    monkeypatch.setenv("CONTEXTLENS_DEMO", "1")
    at = AppTest.from_function(_nsp_tab, default_timeout=60).run()
    assert not at.exception and not at.error
    assert "nsp_model" not in {w.key for w in at.text_input}  # no box that cannot work
    info = " ".join(i.value for i in at.info)
    assert "google-bert/bert-base-uncased" in info and "your own machine" in info


# -- 5. a truncated result or probe file leaves its page usable; CLI writes are atomic ------

RESULTS = REPO / "results"


def truncate(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


@pytest.fixture
def results_copy(tmp_path) -> Path:
    """The committed results of minilm-l6 (results, per-sentence scores, saved probes)."""
    import shutil

    root = tmp_path / "results"
    for sub in ("", "sentence-scores", "probes"):
        (root / sub).mkdir(parents=True, exist_ok=True)
        for f in (RESULTS / sub).glob("minilm-l6__*"):
            shutil.copy(f, root / sub / f.name)
    return root


def page_naming_a_bad_file(
    page: str, view: types.ModuleType, results: Path, bad: str, monkeypatch: pytest.MonkeyPatch
) -> AppTest:
    """Run ``page`` on ``results`` for minilm-l6: no error or exception, one warning naming
    ``bad``."""
    monkeypatch.setattr(view, "RESULTS_DIR", results)
    at = AppTest.from_file(str(REPO / "pages" / page), default_timeout=300)
    at.session_state["models"] = ["minilm-l6"]
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert len([w.value for w in at.warning if bad in w.value]) == 1
    return at


def test_truncated_results_file_leaves_the_layering_page_usable(results_copy, monkeypatch):
    import ui.views.layering as view

    truncate(results_copy / "minilm-l6__ud-ewt__pos.json")
    at = page_naming_a_bad_file(
        "5_Layering.py", view, results_copy, "minilm-l6__ud-ewt__pos.json", monkeypatch
    )
    assert at.get("plotly_chart")  # the other tasks are drawn
    assert any("minilm-l6" in m.value and "(running best)" in m.value for m in at.markdown)


def test_truncated_saved_probe_leaves_the_probe_lens_usable(results_copy, monkeypatch, minilm):
    import ui.views.probe_lens as view

    truncate(results_copy / "probes" / "minilm-l6__ud-ewt__pos.safetensors")
    at = page_naming_a_bad_file(
        "7_Probe_Lens.py", view, results_copy, "minilm-l6__ud-ewt__pos", monkeypatch
    )
    assert at.get("plotly_chart")  # the other probes are applied


def test_cli_probe_outputs_are_written_atomically(tmp_path, monkeypatch):
    """A write that fails midway (full disk) leaves the previous files whole, no temp file."""
    import probing.figures.probing as figures
    from probing.cli.probe import write_outputs
    from probing.probes.run import ProbeResults

    results = ProbeResults.from_json(RESULTS / "minilm-l6__ud-ewt__pos.json")
    stem = "minilm-l6__ud-ewt__pos"
    write_outputs(results, tmp_path, stem)
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    assert sorted(before) == [f"{stem}.{ext}" for ext in ("csv", "html", "json")]

    def half_written(
        results: ProbeResults, path: str | Path, *args: object, **kwargs: object
    ) -> NoReturn:
        Path(path).write_text("<html><body>half")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(figures, "write_html", half_written)
    with pytest.raises(OSError, match="No space"):
        write_outputs(results, tmp_path, stem)
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before


# -- 3. a full disk: checked before extracting, ENOSPC typed, no temp folder left -----------

EXTRACT = """
import sys
from probing import feature_cache, load_encoder
from probing.errors import DiskFullError
from probing.features import extract_features

if sys.argv[1] == "skip-check":  # reach the writes, as a disk that fills up meanwhile would
    feature_cache.check_free_space = lambda *args: None
try:
    extract_features(load_encoder("minilm-l6"), "ud-ewt", "dev", max_sentences=50)
except DiskFullError as exc:
    print("typed:", exc)
    sys.exit(3)
"""


@pytest.fixture
def small_disk(tmp_path):
    """A 3 MB tmpfs as the cache's disk (mounting needs root; else the test is skipped and
    the simulated one below still runs)."""
    import subprocess

    disk = tmp_path / "disk"
    disk.mkdir()
    mounted = (
        subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", str(disk)],
            capture_output=True,
            check=False,
        ).returncode
        == 0
    )
    if not mounted:
        pytest.skip("cannot mount a tmpfs here (needs root)")
    yield disk
    subprocess.run(["umount", str(disk)], check=False)


def leftovers(cache: Path) -> list[str]:
    """Build folders (temporary, partial) and entries left in the feature cache."""
    root = cache / "features"
    return [p.name for p in root.iterdir() if p.is_dir()] if root.is_dir() else []


@pytest.mark.parametrize("mode", ["check", "skip-check"])
def test_full_disk_is_a_typed_error_and_leaves_nothing(small_disk, mode):
    """Before: memory-mapped writes onto the full tmpfs died with SIGBUS (exit -7, no
    message). Now the free-space check refuses before encoding; past it, the reserved
    blocks turn the full disk into ENOSPC, a typed error, and the build folder goes."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "CONTEXTLENS_CACHE_DIR": str(small_disk)}
    run = subprocess.run(
        [sys.executable, "-c", EXTRACT, mode],
        env=env,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert run.returncode == 3, (run.returncode, run.stderr[-2000:])
    assert "typed:" in run.stdout and "free some space" in run.stdout.lower()
    assert leftovers(small_disk) == []


def test_enospc_while_writing_is_typed_and_cleans_the_build_folder(minilm, cache_dir, monkeypatch):
    """Simulated where no tmpfs can be mounted: a write that fails with ENOSPC."""
    import errno

    import probing.features as features
    from probing.errors import DiskFullError

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(features.np, "save", full)
    with pytest.raises(DiskFullError, match="filled up"):
        features.extract_features(minilm, "ud-ewt", "dev", max_sentences=20)
    assert leftovers(cache_dir) == []


def test_free_space_is_checked_before_encoding(minilm, cache_dir, monkeypatch):
    import shutil
    from collections import namedtuple

    import probing.features as features
    from probing.errors import DiskFullError

    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(shutil, "disk_usage", lambda path: usage(10**9, 10**9 - 10**6, 10**6))
    calls = refuse_encoding(minilm, monkeypatch)
    with pytest.raises(DiskFullError, match=r"needs about [\d.]+ MB.*1\.0 MB free"):
        features.extract_features(minilm, "ud-ewt", "dev", max_sentences=20)
    assert calls == [] and leftovers(cache_dir) == []


@pytest.fixture
def cache_dir(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("CONTEXTLENS_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


# -- 7. the local vectors-file box: bounded streaming, regular files only, no echo ----------


def test_gzip_bomb_vectors_file_is_refused_within_a_memory_bound(tmp_path):
    """256 MiB of zeros in a ~250 KB gzip (the attack used 1 GiB): refused after reading a
    bounded amount, with a typed error and no quoted content."""
    import gzip

    from probing.analyses.static_vectors import load_static_vectors
    from probing.errors import DataFormatError

    bomb = tmp_path / "glove.txt.gz"
    block = bytes(MB)
    with gzip.open(bomb, "wb", compresslevel=1) as f:
        for _ in range(256):
            f.write(block)
    assert bomb.stat().st_size < 2 * MB
    t0 = time.perf_counter()
    with PeakRss() as rss, pytest.raises(DataFormatError, match="longer than") as info:
        load_static_vectors(bomb)
    assert rss.peak_growth < 50 * MB, rss.peak_growth / MB
    assert time.perf_counter() - t0 < 10
    assert "\x00" not in str(info.value)


def test_gzip_of_many_short_lines_is_bounded_by_its_ratio(tmp_path):
    import gzip

    from probing.analyses.static_vectors import MAX_GZIP_RATIO, load_static_vectors
    from probing.errors import DataFormatError

    bomb = tmp_path / "vectors.vec.gz"
    with gzip.open(bomb, "wb", compresslevel=9) as f:
        f.write(b"the 0.1 0.2\n")
        for _ in range(64):
            f.write(b"\n" * MB)  # blank lines: skipped by the parser, counted by the reader
    with PeakRss() as rss, pytest.raises(DataFormatError, match=f"{MAX_GZIP_RATIO}x its size"):
        load_static_vectors(bomb)
    assert rss.peak_growth < 50 * MB


def test_system_files_are_refused_without_echoing_them():
    """``/proc/self/environ`` (the server's environment) and a device: never read out."""
    import os

    from probing.analyses.static_vectors import load_static_vectors
    from probing.errors import DataFormatError

    secret = "CONTEXTLENS_TEST_SECRET_VALUE"
    os.environ["H32_SECRET"] = secret
    try:
        for path in ("/proc/self/environ", "/proc/self/cmdline", "/dev/zero"):
            with pytest.raises(DataFormatError) as info:
                load_static_vectors(path)
            assert secret not in str(info.value) and "PATH=" not in str(info.value), path
    finally:
        del os.environ["H32_SECRET"]


def test_a_text_file_that_is_not_vectors_is_not_quoted(tmp_path):
    from probing.analyses.static_vectors import load_static_vectors
    from probing.errors import DataFormatError

    notes = tmp_path / "notes.txt"
    notes.write_text("password=hunter2 and other secrets\n")
    with pytest.raises(
        DataFormatError, match="line 1: expected a word followed by numbers"
    ) as info:
        load_static_vectors(notes)
    assert "hunter2" not in str(info.value)
