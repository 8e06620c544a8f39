"""Labelled words for erasure: which data set and field a task reads, and an even sample of a
split's sentences with one label per word (None where a word has none)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from probing.errors import TaskLabelsMissingError
from probing.probes.tasks import TASKS, task_names

# Tasks whose label is a word's own (Elazar et al. erase word-level properties; deprel is the
# relation of the word to its head, written on the dependent, subtypes merged): the task
# record's ``erasable``.
ERASABLE = tuple(task_names(erasable=True))


def task_field(task: str, dataset: str | None = None) -> tuple[str, str]:
    """(data set, label field) of ``task``.

    Raises:
        TaskLabelsMissingError: a task that is not a word-level label, or a data set that
            does not carry its labels.
    """
    t = TASKS.get(task)
    if t is None or task not in ERASABLE:
        raise TaskLabelsMissingError(
            f"Erasure needs a word-level label; {task!r} is not one. Choose one of: "
            f"{', '.join(ERASABLE)}."
        )
    dataset = dataset or t.default_dataset
    if dataset not in t.fields:
        raise TaskLabelsMissingError(
            f"{dataset} has no {task} labels; {task} is labelled in: {', '.join(t.fields)}."
        )
    return dataset, t.fields[dataset]


@dataclass(frozen=True)
class LabelledWords:
    """``sentences`` (word lists), ``labels`` per word (None: unlabelled), ``ids`` (the data
    set's sentence ids, to check that two samples share no sentence; empty when unknown)."""

    sentences: list[list[str]]
    labels: list[list[str | None]]
    ids: tuple[str, ...] = ()

    def subset(self, index: np.ndarray | list[int]) -> LabelledWords:
        """The sentences at ``index`` (in that order)."""
        index = [int(i) for i in index]
        return LabelledWords(
            [self.sentences[i] for i in index],
            [self.labels[i] for i in index],
            tuple(self.ids[i] for i in index) if self.ids else (),
        )

    def evenly(self, n_sentences: int) -> LabelledWords:
        """``n_sentences`` spread evenly over these (all of them when there are no more): the
        rule of :func:`labelled_sample`, so a sample of the whole split equals its own
        ``evenly(n)``."""
        return self.subset(even_index(len(self.sentences), n_sentences))

    def without(self, other: LabelledWords) -> LabelledWords:
        """These sentences less those whose id is in ``other`` (order kept)."""
        drop = set(other.ids)
        return self.subset([i for i, sid in enumerate(self.ids) if sid not in drop])

    def flat(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(n,) labels, (n,) sentence index, (n,) word index of the labelled words."""
        lab, sent, word = [], [], []
        for s, labels in enumerate(self.labels):
            for w, lbl in enumerate(labels):
                if lbl:
                    lab.append(lbl)
                    sent.append(s)
                    word.append(w)
        return np.asarray(lab), np.asarray(sent), np.asarray(word)


def labelled_sample(
    dataset: str, split: str, field: str, n_sentences: int, max_words: int = 60
) -> LabelledWords:
    """``n_sentences`` spread evenly over the split (data-set order; no draw), with labels;
    sentences over ``max_words`` words are left out (one forward pass each, no windows).

    Raises:
        TaskLabelsMissingError: the split has no word labelled with ``field``.
    """
    from probing.features import read_sentences

    sents = read_sentences(dataset, split)
    sents = [
        s for s in sents if field in s.labels and any(s.labels[field]) and len(s.words) <= max_words
    ]
    if not sents:
        raise TaskLabelsMissingError(f"{dataset} {split} has no words labelled with {field!r}.")
    sents = [sents[i] for i in even_index(len(sents), n_sentences)]
    labels = []
    for s in sents:
        raw = s.labels[field]
        if field == "deprel":
            raw = [r.split(":")[0] if r else None for r in raw]
        labels.append([r or None for r in raw])
    return LabelledWords(
        [list(s.words) for s in sents], labels, tuple(str(s.sent_id) for s in sents)
    )


def even_index(n: int, k: int) -> np.ndarray:
    """``k`` indices spread evenly over ``range(n)`` (all ``n`` when ``k`` ≥ ``n``; no draw)."""
    if k >= n:
        return np.arange(n)
    return np.unique(np.linspace(0, n - 1, k).round().astype(int))
