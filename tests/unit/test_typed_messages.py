"""Issue 48.5: no library text reaches the user. Each case the hostile battery met with a raw
exception (a library's words, a bug in an error path) now raises the project's typed error,
whose message says what happened and what to do. Library level, no model: quick."""

from __future__ import annotations

import errno
import pickle
import threading
import time
from collections.abc import Callable
from types import SimpleNamespace
from typing import TYPE_CHECKING, NoReturn

import numpy as np
import pytest

from probing.errors import (
    CacheNotWritableError,
    ContextLensError,
    DataFormatError,
    DiskFullError,
    InputTooLongError,
    NotACorpusError,
    TrainingLogNotFoundError,
    UnknownDatasetError,
    VerbFormError,
)

if TYPE_CHECKING:
    from ui.gate import Gate


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CONTEXTLENS_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


# -- an error that crosses from the worker process -------------------------------------------


def test_input_too_long_error_survives_pickle():
    """A long ``map_sentences`` link ended in "TypeError: InputTooLongError.__init__()
    missing … 'limit'": the worker's error was rebuilt from its message alone."""
    back = pickle.loads(pickle.dumps(InputTooLongError(600, 512, unit="pieces")))
    assert type(back) is InputTooLongError
    assert (back.length, back.limit, back.unit) == (600, 512, "pieces")
    assert "600 pieces" in str(back) and "at most 512" in str(back)


def test_the_worker_sends_errors_that_come_back_whole():
    from ui.worker import WorkerFailure, _sendable

    typed = InputTooLongError(600, 512)
    assert _sendable(typed) is typed

    class Awkward(Exception):  # pickles, but cannot be rebuilt from its args
        def __init__(self, a: int, b: int) -> None:
            super().__init__(f"{a}/{b}")

    sent = _sendable(Awkward(1, 2))
    assert isinstance(sent, WorkerFailure) and str(sent) == "Awkward: 1/2"
    assert not isinstance(sent, ContextLensError)  # the page shows it as unexpected, with an id
    pickle.loads(pickle.dumps(sent))

    class AwkwardTyped(ContextLensError):
        def __init__(self, a: int, b: int) -> None:
            super().__init__(f"Use fewer than {a}.")
            self.b = b

    sent = _sendable(AwkwardTyped(3, 4))
    assert type(sent) is ContextLensError and str(sent) == "Use fewer than 3."


# -- data set names ---------------------------------------------------------------------------


def test_an_unknown_or_lexicon_data_set_is_typed():
    from probing.datasets import read_sentences
    from probing.datasets.registry import get_dataset

    with pytest.raises(UnknownDatasetError, match="choose one of: ud-ewt") as info:
        get_dataset("../../etc/passwd")
    # still the KeyError and ValueError its callers catch
    assert isinstance(info.value, KeyError) and isinstance(info.value, ValueError)
    assert str(info.value).startswith("Unknown data set '../../etc/passwd'")
    with pytest.raises(NotACorpusError, match="lexicon.*choose one of: ud-ewt"):
        list(read_sentences("wordnet", "train"))


# -- a full or read-only cache ----------------------------------------------------------------


def test_cache_writes_name_the_folder_and_the_setting(cache):
    from safetensors import SafetensorError

    from probing.io import cache_writes

    with pytest.raises(CacheNotWritableError) as info, cache_writes("the probe results"):
        raise OSError(errno.EROFS, "Read-only file system", "/somewhere")
    text = str(info.value)
    assert str(cache) in text and "CONTEXTLENS_CACHE_DIR" in text and "read-only" in text
    assert isinstance(info.value, ContextLensError) and "Errno" not in text
    # safetensors says the OS error only in its text
    full = SafetensorError(
        'Error while serializing: IoError(Os { code: 28, kind: StorageFull, message: "No space '
        'left on device" })'
    )
    with (
        pytest.raises(DiskFullError, match="is full.*CONTEXTLENS_CACHE_DIR") as info,
        cache_writes("the neighbour pool"),
    ):
        raise full
    assert "IoError" not in str(info.value)
    with pytest.raises(KeyError), cache_writes("x"):  # anything else: not the cache's doing
        raise KeyError("x")


def test_a_neighbour_pool_on_a_full_disk_is_typed(cache, monkeypatch):
    import safetensors.numpy
    from safetensors import SafetensorError

    from probing.analyses import pool_store

    def full(*args, **kwargs):
        raise SafetensorError(
            'Error while serializing: IoError(Os { code: 28, kind: StorageFull, message: "No '
            'space left on device" })'
        )

    monkeypatch.setattr(safetensors.numpy, "save_file", full)
    vectors = np.ones((2, 3, 4), dtype=np.float32)
    with pytest.raises(DiskFullError, match=f"cache folder {cache} is full"):
        pool_store.save_pool("k", {"words": ["a", "b", "c"]}, vectors, vectors[0])
    assert not list((cache / "neighbour-pools").glob("*"))  # nothing half-written


def test_probe_results_in_a_read_only_cache_are_typed(cache, monkeypatch):
    from pathlib import Path

    from probing.probes import store

    def read_only(self, *args, **kwargs):
        raise OSError(errno.EROFS, "Read-only file system", str(self))

    monkeypatch.setattr(Path, "mkdir", read_only)
    with pytest.raises(CacheNotWritableError, match="CONTEXTLENS_CACHE_DIR"):
        store.save_results(object(), cache / "probe_results" / "x.json")  # type: ignore[arg-type]


