"""Control tasks (Hewitt & Liang 2019, "Designing and Interpreting Probes with Control Tasks").

A control task keeps a task's output space and label distribution but makes the labels a
function of the *word type* alone: every type gets one label, drawn at random from the
task's empirical label distribution (the training tokens' label frequencies). A probe can
score well on it only by memorising types, so

    selectivity = task accuracy - control accuracy   (same probe, same split, per layer)

tells how much of a probe's accuracy reflects the representation rather than the probe's
capacity to memorise. A *selective* probe has high task accuracy and low control accuracy.

The label of a type is a deterministic function of (seed, type): a hash of the two gives a
uniform number in [0, 1) that picks a label by inverse CDF. So a type has the same control
label in train, dev and test, in any order and in any process, and unseen test types get a
label too (one the probe cannot have learned, as in the paper).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np


class ControlTask:
    """Fixed random label per word type, from a task's label distribution.

    Args:
        seed: which random assignment (control runs with another seed give another one).

    Attributes (after ``fit``):
        labels_: (k,) the task's labels, sorted. probs_: (k,) their token frequencies.
    """

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed

    def fit(self, words: Sequence[str], labels: Sequence) -> ControlTask:
        """Learn the label distribution from training tokens (words are not used)."""
        self.labels_, counts = np.unique(np.asarray(labels), return_counts=True)
        self.probs_ = counts / counts.sum()
        return self

    def transform(self, words: Sequence[str]) -> np.ndarray:
        """(n,) the control label of each word (by type)."""
        types, inverse = np.unique(np.asarray(words, dtype=str), return_inverse=True)
        u = np.array([self._uniform(t) for t in types])
        cdf = np.cumsum(self.probs_)
        cdf[-1] = 1.0  # guard against rounding: u < 1 always maps to a label
        return self.labels_[np.searchsorted(cdf, u, side="right")][inverse]

    def fit_transform(self, words: Sequence[str], labels: Sequence) -> np.ndarray:
        return self.fit(words, labels).transform(words)

    def _uniform(self, word_type: str) -> float:
        digest = hashlib.sha256(f"{self.seed}\x00{word_type}".encode()).digest()
        return int.from_bytes(digest[:8], "big") / 2.0**64


def selectivity(task_scores: Sequence[float], control_scores: Sequence[float]) -> np.ndarray:
    """(n_layers,) task minus control accuracy, layer by layer (same split for both)."""
    return np.asarray(task_scores, dtype=float) - np.asarray(control_scores, dtype=float)
