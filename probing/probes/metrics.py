"""Scores with bootstrap confidence intervals, and the centre of gravity over layers.

Bootstrap, exactly and cheaply
    The percentile bootstrap resamples the n test items with replacement and recomputes the
    score each time. Every score here depends on the items only through the counts of
    (gold, predicted) pairs, and resampling n items with replacement draws those counts from
    a multinomial distribution over the distinct pairs with the observed frequencies. So
    each bootstrap replicate is one multinomial draw over the confusion-matrix cells (a
    binomial for accuracy), identical in distribution to resampling items and thousands of
    times cheaper than materialising index arrays.

    Words of one sentence are not independent (a hard sentence makes several errors), so
    treating words as the resampled units gives intervals that are too narrow. With
    ``groups`` (each item's sentence) the bootstrap resamples *sentences* with replacement
    (a cluster bootstrap): each group's cell counts are summed once, and a replicate is the
    multinomial draw of how often each group is picked times that (groups × cells) matrix.
    The probing runs pass the test words' sentences, and draw the sentences once per run
    (:class:`SentenceBootstrap`), so that task and control, all layers and all seeds are
    scored on the same replicates: the interval of a difference (selectivity) or of the
    centre of gravity comes from the paired draws.

Centre of gravity (Tenney, Das & Pavlick 2019, "BERT Rediscovers the Classical NLP
Pipeline", eq. 2)
    With ``s_l`` the score obtainable from layers 0..l, the differential score is
    ``Δ_l = s_l - s_{l-1}`` (l = 1..L) and the centre of gravity is the expected layer under
    the Δ's: ``Σ_l l·Δ_l / Σ_l Δ_l``. It says at which depth, on average, the information
    that the probe uses *appears*. Tenney et al. get ``s_l`` from cumulative scalar mixes
    over layers 0..l, which are non-decreasing by construction. We probe single layers, so
    by default ``s_l`` is the running best of the single-layer scores (what a probe that may
    use any layer up to l could at least reach); ``cumulative=False`` uses the raw
    single-layer differences instead, whose negative Δ's make the "expectation" a weighted
    average with signed weights (reported for completeness, not recommended).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

ABSTAIN = ""  # a prediction meaning "no answer" (WSD without a backoff sense)


@dataclass(frozen=True)
class Estimate:
    """A point estimate, its bootstrap percentile interval and (over seeds) its sd."""

    value: float
    ci_low: float
    ci_high: float
    n: int
    sd: float = float("nan")  # spread across seeds, where there are several

    def as_dict(self) -> dict[str, float]:
        return {"value": self.value, "ci_low": self.ci_low, "ci_high": self.ci_high, "n": self.n}


def accuracy(y_true: Sequence, y_pred: Sequence) -> float:
    """Fraction of items predicted correctly (n,) vs (n,)."""
    y_true, y_pred = np.asarray(y_true), np.asarray(y_pred)
    return float(np.mean(y_true == y_pred)) if y_true.size else float("nan")


def macro_f1(y_true: Sequence, y_pred: Sequence) -> float:
    """Unweighted mean of per-class F1 over the classes seen in gold or predictions
    (scikit-learn's ``f1_score(average="macro")``)."""
    cells, pairs, n_classes = _pair_cells(y_true, y_pred)
    counts = np.bincount(cells, minlength=len(pairs)).astype(float)
    return float(_macro_f1_from_counts(counts[None, :], pairs, n_classes)[0])


def precision_recall_f1(y_true: Sequence, y_pred: Sequence) -> tuple[float, float, float]:
    """WSD-style precision, recall and F1 where ``y_pred == ABSTAIN`` means no answer.

    Precision = correct / answered, recall = correct / all items, F1 their harmonic mean.
    When every item gets an answer (as with a first-sense backoff), P = R = F1 = accuracy.
    """
    correct, wrong, abstained = _outcomes(y_true, y_pred)
    return _prf(np.array([correct]), np.array([wrong]), np.array([abstained]))[:, 0].tolist()


def bootstrap_ci(
    y_true: Sequence,
    y_pred: Sequence,
    metric: str | Callable[[np.ndarray, np.ndarray], float] = "accuracy",
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
    groups: Sequence | None = None,
) -> Estimate:
    """Point estimate and percentile bootstrap interval of a score over test items.

    Args:
        y_true, y_pred: (n,) gold and predicted labels.
        metric: ``accuracy``, ``macro_f1``, ``f1``/``precision``/``recall`` (WSD-style, with
            ``ABSTAIN`` predictions), or any ``f(y_true, y_pred) -> float`` (then items are
            resampled explicitly, slower).
        n_boot: bootstrap replicates.
        seed: random seed (same seed, same interval).
        level: coverage of the interval (0.95 = 2.5th to 97.5th percentile).
        groups: (n,) the cluster of each item (e.g. its sentence); when given, clusters are
            resampled instead of items (see the module doc).
    """
    y_true, y_pred = np.asarray(y_true), np.asarray(y_pred)
    n = int(y_true.shape[0])
    if n == 0:
        return Estimate(float("nan"), float("nan"), float("nan"), 0)
    if groups is not None and len(groups) != n:
        raise ValueError(f"groups has {len(groups)} entries for {n} items")
    if callable(metric):
        rng = np.random.default_rng(seed)
        return _resampled(y_true, y_pred, metric, n_boot, rng, level, groups)
    if groups is not None:
        point, draws = SentenceBootstrap(groups, n_boot, seed).draws(y_true, y_pred, metric)
        return _interval(point, draws, level, n)
    cells, n_cells, score = _cells(y_true, y_pred, metric)
    counts = np.bincount(cells, minlength=n_cells).astype(float)
    point = float(score(counts[None, :])[0])
    rng = np.random.default_rng(seed)
    draws = score(rng.multinomial(n, counts / n, size=n_boot).astype(float))
    return _interval(point, draws, level, n)


def _cells(
    y_true: np.ndarray, y_pred: np.ndarray, metric: str
) -> tuple[np.ndarray, int, Callable[[np.ndarray], np.ndarray]]:
    """Each item's outcome cell (n,), the number of cells, and ``score(counts (B, cells))``."""
    if metric == "accuracy":
        cells = (y_true == y_pred).astype(np.int64)  # 0 wrong, 1 right

        def score(counts: np.ndarray) -> np.ndarray:
            return counts[:, 1] / np.maximum(counts.sum(axis=1), 1)

        return cells, 2, score
    if metric == "macro_f1":
        cells, pairs, n_classes = _pair_cells(y_true, y_pred)
        return cells, len(pairs), lambda counts: _macro_f1_from_counts(counts, pairs, n_classes)
    if metric in ("f1", "precision", "recall"):
        which = ("precision", "recall", "f1").index(metric)
        answered = y_pred != ABSTAIN
        cells = np.where(answered, np.where(y_true == y_pred, 0, 1), 2)  # correct/wrong/none

        def score_prf(counts: np.ndarray) -> np.ndarray:
            return _prf(counts[:, 0], counts[:, 1], counts[:, 2])[which]

        return cells, 3, score_prf
    raise ValueError(f"unknown metric {metric!r}")


class SentenceBootstrap:
    """One draw of resampled test sentences shared by every score of a run.

    Scoring task and control predictions (or two layers, or several seeds) against the
    *same* resampled sentences makes their bootstrap draws paired: the draws of a difference
    (selectivity) or of a function of several scores (the centre of gravity) are the
    difference or function of the draws. The sentence picks are those of
    :func:`bootstrap_ci` with the same ``groups`` and ``seed``.

    Args:
        groups: (n,) the sentence of each test item.
        n_boot: replicates.
        seed: seed of the picks.

    Attributes:
        picks: (n_boot, n_groups) how often each sentence is drawn in each replicate.
    """

    def __init__(self, groups: Sequence, n_boot: int = 1000, seed: int = 0) -> None:
        _, self.group = np.unique(np.asarray(groups), return_inverse=True)
        self.group = self.group.reshape(-1)
        g = int(self.group.max()) + 1 if self.group.size else 0
        rng = np.random.default_rng(seed)
        self.picks = rng.multinomial(g, np.full(g, 1.0 / max(g, 1)), size=n_boot).astype(float)

    @property
    def n_boot(self) -> int:
        return self.picks.shape[0]

    def draws(
        self,
        y_true: Sequence,
        y_pred: Sequence,
        metric: str = "accuracy",
        mask: np.ndarray | None = None,
    ) -> tuple[float, np.ndarray]:
        """Point estimate and (n_boot,) replicate scores of ``metric``.

        Args:
            y_true, y_pred: (n,) gold and predicted labels of all test items.
            metric: ``accuracy``, ``macro_f1``, ``f1``, ``precision`` or ``recall``.
            mask: (n,) bool, score only these items (their sentences are still resampled
                with all the others, so subset scores stay paired with full-set ones).
        """
        y_true, y_pred, group = np.asarray(y_true), np.asarray(y_pred), self.group
        if mask is not None:
            y_true, y_pred, group = y_true[mask], y_pred[mask], group[mask]
        if y_true.size == 0:
            return float("nan"), np.full(self.n_boot, np.nan)
        cells, n_cells, score = _cells(y_true, y_pred, metric)
        per_group = np.zeros((self.picks.shape[1], n_cells))
        np.add.at(per_group, (group, cells), 1.0)
        point = float(score(per_group.sum(axis=0)[None, :])[0])
        return point, score(self.picks @ per_group)


def seed_estimate(
    points: Sequence[float], draws: Sequence[np.ndarray], n: int, level: float = 0.95
) -> Estimate:
    """Mean over seeds, its paired-bootstrap interval, and the spread (sd) across seeds.

    Args:
        points: (seeds,) each seed's score.
        draws: (seeds,) arrays (n_boot,) of each seed's replicate scores on the *same*
            resampled sentences (:class:`SentenceBootstrap`), so their mean is a replicate
            of the mean score.
        n: test items.
    """
    pts = np.asarray(points, dtype=float)
    mean_draws = np.mean(np.stack([np.asarray(d, dtype=float) for d in draws]), axis=0)
    est = _interval(float(pts.mean()), mean_draws, level, n)
    sd = float(pts.std(ddof=1)) if len(pts) > 1 else 0.0
    return Estimate(est.value, est.ci_low, est.ci_high, n, sd)


def _resampled(
    y_true: np.ndarray,
    y_pred: np.ndarray,
    metric: Callable[[np.ndarray, np.ndarray], float],
    n_boot: int,
    rng: np.random.Generator,
    level: float,
    groups: Sequence | None,
) -> Estimate:
    """Bootstrap of any ``metric(y_true, y_pred)`` by explicit resampling (items or groups)."""
    n = int(y_true.shape[0])
    point = float(metric(y_true, y_pred))
    draws = np.empty(n_boot)
    if groups is None:
        for b in range(n_boot):
            idx = rng.integers(0, n, size=n)
            draws[b] = metric(y_true[idx], y_pred[idx])
        return _interval(point, draws, level, n)
    _, group = np.unique(np.asarray(groups), return_inverse=True)
    members = np.split(np.argsort(group, kind="stable"), np.cumsum(np.bincount(group))[:-1])
    for b in range(n_boot):
        idx = np.concatenate([members[i] for i in rng.integers(0, len(members), len(members))])
        draws[b] = metric(y_true[idx], y_pred[idx])
    return _interval(point, draws, level, n)


def _interval(point: float, draws: np.ndarray, level: float, n: int) -> Estimate:
    alpha = (1.0 - level) / 2
    low, high = np.nanquantile(draws, [alpha, 1.0 - alpha])
    return Estimate(float(point), float(low), float(high), n)


def centre_of_gravity(
    scores: Sequence[float], layers: Sequence[int] | None = None, cumulative: bool = True
) -> float:
    """Tenney et al.'s expected layer ``Σ l·Δ_l / Σ Δ_l`` over differential scores.

    Args:
        scores: (n_layers,) score of each layer, in layer order, starting with the lowest
            (normally layer 0, which only serves as the reference for Δ of the next).
        layers: the layer numbers of ``scores`` (default 0, 1, …).
        cumulative: use the running best score as ``s_l`` (see the module doc).

    Returns:
        The expected layer, or NaN when no layer improves on the first.
    """
    s = np.asarray(scores, dtype=float)
    ls = np.arange(len(s)) if layers is None else np.asarray(layers, dtype=float)
    if len(s) < 2:
        return float("nan")
    if cumulative:
        s = np.maximum.accumulate(s)
    delta = np.diff(s)
    total = delta.sum()
    if not np.isfinite(total) or abs(total) < 1e-12:
        return float("nan")
    return float(np.sum(ls[1:] * delta) / total)


def centre_of_gravity_draws(
    draws: np.ndarray, layers: Sequence[int] | None = None, cumulative: bool = True
) -> np.ndarray:
    """:func:`centre_of_gravity` of each row of ``draws`` (n_boot, n_layers): paired
    bootstrap replicates of the per-layer scores give replicates of the centre of gravity
    (NaN where no layer improves on the first)."""
    s = np.asarray(draws, dtype=float)
    ls = np.arange(s.shape[1]) if layers is None else np.asarray(layers, dtype=float)
    if s.shape[1] < 2:
        return np.full(s.shape[0], np.nan)
    if cumulative:
        s = np.maximum.accumulate(s, axis=1)
    delta = np.diff(s, axis=1)
    total = delta.sum(axis=1)
    ok = np.isfinite(total) & (np.abs(total) > 1e-12)
    return np.where(ok, (delta @ ls[1:]) / np.where(ok, total, 1.0), np.nan)


def expected_layer(weights: Sequence[float], layers: Sequence[int] | None = None) -> float:
    """``Σ l·w_l`` for scalar-mix weights ``w`` (Tenney et al.'s other summary, eq. 1)."""
    w = np.asarray(weights, dtype=float)
    ls = np.arange(len(w)) if layers is None else np.asarray(layers, dtype=float)
    return float(np.sum(ls * w) / w.sum())


# -- internals ----------------------------------------------------------------------------


def _pair_cells(y_true, y_pred) -> tuple[np.ndarray, np.ndarray, int]:
    """Each item's (gold, predicted) cell index (n,), the cells as class-index pairs
    (cells, 2), and the number of classes."""
    y_true, y_pred = np.asarray(y_true), np.asarray(y_pred)
    classes, codes = np.unique(np.concatenate([y_true, y_pred]), return_inverse=True)
    n = y_true.shape[0]
    pairs, cells = np.unique(np.stack([codes[:n], codes[n:]], axis=1), axis=0, return_inverse=True)
    return cells.reshape(-1), pairs, len(classes)


def _macro_f1_from_counts(counts: np.ndarray, pairs: np.ndarray, n_classes: int) -> np.ndarray:
    """Macro-F1 of each row of ``counts`` (draws, cells) over its present classes."""
    # Column sums per class instead of products with one-hot matrices: no BLAS calls, whose
    # threads cost more than they save on a busy machine for arrays this small.
    draws = counts.shape[0]
    tp = np.zeros((draws, n_classes))
    denom = np.zeros((draws, n_classes))  # 2TP + FP + FN = |gold_k| + |pred_k|
    diagonal = pairs[:, 0] == pairs[:, 1]
    for k in range(n_classes):
        tp[:, k] = counts[:, diagonal & (pairs[:, 0] == k)].sum(axis=1)
        denom[:, k] = counts[:, pairs[:, 0] == k].sum(axis=1) + counts[:, pairs[:, 1] == k].sum(
            axis=1
        )
    present = denom > 0
    f1 = np.where(present, 2 * tp / np.where(present, denom, 1), 0.0)
    return f1.sum(axis=1) / np.maximum(present.sum(axis=1), 1)


def _outcomes(y_true, y_pred) -> tuple[int, int, int]:
    y_true, y_pred = np.asarray(y_true), np.asarray(y_pred)
    answered = y_pred != ABSTAIN
    correct = int(np.sum(answered & (y_true == y_pred)))
    return correct, int(answered.sum()) - correct, int((~answered).sum())


def _prf(correct: np.ndarray, wrong: np.ndarray, abstained: np.ndarray) -> np.ndarray:
    """(3, draws): precision, recall, F1 from outcome counts."""
    c, w, a = (np.asarray(x, dtype=float) for x in (correct, wrong, abstained))
    answered, total = c + w, c + w + a
    p = np.divide(c, answered, out=np.zeros_like(c), where=answered > 0)
    r = np.divide(c, total, out=np.zeros_like(c), where=total > 0)
    f = np.divide(2 * p * r, p + r, out=np.zeros_like(c), where=(p + r) > 0)
    return np.stack([p, r, f])
