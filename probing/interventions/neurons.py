"""Units that matter: rank a layer's neurons for a label, probe the top k against random k,
and ablate the top k in the model (issue 45, part 3).

Two rankings, as NeuroX implements them (read: ``neurox/interpretation/linear_probe.py``
``get_top_neurons`` / ``get_neuron_ordering`` and ``probeless.py``):

- **Elastic-net probe weights** (Dalvi et al. 2019, linguistic correlation analysis): a
  multinomial logistic probe with L1 + L2 penalties; per class, neurons sorted by |weight|
  are taken until they hold a fraction p of the class's weight mass; the union over classes
  grows with p, and the order in which neurons enter it is the ranking (p in
  ``1/stride … 1``). NeuroX trains its own torch probe with the penalties added to the loss;
  here scikit-learn's ``saga`` solver fits the same objective (its ``C`` is 1 / the penalty
  weight on the mean loss, with ``l1_ratio`` splitting L1 and L2).
- **Probeless** (Antverg & Belinkov 2022): a neuron's score is Σ over class pairs of
  |mean_c1 − mean_c2|; no probe, no hyper-parameters.

Ablation sets the chosen neurons of hidden state ``layer`` to their training mean (not 0:
a zero is off the data for a neuron with a large mean) at every word piece; later layers
are recomputed by the model (:func:`probing.interventions.hooks.replaced_hidden`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from probing.errors import RankTooLargeError

if TYPE_CHECKING:
    from probing.encoders.bert import TransformersMaskedLM
    from probing.interventions.hooks import HiddenFn
    from probing.interventions.masked_words import WordScores


def check_k(k: int, dim: int) -> int:
    """``k`` when 1 ≤ k ≤ ``dim``; RankTooLargeError naming both otherwise."""
    if not 1 <= int(k) <= dim:
        raise RankTooLargeError(
            f"k = {k} neurons asked for, and the layer has {dim}: choose k from 1 to {dim}."
        )
    return int(k)


def probeless_ranking(X: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(scores (D,), neuron order (D,), best first) from word vectors X (n, D), labels y (n,)."""
    X = np.asarray(X, dtype=np.float64)
    classes = np.unique(y)
    means = np.stack([X[y == c].mean(axis=0) for c in classes])  # (C, D)
    # Σ_{i<j} |m_i − m_j|, per neuron.
    diffs = np.abs(means[:, None, :] - means[None, :, :])
    scores = diffs.sum(axis=(0, 1)) / 2
    return scores, np.argsort(-scores, kind="stable")


def weight_mass_ordering(weights: np.ndarray, stride: int = 100) -> np.ndarray:
    """NeuroX's global ordering from probe weights (C, D) (binary probes: (1, D))."""
    w = np.abs(np.atleast_2d(weights))
    order: list[int] = []
    seen: set[int] = set()
    sorted_idx = np.argsort(-w, axis=1, kind="stable")
    cum = np.cumsum(np.take_along_axis(w, sorted_idx, axis=1), axis=1)
    total = w.sum(axis=1, keepdims=True)
    for p in np.arange(stride + 1) / stride:
        # Per class: the fewest top neurons whose mass reaches p of the total.
        n_take = np.minimum((cum < total * p).sum(axis=1) + 1, w.shape[1])
        new = []
        for c in range(w.shape[0]):
            new.extend(int(i) for i in sorted_idx[c, : n_take[c]] if int(i) not in seen)
        for i in sorted(set(new), key=lambda i: -w[:, i].max()):  # within a step: by |w|
            seen.add(i)
            order.append(i)
    order.extend(i for i in np.argsort(-w.max(axis=0), kind="stable") if int(i) not in seen)
    return np.asarray(order, dtype=int)


def elastic_net_ranking(
    X: np.ndarray,
    y: np.ndarray,
    *,
    l1: float = 1e-3,
    l2: float = 1e-3,
    stride: int = 100,
    max_iter: int = 200,
    seed: int = 0,
) -> tuple[np.ndarray, np.ndarray]:
    """(probe weights (C, D), neuron order (D,)) from an elastic-net logistic probe on
    standardised X (n, D)."""
    from sklearn.linear_model import LogisticRegression

    X = np.asarray(X, dtype=np.float64)
    Z = (X - X.mean(axis=0)) / (X.std(axis=0) + 1e-8)  # comparable weights across neurons
    lam = l1 + l2
    probe = LogisticRegression(
        solver="saga",
        l1_ratio=l1 / lam,
        C=1.0 / (lam * len(Z)),
        max_iter=max_iter,
        random_state=seed,
    )
    probe.fit(Z, y)
    return probe.coef_, weight_mass_ordering(probe.coef_, stride)


