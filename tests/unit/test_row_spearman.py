"""The structural probe's per-word Spearman, computed for all rows of a sentence at once,
must equal scipy's spearmanr row by row, bit for bit (committed DSpr figures are re-made
from it and compared exactly)."""

from __future__ import annotations

import warnings

import numpy as np
from scipy.stats import spearmanr

from probing.probes.structural import _row_spearman, tree_distances


def _scipy_rows(pred: np.ndarray, gold: np.ndarray) -> np.ndarray:
    out = []
    for p, g in zip(pred, gold, strict=True):
        if np.ptp(p) == 0 or np.ptp(g) == 0:
            out.append(np.nan)
        else:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out.append(float(spearmanr(p, g).statistic))
    return np.array(out)


def test_row_spearman_equals_scipy_bit_for_bit_with_ties_and_constant_rows():
    rng = np.random.default_rng(0)
    for t in range(300):
        n = int(rng.integers(2, 40))
        heads = [0] + [int(rng.integers(1, i + 1)) for i in range(1, n)]  # a random tree
        gold = tree_distances(heads)  # integer distances: many ties, as in real scoring
        pred = rng.normal(size=(n, n)).round(int(rng.integers(0, 3)))  # rounding adds ties
        if t % 5 == 0:
            pred[0] = 1.0  # a constant row: no correlation
        want, got = _scipy_rows(pred, gold), _row_spearman(pred, gold)
        assert np.array_equal(np.isnan(want), np.isnan(got))
        assert np.array_equal(want[~np.isnan(want)], got[~np.isnan(got)])
