"""Word sense disambiguation by 1-nearest-neighbour to sense centroids.

The method of the ELMo paper (Peters et al. 2018, §5.3) and of Coenen et al. 2019
("Visualizing and Measuring the Geometry of BERT", §4.1): average the contextual vectors
of each sense's SemCor *training* occurrences into a centroid; a test word takes the sense
whose centroid is nearest (cosine) among the senses seen for its lemma; a lemma never seen
in training backs off to its only WordNet sense, and is left unanswered when it has several
(:func:`only_sense_backoff`; the paper's backoff to WordNet's first sense leaks the test
documents' sense counts and is kept as a labelled side row). No parameters are trained,
so the score measures how well the representation's geometry alone separates senses.

As in the standard WSD evaluation framework (Raganato et al. 2017) the target's lemma and
WordNet part of speech are given: candidates are the senses of the same ``lemma%pos`` (see
:func:`lemma_key`). Scoring is by precision, recall and F1 (see
:func:`probing.probes.metrics.precision_recall_f1`): an item with neither a neighbour nor
a backoff sense is unanswered, which lowers recall but not precision.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
from sklearn.base import BaseEstimator
from threadpoolctl import threadpool_limits

from probing.probes.metrics import ABSTAIN

# WordNet ss_type digits (2nd part of a sense key): adjective satellites (5) are adjectives.
_SS_TYPE = {"1": "n", "2": "v", "3": "a", "4": "r", "5": "a"}


def lemma_key(sense_key: str) -> str:
    """``lemma%pos`` of a sense key: ``bank%1:17:01::`` -> ``bank%n``; candidates for a
    target are the senses sharing it."""
    lemma, _, lexsn = sense_key.partition("%")
    return f"{lemma.lower()}%{_SS_TYPE.get(lexsn[:1], lexsn[:1])}"


def split_lemma_key(key: str) -> tuple[str, str]:
    """``bank%n`` -> (``bank``, ``n``)."""
    lemma, _, pos = key.rpartition("%")
    return lemma, pos


class NearestSenseClassifier(BaseEstimator):
    """1-NN to per-sense centroids within a lemma, with a backoff for unseen lemmas.

    Args:
        backoff: ``f(lemma_key) -> sense key or None`` for lemmas unseen in training (e.g.
            WordNet's first sense, see :func:`first_sense_backoff`); ``None``: abstain.

    Attributes (after ``fit``):
        senses_: {lemma key: (k,) sense keys, most frequent in training first};
        centroids_: {lemma key: (k, dim) unit rows}; lemma_counts_: {lemma key: training
        instances}.
    """

    def __init__(self, backoff: Callable[[str], str | None] | None = None) -> None:
        self.backoff = backoff

    def fit(self, X: np.ndarray, senses: Sequence[str], lemmas: Sequence[str] | None = None):
        """X: (n, dim) training vectors; senses: (n,) sense keys; lemmas: (n,) lemma keys
        (default: derived from the sense keys)."""
        X = np.asarray(X, dtype=np.float32)
        senses = np.asarray(senses, dtype=str)
        lemmas = np.asarray(
            lemmas if lemmas is not None else [lemma_key(s) for s in senses], dtype=str
        )
        sense_ids, sense_of = np.unique(senses, return_inverse=True)
        # Sum vectors per sense in one pass (sorted segments), then normalise: the cosine to
        # a centroid only needs its direction.
        order = np.argsort(sense_of, kind="stable")
        starts = np.flatnonzero(np.r_[True, np.diff(sense_of[order]) != 0])
        sums = np.add.reduceat(X[order], starts, axis=0)
        centroids = sums / np.maximum(np.linalg.norm(sums, axis=1, keepdims=True), 1e-12)
        lemma_of_sense: dict[str, list[int]] = {}
        first_row = order[starts]
        for s, row in enumerate(first_row):
            lemma_of_sense.setdefault(str(lemmas[row]), []).append(s)
        # Senses in order of training frequency (most frequent first): a saved lens that
        # keeps only a lemma's sense list still knows its most frequent training sense.
        sense_n = np.bincount(sense_of)
        for v in lemma_of_sense.values():
            v.sort(key=lambda s: (-sense_n[s], s))
        self.senses_ = {k: sense_ids[v] for k, v in lemma_of_sense.items()}
        self.lemma_counts_ = {k: int(sense_n[v].sum()) for k, v in lemma_of_sense.items()}
        self.centroids_ = {k: centroids[v] for k, v in lemma_of_sense.items()}
        return self

    def predict(self, X: np.ndarray, lemmas: Sequence[str]) -> np.ndarray:
        """(n,) sense keys; ``ABSTAIN`` ("") where there is no answer."""
        return self.predict_with_source(X, lemmas)[0]

    def predict_with_source(
        self, X: np.ndarray, lemmas: Sequence[str]
    ) -> tuple[np.ndarray, np.ndarray]:
        """Predictions and where each came from: ``nn``, ``backoff`` or ``none``."""
        # Many small products (one per lemma): BLAS threads would only add overhead.
        with threadpool_limits(limits=1, user_api="blas"):
            return self._predict_with_source(X, lemmas)

    def _predict_with_source(
        self, X: np.ndarray, lemmas: Sequence[str]
    ) -> tuple[np.ndarray, np.ndarray]:
        X = np.asarray(X, dtype=np.float32)
        X = X / np.maximum(np.linalg.norm(X, axis=1, keepdims=True), 1e-12)
        lemmas = np.asarray(lemmas, dtype=str)
        pred = np.full(len(lemmas), ABSTAIN, dtype=object)
        source = np.full(len(lemmas), "none", dtype=object)
        for key in np.unique(lemmas):
            rows = np.flatnonzero(lemmas == key)
            if key in self.centroids_:
                best = np.argmax(X[rows] @ self.centroids_[key].T, axis=1)
                pred[rows] = self.senses_[key][best]
                source[rows] = "nn"
            elif self.backoff is not None:
                sense = self.backoff(str(key))
                if sense:
                    pred[rows] = sense
                    source[rows] = "backoff"
        return pred.astype(str), source.astype(str)

    def score(self, X: np.ndarray, senses: Sequence[str], lemmas: Sequence[str]) -> float:
        """F1 (WSD scoring) of the predictions."""
        from probing.probes.metrics import precision_recall_f1

        return precision_recall_f1(senses, self.predict(X, lemmas))[2]


class MostFrequentSense(BaseEstimator):
    """Each lemma's most frequent *training* sense (the SemCor MFS baseline), with backoff."""

    def __init__(self, backoff: Callable[[str], str | None] | None = None) -> None:
        self.backoff = backoff

    def fit(self, senses: Sequence[str], lemmas: Sequence[str] | None = None) -> MostFrequentSense:
        from probing.probes.baselines import WordTypeBaseline

        lemmas = lemmas if lemmas is not None else [lemma_key(s) for s in senses]
        self.table_ = WordTypeBaseline().fit(list(lemmas), list(senses)).table_
        return self

    def predict(self, lemmas: Sequence[str]) -> np.ndarray:
        out = []
        for key in lemmas:
            sense = self.table_.get(str(key))
            if sense is None and self.backoff is not None:
                sense = self.backoff(str(key))
            out.append(sense or ABSTAIN)
        return np.asarray(out, dtype=str)


def first_sense_backoff(data_dir: str | Path | None = None) -> Callable[[str], str | None]:
    """``f(lemma key) -> WordNet first sense key`` (memoised), from the WordNet in the data dir."""
    from functools import cache

    from probing.datasets.wordnet import first_sense_key

    @cache
    def backoff(key: str) -> str | None:
        lemma, pos = split_lemma_key(key)
        return first_sense_key(lemma, pos, data_dir)

    return backoff


def only_sense_backoff(data_dir: str | Path | None = None) -> Callable[[str], str | None]:
    """The non-leaky backoff: ``f(lemma key) -> its sense key`` when WordNet has exactly
    one sense for the lemma, else None (abstain). WordNet's *first* sense is ordered by
    the semantic concordances' tag counts, SemCor's test documents among them: backing off
    to it scores 96 % on the test items with an unseen lemma, a random WordNet sense about
    79 %. A lemma with one sense needs no ordering, so answering only those leaks nothing;
    the polysemous unseen lemmas are left unanswered (recall, not precision, pays)."""
    first = first_sense_backoff(data_dir)

    def backoff(key: str) -> str | None:
        return first(key) if wordnet_sense_count(key, data_dir) == 1 else None

    return backoff


# SemCor tags proper names with a class placeholder, not a word sense (``Fulton_County`` ->
# ``location%1:03:00::``); WSD evaluations leave them out.
PLACEHOLDERS = frozenset({"person%1:03:00::", "group%1:03:00::", "location%1:03:00::"})


def is_placeholder(sense_key: str) -> bool:
    """True for SemCor's proper-name placeholder senses (person/group/location)."""
    return str(sense_key) in PLACEHOLDERS


def wordnet_sense_count(key: str, data_dir: str | Path | None = None) -> int:
    """How many WordNet 3.0 senses the lemma key ``lemma%pos`` has (0 if none)."""
    return _sense_counts(data_dir).get(key, 0)


def _sense_counts(data_dir: str | Path | None = None) -> dict[str, int]:
    from probing.datasets.registry import dataset_path
    from probing.datasets.wordnet import sense_keys

    folder = dataset_path("wordnet", data_dir).resolve()
    if folder not in _COUNTS:
        counts: dict[str, int] = {}
        for sense in sense_keys(data_dir):
            k = lemma_key(sense)
            counts[k] = counts.get(k, 0) + 1
        _COUNTS[folder] = counts
    return _COUNTS[folder]


_COUNTS: dict = {}
