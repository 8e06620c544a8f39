"""Baselines a probe must beat: the majority label and the most frequent label per word type.

Both take words as their ``X`` so that they fit the scikit-learn ``fit/predict/score``
shape. (The third baseline, a linear probe on the context-free ``static`` vectors, is a
:class:`~probing.probes.linear.LinearProbe` and is run by :func:`probe_layers`.)
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin


def _majority(labels: Sequence) -> object:
    # Ties go to the label that sorts first, so the result never depends on input order.
    counts = Counter(labels)
    return min(counts, key=lambda k: (-counts[k], str(k)))


class MajorityBaseline(ClassifierMixin, BaseEstimator):
    """Predicts the most frequent training label for every word."""

    def fit(self, X: Sequence, y: Sequence) -> MajorityBaseline:
        self.majority_ = _majority(list(y))
        self.classes_ = np.unique(np.asarray(y))
        return self

    def predict(self, X: Sequence) -> np.ndarray:
        return np.full(len(X), self.majority_)


class WordTypeBaseline(ClassifierMixin, BaseEstimator):
    """Most frequent training label of each word type; unseen types get the overall majority.

    This is the strong lexical baseline: for POS tagging it already gets ~90 %, so a probe's
    accuracy means little unless it is compared with it.

    Args:
        lowercase: fold case when matching types.
    """

    def __init__(self, lowercase: bool = False) -> None:
        self.lowercase = lowercase

    def fit(self, X: Sequence[str], y: Sequence) -> WordTypeBaseline:
        by_type: dict[str, list] = defaultdict(list)
        for word, label in zip(X, y, strict=True):
            by_type[self._key(word)].append(label)
        self.table_ = {t: _majority(labels) for t, labels in by_type.items()}
        self.majority_ = _majority(list(y))
        self.classes_ = np.unique(np.asarray(y))
        return self

    def predict(self, X: Sequence[str]) -> np.ndarray:
        out = [self.table_.get(self._key(w), self.majority_) for w in X]
        return np.asarray(out, dtype=np.asarray(self.classes_).dtype)

    def seen(self, X: Sequence[str]) -> np.ndarray:
        """(n,) bool: whether each word's type occurred in training."""
        return np.array([self._key(w) in self.table_ for w in X], dtype=bool)

    def _key(self, word: str) -> str:
        return str(word).lower() if self.lowercase else str(word)
