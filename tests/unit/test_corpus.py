"""The LM training text: sources, order, and that nothing held out leaks in."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest

from probing.datasets.brown import brown_files, brown_split
from probing.datasets.splits import brown_file_for_semcor, semcor_split
from probing.datasets.types import Sentence
from probing.training import corpus


@pytest.fixture(scope="module")
def stats(data_dir: Path) -> dict[str, dict[str, int]]:
    return corpus.corpus_stats(data_dir)


def test_stats_per_source(stats: dict[str, dict[str, int]]) -> None:
    # Brown train files only (400 of 500 files; all dev/test files are held out).
    assert stats["brown"] == {"sentences": 45637, "tokens": 928901}
    # Exactly EWT train: 12,544 sentences / 204,577 syntactic words.
    assert stats["ud-ewt-train"] == {"sentences": 12544, "tokens": 204577}
    # WordNet 3.0: 117,659 synset definitions + 48,339 usage examples.
    assert stats["wordnet-glosses"] == {"sentences": 117659 + 48339, "tokens": 1533656}
    assert stats["heldout"] == {"sentences": 2001, "tokens": 25147}  # EWT dev
    for key in ("sentences", "tokens"):
        assert stats["total"][key] == sum(stats[s][key] for s in corpus.TRAIN_SOURCES)


def test_semcor_dev_test_documents_are_held_out(data_dir: Path) -> None:
    docs = [
        p.name
        for sub in ("brown1", "brown2")
        for p in (data_dir / "semcor-3.0" / sub / "tagfiles").iterdir()
    ]
    held = {brown_file_for_semcor(d) for d in docs if semcor_split(d) != "train"}
    assert len(held) == 36
    train_files = {f for f in brown_files(data_dir) if brown_split(f) == "train"}
    assert not held & train_files
    assert len(train_files) == 400


def test_sources_order_and_splits(monkeypatch: pytest.MonkeyPatch) -> None:
    """Which reader is asked for which split, in which order (stubs: no data read)."""
    calls: list[tuple[str, object]] = []

    def brown_words(split: object = None, data_dir: object = None) -> Iterator[list[str]]:
        calls.append(("brown", split))
        yield ["brown", "words"]

    def read_ud(split: str, data_dir: object = None) -> Iterator[Sentence]:
        calls.append(("ud", split))
        yield Sentence(words=[f"ud-{split}"], labels={}, doc_id="d", sent_id="s")

    def wordnet_glosses(data_dir: object = None) -> Iterator[tuple[str, str, str]]:
        calls.append(("wordnet", None))
        yield "00001740-n", "definition", "that which is perceived"
        yield "00001740-n", "example", "  "  # no words: skipped

    monkeypatch.setattr(corpus, "brown_words", brown_words)
    monkeypatch.setattr(corpus, "read_ud", read_ud)
    monkeypatch.setattr(corpus, "wordnet_glosses", wordnet_glosses)
    assert list(corpus.training_sentences()) == [
        ["brown", "words"],
        ["ud-train"],
        ["that", "which", "is", "perceived"],
    ]
    assert calls == [("brown", "train"), ("ud", "train"), ("wordnet", None)]
    calls.clear()
    assert list(corpus.heldout_sentences()) == [["ud-dev"]]
    assert calls == [("ud", "dev")]


def test_order_is_deterministic(data_dir: Path) -> None:
    a = list(itertools.islice(corpus.training_sentences(data_dir), 3))
    b = list(itertools.islice(corpus.training_sentences(data_dir), 3))
    assert a == b
    assert a[0][:4] == ["The", "Fulton", "County", "Grand"]
    assert next(corpus.heldout_sentences(data_dir)) == [
        "From",
        "the",
        "AP",
        "comes",
        "this",
        "story",
        ":",
    ]
