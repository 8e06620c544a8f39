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

A *type* is a word as the model sees it (:func:`model_type_keys`): for an uncased model
"The" and "the" are one input and so one type, for ELMo and cased models two. Keying by the
raw string would give one input two labels, which no probe can fit, and so understate
control accuracy (by 4–6 points on minilm-l6 UPOS) and overstate selectivity. Hewitt &
Liang's PTB data is lower-cased for their (uncased-input) ELMo setting; keying by the
model's normalisation generalises that.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from probing.encoders.base import Encoder

# words (unique types) -> one key per word: equal keys are one type for the control task
TypeKeys = Callable[[Sequence[str]], Sequence[str]]


class ControlTask:
    """Fixed random label per word type, from a task's label distribution.

    Args:
        seed: which random assignment (control runs with another seed give another one).
        type_keys: maps words to type keys (default: the word itself); pass
            :func:`model_type_keys` of the probed model so that types are what it sees.

    Attributes (after ``fit``):
        labels_: (k,) the task's labels, sorted. probs_: (k,) their token frequencies.
    """

    def __init__(self, seed: int = 0, type_keys: TypeKeys | None = None) -> None:
        self.seed = seed
        self.type_keys = type_keys

    def fit(self, words: Sequence[str], labels: Sequence) -> ControlTask:
        """Learn the label distribution from training tokens (words are not used)."""
        self.labels_, counts = np.unique(np.asarray(labels), return_counts=True)
        self.probs_ = counts / counts.sum()
        return self

    def transform(self, words: Sequence[str]) -> np.ndarray:
        """(n,) the control label of each word (by type)."""
        types, inverse = np.unique(np.asarray(words, dtype=str), return_inverse=True)
        keys = types if self.type_keys is None else self.type_keys(list(types))
        u = np.array([self._uniform(str(k)) for k in keys])
        cdf = np.cumsum(self.probs_)
        cdf[-1] = 1.0  # guard against rounding: u < 1 always maps to a label
        return self.labels_[np.searchsorted(cdf, u, side="right")][inverse]

    def fit_transform(self, words: Sequence[str], labels: Sequence) -> np.ndarray:
        return self.fit(words, labels).transform(words)

    def _uniform(self, word_type: str) -> float:
        digest = hashlib.sha256(f"{self.seed}\x00{word_type}".encode()).digest()
        return int.from_bytes(digest[:8], "big") / 2.0**64


def model_type_keys(encoder: Encoder, chunk: int = 256) -> TypeKeys:
    """Type keys as ``encoder`` sees words: the word-piece strings it makes of each word.

    Uses only the encoder's public ``tokenize`` (its own normalisation: lower-casing and
    accent stripping for an uncased WordPiece model, none for cased models). ELMo reads
    characters, so a word is its own key. Unknown-piece words collapse to one key, as they
    do for the model.
    """
    memo: dict[str, str] = {}

    def keys(words: Sequence[str]) -> list[str]:
        todo = [w for w in dict.fromkeys(str(w) for w in words) if w not in memo]
        for start in range(0, len(todo), chunk):
            part = todo[start : start + chunk]
            try:
                pieces, word_ids = encoder.tokenize(part)
            except NotImplementedError:  # an encoder without pieces: words are types
                pieces, word_ids = part, list(range(len(part)))
            per_word: list[list[str]] = [[] for _ in part]
            for piece, w in zip(pieces, word_ids, strict=True):
                if w is not None:
                    per_word[w].append(piece)
            memo.update({w: " ".join(p) or w for w, p in zip(part, per_word, strict=True)})
        return [memo[str(w)] for w in words]

    return keys


def selectivity(task_scores: Sequence[float], control_scores: Sequence[float]) -> np.ndarray:
    """(n_layers,) task minus control accuracy, layer by layer (same split for both)."""
    return np.asarray(task_scores, dtype=float) - np.asarray(control_scores, dtype=float)