def probe_predictions(
    X_train: np.ndarray,
    y_train: np.ndarray,
    X_test: np.ndarray,
    neurons: Sequence[int],
) -> np.ndarray:
    """Test predictions (n_test,) of a logistic probe trained on the ``neurons`` columns only."""
    from sklearn.linear_model import LogisticRegression

    cols = np.asarray(neurons, dtype=int)
    probe = LogisticRegression(max_iter=500)
    probe.fit(X_train[:, cols], y_train)
    return probe.predict(X_test[:, cols])


def probe_accuracy(
    X_train: np.ndarray,
    y_train: np.ndarray,
    X_test: np.ndarray,
    y_test: np.ndarray,
    neurons: Sequence[int],
) -> float:
    """Test accuracy of a logistic probe trained on the ``neurons`` columns only."""
    return float((probe_predictions(X_train, y_train, X_test, neurons) == y_test).mean())


def random_sets(dim: int, ks: Sequence[int], n_random: int, seed: int = 0) -> dict[int, np.ndarray]:
    """Per k, ``n_random`` seeded draws of k distinct neurons out of ``dim``: (n_random, k).
    One set of draws serves every ranking (their comparisons share the control).

    Raises:
        RankTooLargeError: a k above ``dim``.
    """
    rng = np.random.default_rng(seed)
    return {
        check_k(k, dim): np.stack([rng.choice(dim, k, replace=False) for _ in range(n_random)])
        for k in ks
    }


@dataclass(frozen=True)
class KSetPredictions:
    """One k's probe predictions on the test words: ``top`` per ranking (n_test,), and
    ``random`` per random draw (n_random, n_test)."""

    k: int
    top: dict[str, np.ndarray]
    random: np.ndarray


def top_vs_random(
    X_train: np.ndarray,
    y_train: np.ndarray,
    X_test: np.ndarray,
    orders: dict[str, Sequence[int]],
    ks: Sequence[int],
    n_random: int = 20,
    seed: int = 0,
) -> list[KSetPredictions]:
    """Per k: predictions of the probe on the top-k neurons of each ranking in ``orders``
    and on each of ``n_random`` random draws of k neurons (the same draws for every
    ranking), for a paired comparison per test item
    (:mod:`probing.interventions.neurons_compare`).

    Raises:
        RankTooLargeError: a k above the layer's dimension (before any fit).
    """
    draws = random_sets(X_train.shape[1], ks, n_random, seed)
    out = []
    for k, sets in draws.items():
        top = {
            name: probe_predictions(X_train, y_train, X_test, np.asarray(order)[:k])
            for name, order in orders.items()
        }
        rand = np.stack([probe_predictions(X_train, y_train, X_test, s) for s in sets])
        out.append(KSetPredictions(k, top, rand))
    return out


def mean_ablation(neurons: Sequence[int], means: np.ndarray) -> HiddenFn:
    """A :data:`probing.interventions.hooks.HiddenFn` that sets ``neurons`` of every
    position to ``means`` (D,) (their training means)."""
    import torch

    idx = torch.as_tensor(np.asarray(neurons, dtype=int))
    fill = torch.as_tensor(np.asarray(means, dtype=np.float32)[idx.numpy()])

    def fn(h: torch.Tensor) -> torch.Tensor:
        out = h.clone()
        out[..., idx.to(h.device)] = fill.to(h.device, h.dtype)
        return out

    return fn


def ablation_word_scores(
    encoder: TransformersMaskedLM,
    sentences: Sequence[Sequence[str]],
    layer: int,
    neuron_sets: dict[str, Sequence[int]],
    means: np.ndarray,
) -> dict[str, WordScores]:
    """Per held-out masked word, the masked-LM loss (nats) and its sentence, with each named
    set of neurons of hidden state ``layer`` mean-ablated (``"none"``: the clean pass).
    Full forward passes with a call-local hook: an empty set is the clean pass bit for bit."""
    from probing.interventions.hooks import model_parts, replaced_hidden
    from probing.interventions.masked_words import masked_batches, score_masked

    parts = model_parts(encoder)
    check_k(max((len(v) for v in neuron_sets.values()), default=1), means.shape[0])
    batches = masked_batches(encoder, sentences)
    out = {"none": score_masked(encoder, batches)}
    for name, neurons in neuron_sets.items():
        fn = mean_ablation(neurons, means)
        out[name] = score_masked(
            encoder, batches, lambda _b, fn=fn: replaced_hidden(parts, layer, fn)
        )
    return out


def ablation_mlm_loss(
    encoder: TransformersMaskedLM,
    sentences: Sequence[Sequence[str]],
    layer: int,
    neuron_sets: dict[str, Sequence[int]],
    means: np.ndarray,
) -> dict[str, float]:
    """Mean masked-LM loss (nats) on held-out ``sentences`` with each named set of
    neurons of hidden state ``layer`` mean-ablated (``"none"``: the clean loss)."""
    scores = ablation_word_scores(encoder, sentences, layer, neuron_sets, means)
    return {name: s.mean_loss for name, s in scores.items()}
