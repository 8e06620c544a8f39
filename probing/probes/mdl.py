"""Minimum description length probing with the online code (Voita & Titov 2020).

How many bits does it take to transmit a data set's labels given its representations, if
sender and receiver share a probe that they train on the labels sent so far? The data (in a
seeded random order) is cut at the paper's block fractions (0.1, 0.2, 0.4, 0.8, 1.6, 3.2,
6.25, 12.5, 25, 50 and 100 % of the training words). The first block goes with the uniform
code (``log2 K`` bits a label); each later block is coded with a probe trained on all
blocks before it (``-log2 p(y | x)`` bits a label)::

    online codelength = t₁·log2 K + Σ_i  -log2 p_θi(y_{t_i+1 .. t_{i+1}} | x …)
    compression       = (n·log2 K) / online codelength

A representation that makes the labels easy to learn from few examples gives a short code
(high compression); unlike accuracy this accounts for how much data (and so how much probe
capacity) the information takes to extract.

Differences from the reference code (lena-voita/description-length-probing):

- the probe is this project's linear probe (:class:`~probing.probes.linear.LinearProbe`,
  L2 with the task's C chosen on dev), trained to convergence on each prefix; the paper's
  probes are MLPs trained with Adam and early stopping on a held-out 10 % of each prefix;
- probabilities are smoothed with the uniform distribution,
  ``p = (1 - ε)·p_probe + ε/K`` with ε = 10⁻³: a label absent from a small prefix gets no
  output from the linear probe (the reference's softmax always has all K outputs); this
  caps a label's cost at ``log2(K/ε)`` bits and adds at most 0.0015 bits to any other.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

# Voita & Titov 2020, §3.2: block boundaries as fractions of the training data.
VOITA_FRACTIONS: tuple[float, ...] = (
    0.001,
    0.002,
    0.004,
    0.008,
    0.016,
    0.032,
    0.0625,
    0.125,
    0.25,
    0.5,
    1.0,
)
SMOOTHING = 1e-3


@dataclass(frozen=True)
class OnlineCode:
    """Result of :func:`online_codelength`.

    Attributes:
        bits: online codelength of all labels, in bits.
        uniform_bits: ``n·log2 K``, the uniform code's length.
        boundaries: (blocks + 1,) the prefix sizes ``t_0 = 0, t_1, …, t_n = n``.
        block_bits: (blocks,) bits spent on each block (the first by the uniform code).
        n, n_classes: items and classes K.
    """

    bits: float
    uniform_bits: float
    boundaries: tuple[int, ...]
    block_bits: tuple[float, ...]
    n: int
    n_classes: int

    @property
    def kbits(self) -> float:
        return self.bits / 1000.0

    @property
    def compression(self) -> float:
        return self.uniform_bits / self.bits if self.bits > 0 else math.inf


def block_boundaries(n: int, fractions: Sequence[float] = VOITA_FRACTIONS) -> list[int]:
    """Prefix sizes ``0 = t_0 < t_1 < … = n`` at the given fractions of ``n`` (duplicates,
    which small ``n`` produce, are merged; the first block has at least one item)."""
    cuts = sorted({min(n, max(1, int(round(f * n)))) for f in fractions} | {n})
    return [0, *cuts]


def online_codelength(
    X: np.ndarray,
    y: Sequence,
    make_probe: Callable[[], object],
    classes: Sequence | None = None,
    fractions: Sequence[float] = VOITA_FRACTIONS,
    seed: int = 0,
    smoothing: float = SMOOTHING,
) -> OnlineCode:
    """Online codelength of labels ``y`` given vectors ``X``.

    Args:
        X: (n, dim) vectors.
        y: (n,) labels.
        make_probe: returns a fresh classifier with ``fit(X, y)``, ``predict_proba(X)`` and
            ``classes_`` (e.g. ``lambda: LinearProbe(C=0.1)``).
        classes: the K labels of the code (default: those in ``y``).
        fractions: block boundaries as fractions of n (default: the paper's).
        seed: seed of the order in which the items are sent.
        smoothing: ε of the uniform mixture (see the module doc).
    """
    X, y = np.asarray(X), np.asarray(y)
    n = len(y)
    labels = np.unique(y) if classes is None else np.asarray(sorted(set(classes)))
    k = len(labels)
    if n == 0 or k < 2:
        raise ValueError("the online code needs items of at least two classes")
    order = np.random.default_rng(seed).permutation(n)
    X, y = X[order], y[order]
    t = block_boundaries(n, fractions)
    log2k = math.log2(k)
    block_bits = [t[1] * log2k]
    for start, end in zip(t[1:-1], t[2:], strict=True):
        p = _label_probs(make_probe, X[:start], y[:start], X[start:end], y[start:end])
        p = (1.0 - smoothing) * p + smoothing / k
        block_bits.append(float(-np.log2(p).sum()))
    return OnlineCode(
        bits=float(sum(block_bits)),
        uniform_bits=n * log2k,
        boundaries=tuple(t),
        block_bits=tuple(block_bits),
        n=n,
        n_classes=k,
    )


def _label_probs(
    make_probe: Callable[[], object],
    X_fit: np.ndarray,
    y_fit: np.ndarray,
    X_code: np.ndarray,
    y_code: np.ndarray,
) -> np.ndarray:
    """(m,) the probability a probe fitted on the prefix gives each next item's label."""
    seen = np.unique(y_fit)
    if len(seen) == 1:  # a one-class prefix: the only label it can predict
        return (y_code == seen[0]).astype(float)
    probe = make_probe()
    probe.fit(X_fit, y_fit)
    proba = probe.predict_proba(X_code)  # (m, |classes_|)
    col = {c: i for i, c in enumerate(np.asarray(probe.classes_).tolist())}
    idx = np.array([col.get(v, -1) for v in y_code.tolist()])
    out = np.zeros(len(y_code))
    ok = idx >= 0
    out[ok] = proba[np.flatnonzero(ok), idx[ok]]  # labels unseen in the prefix: 0 (smoothed)
    return out
