"""Erasure judged out of sample: the word sets of an erasure run and the two protocols.

An eraser is fitted on the *fit* words (the training split, as much of it as memory allows).
After erasure a probe can be trained

- **in-sample**: on erased words the eraser was fitted on (Elazar et al. 2021 and Belrose et
  al. 2023 retrain on the eraser's training set). LEACE leaves no linear information in
  exactly those words, so this probe falls to the majority baseline by construction;
- **held-out**: on erased words the eraser never saw (the dev split), scored on erased test
  words, as Ravfogel et al. (2020) judge INLP on a held-out set. What this probe recovers is
  the linear information the eraser, fitted on finitely many words, did not remove.

:func:`check_disjoint` refuses a held-out set that shares a sentence with the fit set, so a
held-out figure cannot silently be an in-sample one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from probing.interventions.data import LabelledWords

if TYPE_CHECKING:
    import torch

    from probing.encoders.bert import TransformersMaskedLM
    from probing.encoders.elmo import ElmoEncoder


@dataclass(frozen=True)
class WordSet:
    """One sample's labelled words: ``data`` (sentences, labels, ids), the flat labels ``y``,
    sentence index ``sent`` and word index ``word`` of each labelled word, and its clean
    vectors ``X`` (n_layers + 1, n_words, dim) float32 (None until encoded)."""

    data: LabelledWords
    y: np.ndarray
    sent: np.ndarray
    word: np.ndarray
    X: np.ndarray | None = None

    @classmethod
    def of(cls, data: LabelledWords) -> WordSet:
        y, s, w = data.flat()
        return cls(data, y, s, w)

    @property
    def ids(self) -> tuple[str, ...]:
        return self.data.ids

    def __len__(self) -> int:
        return int(len(self.y))

    def rows_of(self, index: Sequence[int]) -> np.ndarray:
        """Word rows of the sentences at ``index``, in that order (a subset's ``flat`` order)."""
        starts = np.searchsorted(self.sent, np.asarray(index, int), side="left")
        ends = np.searchsorted(self.sent, np.asarray(index, int), side="right")
        if not len(starts):
            return np.zeros(0, int)
        return np.concatenate([np.arange(a, b) for a, b in zip(starts, ends, strict=True)])

    def subset(self, index: Sequence[int]) -> WordSet:
        """The sentences at ``index`` with their (already encoded) vectors."""
        sub = WordSet.of(self.data.subset(index))
        X = None if self.X is None else self.X[:, self.rows_of(index)]
        return WordSet(sub.data, sub.y, sub.sent, sub.word, X)


def check_disjoint(fit_ids: Sequence[str], heldout_ids: Sequence[str], what: str) -> None:
    """Raise when ``heldout_ids`` shares a sentence with ``fit_ids``.

    Raises:
        InvalidArgumentError: naming the shared sentences' count and one of them.
    """
    from probing.errors import InvalidArgumentError

    shared = set(fit_ids) & set(heldout_ids)
    if shared:
        raise InvalidArgumentError(
            f"{what}: {len(shared)} sentences (e.g. {sorted(shared)[0]!r}) are also in the "
            "eraser's fit set; a held-out probe must be trained on words the eraser never saw."
        )


def encode_words(
    encoder: TransformersMaskedLM | ElmoEncoder,
    words: WordSet,
    chunk: int = 256,
    progress: Callable[[int, int], None] | None = None,
    layer: int = 0,
    fn: Callable | None = None,
) -> WordSet:
    """``words`` with the vectors of its labelled words, every layer: clean, or with ``fn``
    applied at ``layer`` and the later layers recomputed (:func:`layers_after`).

    Sentences run in order of length (little padding) ``chunk`` at a time, and only the
    labelled words' vectors are kept, so the whole training split fits in memory.
    """
    from probing.interventions.recompute import layers_after

    sentences = words.data.sentences
    order = np.argsort([len(s) for s in sentences], kind="stable")
    X: np.ndarray | None = None
    for start in range(0, len(order), chunk):
        idx = order[start : start + chunk]
        chunk_sentences = [sentences[i] for i in idx]
        per_sentence = layers_after(encoder, chunk_sentences, layer, fn or _identity)
        for i, arr in zip(idx, per_sentence, strict=True):
            rows = words.rows_of([i])
            if X is None:
                X = np.empty((arr.shape[0], len(words), arr.shape[2]), np.float32)
            X[:, rows] = arr[:, words.word[rows]]
        if progress is not None:
            progress(min(start + chunk, len(order)), len(order))
    assert X is not None, "no sentences to encode"
    return WordSet(words.data, words.y, words.sent, words.word, X)


def _identity(h: torch.Tensor) -> torch.Tensor:
    return h


def fit_sizes(curve: Sequence[int], n_fit: int) -> list[int]:
    """The fitting-set sizes (sentences) of the curve: those of ``curve`` below ``n_fit``,
    then ``n_fit`` itself (the run's own eraser)."""
    return sorted({int(n) for n in curve if 0 < int(n) < n_fit}) + [n_fit]
