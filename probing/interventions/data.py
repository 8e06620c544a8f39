"""Labelled words for erasure: which data set and field a task reads, and an even sample of a
split's sentences with one label per word (None where a word has none)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from probing.errors import TaskLabelsMissingError

# Tasks whose label is a word's own (Elazar et al. erase word-level properties): deprel is
# the relation of the word to its head, written on the dependent, subtypes merged.
ERASABLE = ("pos", "xpos", "ptb-pos", "deprel", "supersense")


def task_field(task: str, dataset: str | None = None) -> tuple[str, str]:
    """(data set, label field) of ``task``.

    Raises:
        TaskLabelsMissingError: a task that is not a word-level label, or a data set that
            does not carry its labels.
    """
    from probing.probes.tasks import TASKS

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
    """``sentences`` (word lists), ``labels`` per word (None: unlabelled)."""

    sentences: list[list[str]]
    labels: list[list[str | None]]

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
    if n_sentences < len(sents):
        idx = np.unique(np.linspace(0, len(sents) - 1, n_sentences).round().astype(int))
        sents = [sents[i] for i in idx]
    labels = []
    for s in sents:
        raw = s.labels[field]
        if field == "deprel":
            raw = [r.split(":")[0] if r else None for r in raw]
        labels.append([r or None for r in raw])
    return LabelledWords([list(s.words) for s in sents], labels)