# -- patching a user's pair -------------------------------------------------------------------

A, B = "The key to the cabinets [MASK] here.", "The keys to the cabinets [MASK] here."


@pytest.mark.parametrize(
    ("forms", "said"),
    [
        (("is", "is"), "Both verb forms are 'is'"),
        (("", ""), "Type the singular verb form"),
        (("is", "  "), "Type the plural verb form"),
        (("is\x00", "are"), "control characters"),
        (("\x00", "\x00"), "control characters"),
        (("is", "are not"), "plural verb form 'are not' is not one word"),
    ],
)
def test_verb_forms_that_cannot_be_compared_are_refused(forms, said):
    """Identical, empty or NUL forms ended in "zip() argument 2 is shorter than argument 1"."""
    from probing.interventions.patching import user_pair

    with pytest.raises(VerbFormError, match=said):
        user_pair(A, B, forms)


def test_good_verb_forms_are_taken_stripped():
    from probing.interventions.patching import user_pair

    (base, source, _), _ = user_pair(A, B, (" is ", "are"))
    assert (base.correct, base.wrong, source.correct) == ("is", "are", "are")


# -- tree probes on an upload of one-word sentences ------------------------------------------


class _Unused:
    """An encoder that must not be reached: the refusal comes before any encoding."""

    @property
    def info(self) -> NoReturn:
        raise AssertionError("the upload was encoded")


@pytest.mark.parametrize("task", ["dep-distance", "dep-depth"])
def test_tree_probes_refuse_one_word_sentences_before_encoding(task):
    """20,000 one-word sentences for tree distance ended in pandas' "Encountered all NA
    values" (every score undefined), after encoding them all."""
    from probing.datasets.upload import read_conllu_upload
    from probing.probes.upload import probe_upload

    text = "".join(f"1\tword{i}\t_\tNOUN\t_\t_\t0\troot\t_\t_\n\n" for i in range(200))
    sentences = read_conllu_upload(text.encode(), 10**7)
    with pytest.raises(DataFormatError, match="single word.*two or more words"):
        probe_upload(_Unused(), sentences, task=task)


# -- the queue's estimate ---------------------------------------------------------------------


def _waiter(gate: Gate, seen: list, **kwargs: object) -> threading.Thread:
    t = threading.Thread(
        target=lambda: gate.release(
            gate.acquire("umap", waiting=lambda n, s: seen.append((n, s)), **kwargs)
        ),
        daemon=True,
    )
    t.start()
    return t


def _wait_for(cond: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def test_the_queue_estimate_includes_the_running_jobs_own_estimate():
    """A fresh server (no job kind seen finishing) said "about 30 s" for a wait of 129 s: the
    running job's estimate (the Probing page's cost model) now counts."""
    from ui.gate import Gate

    gate = Gate(1)
    running = gate.acquire("Probing", expected_s=129.0)
    seen: list[tuple[int, float]] = []
    waiter = _waiter(gate, seen)
    _wait_for(lambda: seen)
    assert seen[0][0] == 1 and 120 <= seen[0][1] <= 129
    gate.release(running)
    waiter.join(10)


def test_the_queue_estimate_adds_the_jobs_queued_ahead_and_follows_an_overrun(monkeypatch):
    import ui.gate as gate_module
    from ui.gate import Gate

    monkeypatch.setattr(gate_module, "REFRESH_S", 0.2)
    gate = Gate(1)
    clock = [1000.0]  # the gate's clock only (the test's own waits keep the real one)
    monkeypatch.setattr(gate_module, "time", SimpleNamespace(monotonic=lambda: clock[0]))
    running = gate.acquire("a", expected_s=60.0)
    second: list[tuple[int, float]] = []
    _waiter(gate, second, expected_s=100.0, poll_s=0.01)
    _wait_for(lambda: second)
    third: list[tuple[int, float]] = []
    _waiter(gate, third, poll_s=0.01)
    _wait_for(lambda: third)
    assert third[0] == (2, pytest.approx(160.0))  # 60 s left ahead, then the second's 100 s
    # The running job is now past its 60 s: it has about as long again to go as it has run,
    # and the waiting page is told again (not "1 s", not the first figure for ever).
    clock[0] += 90.0
    _wait_for(lambda: any(s > 170 for _, s in third))
    assert third[-1] == (2, pytest.approx(190.0))
    gate.release(running)
    _wait_for(lambda: gate.status() == (0, 0))


# -- model cards without a training log --------------------------------------------------------


def test_a_card_without_its_training_log_is_typed(tmp_path):
    from probing.training.cards import read_card_inputs

    with pytest.raises(TrainingLogNotFoundError, match="lacks training_log.json"):
        read_card_inputs(tmp_path, "training_log.json")
    with pytest.raises(TrainingLogNotFoundError, match="is not a folder"):
        read_card_inputs(tmp_path / "nope", "training_log.json")
    (tmp_path / "training_log.json").write_text('{"steps": 3}', encoding="utf-8")
    assert read_card_inputs(tmp_path, "training_log.json") == {"steps": 3}
