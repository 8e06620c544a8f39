"""The LM training text: sources, order, and that nothing held out leaks in."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from probing.datasets.brown import brown_files, brown_split, brown_words
from probing.datasets.splits import brown_file_for_semcor, semcor_split
from probing.datasets.ud import read_ud
from probing.training import corpus


@pytest.fixture(scope="module")
def stats(data_dir: Path) -> dict[str, dict[str, int]]:
    return corpus.corpus_stats(data_dir)


def test_stats_per_source(stats: dict[str, dict[str, int]]) -> None:
    assert stats["brown"] == {"sentences": 45637, "tokens": 928901}
    assert stats["ud-ewt-train"] == {"sentences": 12544, "tokens": 204577}
    # WordNet 3.0: 117,659 synset definitions + 48,339 usage examples.
    assert stats["wordnet-glosses"]["sentences"] == 117659 + 48339
    assert stats["heldout"] == {"sentences": 2001, "tokens": 25147}
    for key in ("sentences", "tokens"):
        assert stats["total"][key] == sum(stats[s][key] for s in corpus.TRAIN_SOURCES)


def _file_sentences(data_dir: Path, file_id: str) -> set[tuple[str, ...]]:
    text = (data_dir / "brown" / file_id).read_text(encoding="utf-8")
    return {tuple(t.rpartition("/")[0] for t in ln.split()) for ln in text.splitlines() if ln.split()}


def test_excludes_brown_files_of_semcor_dev_test_docs(data_dir: Path) -> None:
    docs = [
        p.name
        for sub in ("brown1", "brown2")
        for p in (data_dir / "semcor-3.0" / sub / "tagfiles").iterdir()
    ]
    held = sorted({brown_file_for_semcor(d) for d in docs if semcor_split(d) != "train"})
    assert len(held) > 10
    assert all(brown_split(f) != "train" for f in held)
    train_brown = {tuple(w) for w in brown_words(split="train", data_dir=data_dir)}
    for file_id in held:
        sents = _file_sentences(data_dir, file_id)
        # Short formulaic lines ("Yes .") recur across files; real text must be absent.
        assert len(sents & train_brown) < 0.05 * len(sents), file_id


def test_brown_part_is_exactly_the_train_files(data_dir: Path) -> None:
    train_files = [f for f in brown_files(data_dir) if brown_split(f) == "train"]
    first_in_corpus = next(corpus.training_sentences(data_dir))
    assert tuple(first_in_corpus) in _file_sentences(data_dir, train_files[0])
    assert 350 < len(train_files) < 450  # about 80 % of 500 files


def test_no_ewt_dev_or_test_sentence(data_dir: Path) -> None:
    train_ewt = {tuple(w) for w in corpus._ewt_train(data_dir)}
    for split in ("dev", "test"):
        sents = [tuple(s.words) for s in read_ud(split, data_dir) if len(s.words) > 8]
        assert sum(s in train_ewt for s in sents) < 0.01 * len(sents)
    held = list(corpus.heldout_sentences(data_dir))
    assert held[0] == ["From", "the", "AP", "comes", "this", "story", ":"]


def test_order_is_deterministic(data_dir: Path) -> None:
    a = list(itertools.islice(corpus.training_sentences(data_dir), 3))
    b = list(itertools.islice(corpus.training_sentences(data_dir), 3))
    assert a == b
    assert a[0][:4] == ["The", "Fulton", "County", "Grand"]
