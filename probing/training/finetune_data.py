"""The fine-tuning runs' sentences: UD-EWT UPOS and Brown genre, sampled with fixed seeds.

Every fine-tuning seed trains on the same sentences (the data seed is fixed, the run's seed
changes only initialisation, order and dropout), and the test sentences are the ones the
probes score (:data:`UPOS_TEST` of UD-EWT test with the feature cache's sample,
:data:`GENRE_PER_DOC` of Brown test per document), so that a fine-tuned model and a probe
are compared on the same sentences, paired.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from probing.training.finetune import Example

DATA_SEED = 0
UPOS_TEST = 200  # UD-EWT test sentences scored (the feature cache's seeded sample)


@dataclass(frozen=True)
class Sizes:
    """How many sentences each split of a run takes (the card records these)."""

    upos_train: int = 240
    upos_dev: int = 60
    genre_train_per_doc: int = 1
    genre_train: int = 240  # of those, a seeded sample
    genre_dev_per_doc: int = 1
    genre_test_per_doc: int = 5


def pick(n: int, k: int | None, seed: int) -> np.ndarray:
    """A seeded sample of k of n indices, sorted (all of them when k is None or >= n)."""
    if k is None or k >= n:
        return np.arange(n)
    return np.sort(np.random.default_rng(seed).choice(n, size=k, replace=False))


def upos_examples(split: str, k: int | None) -> list[Example]:
    """``k`` UD-EWT sentences of ``split`` (seeded sample, data-set order) with UPOS tags."""
    from probing.features import read_sentences

    sents = read_sentences("ud-ewt", split)
    return [
        Example(list(sents[i].words), list(sents[i].labels["upos"]))
        for i in pick(len(sents), k, DATA_SEED)
    ]


def upos_test_examples() -> tuple[list[Example], list[int]]:
    """The UD-EWT test sentences the probes score (``max_test_sentences`` = :data:`UPOS_TEST`
    through the feature cache's sample) and their indices in the split."""
    from probing.features import _sample, read_sentences

    sents = read_sentences("ud-ewt", "test")
    keep = [int(i) for i in _sample(len(sents), UPOS_TEST)]
    return [Example(list(sents[i].words), list(sents[i].labels["upos"])) for i in keep], keep


def genre_sentences(split: str, per_doc: int) -> list:
    """Brown sentences of ``split``, at most ``per_doc`` per document (the sentence probe's
    seeded sampling, :func:`probing.probes.sentence.sample_sentences`)."""
    from probing.probes.sentence import sample_sentences

    return sample_sentences(split, per_doc, DATA_SEED)[0]


def genre_examples(split: str, per_doc: int, k: int | None = None) -> list[Example]:
    """Brown sentences with their document's genre (``k``: a seeded sample of them)."""
    sents = genre_sentences(split, per_doc)
    return [
        Example(list(sents[i].words), str(sents[i].meta["genre"]))
        for i in pick(len(sents), k, DATA_SEED)
    ]


def task_data(task: str, sizes: Sizes) -> tuple[list[Example], list[Example]]:
    """(train, dev) examples of a fine-tuning task."""
    if task == "upos":
        return upos_examples("train", sizes.upos_train), upos_examples("dev", sizes.upos_dev)
    return (
        genre_examples("train", sizes.genre_train_per_doc, sizes.genre_train),
        genre_examples("dev", sizes.genre_dev_per_doc),
    )
