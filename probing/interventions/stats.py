"""Means of per-item values with paired sentence-bootstrap intervals.

Items (masked words, agreement cases, minimal pairs) are grouped by sentence; a replicate
draws sentences with replacement (:class:`probing.probes.metrics.SentenceBootstrap`'s picks)
and every condition measured on the same items is scored on the same replicates, so the
interval of a difference between two conditions is the paired one.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from probing.probes.metrics import Estimate, SentenceBootstrap


class PairedBootstrap(SentenceBootstrap):
    """Sentence bootstrap of means of per-item values (n,) grouped by ``groups`` (n,)."""

    def mean_draws(self, values: Sequence[float]) -> tuple[float, np.ndarray]:
        """Point estimate and (n_boot,) replicate means."""
        v = np.asarray(values, dtype=float)
        if v.size == 0:
            return float("nan"), np.full(self.n_boot, np.nan)
        g = self.picks.shape[1]
        sums = np.bincount(self.group, weights=v, minlength=g)
        counts = np.bincount(self.group, minlength=g).astype(float)
        with np.errstate(invalid="ignore", divide="ignore"):
            draws = (self.picks @ sums) / (self.picks @ counts)
        return float(v.mean()), draws

    def ratio_draws(self, num: Sequence[float], den: Sequence[float]) -> tuple[float, np.ndarray]:
        """Σ num / Σ den and its (n_boot,) replicates (a subset's mean: num = values · mask,
        den = mask)."""
        g = self.picks.shape[1]
        sn = np.bincount(self.group, weights=np.asarray(num, float), minlength=g)
        sd = np.bincount(self.group, weights=np.asarray(den, float), minlength=g)
        with np.errstate(invalid="ignore", divide="ignore"):
            point = float(sn.sum() / sd.sum()) if sd.sum() else float("nan")
            return point, (self.picks @ sn) / (self.picks @ sd)

    def ratio(self, num: Sequence[float], den: Sequence[float], level: float = 0.95) -> Estimate:
        point, draws = self.ratio_draws(num, den)
        return interval(point, draws, len(num), level)

    def mean(self, values: Sequence[float], level: float = 0.95) -> Estimate:
        point, draws = self.mean_draws(values)
        return interval(point, draws, len(values), level)

    def diff(self, a: Sequence[float], b: Sequence[float], level: float = 0.95) -> Estimate:
        """mean(a) - mean(b) over the same items, paired."""
        pa, da = self.mean_draws(a)
        pb, db = self.mean_draws(b)
        return interval(pa - pb, da - db, len(a), level)


def interval(point: float, draws: np.ndarray, n: int, level: float = 0.95) -> Estimate:
    """Percentile interval of ``draws`` around ``point``."""
    alpha = (1.0 - level) / 2
    if np.all(np.isnan(draws)):
        return Estimate(point, float("nan"), float("nan"), n)
    low, high = np.nanquantile(draws, [alpha, 1.0 - alpha])
    return Estimate(float(point), float(low), float(high), n)


def est_fields(prefix: str, est: Estimate) -> dict[str, float]:
    """``{prefix: value, prefix_lo: low, prefix_hi: high}`` for a results row."""
    return {prefix: est.value, f"{prefix}_lo": est.ci_low, f"{prefix}_hi": est.ci_high}
