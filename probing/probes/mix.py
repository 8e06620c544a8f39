"""The scalar-mix probe: ELMo's learned layer weighting feeding one linear classifier.

ELMo (Peters et al. 2018, eq. 1) represents a word as ``γ · Σ_j softmax(s)_j · h_j`` and
learns ``s`` and ``γ`` with the downstream task; Tenney et al. (2019) read the learned
weights as *which layers a task draws on*. Here the mix (:class:`probing.encoders.scalar_mix.ScalarMix`)
and a linear softmax classifier are trained jointly with Adam on the training words.

Each layer is first standardised per dimension with training statistics, so that a weight
reflects how useful a layer is, not how large its activations are (BERT's embedding output
and top layers differ in scale). The mix parameters get a larger learning rate than the
classifier: with a few epochs and the classifier's rate they would barely leave the uniform
start. With dev data the epoch with the best dev accuracy is kept.

Beside single-layer probes (issue 27), the mix is given the members' L2 penalty: with ``C``
the classifier's weights pay ``‖W‖² / (2 C n)`` on the mean loss, as
:class:`probing.probes.linear.LinearProbe`'s do, and γ is held at 1 — for a linear
classifier γ only rescales W, and a free γ lets the mix grow its inputs and shrink W out of
the penalty (unpenalised, a one-layer deprel mix on 20,000 arcs scored 1.8 points below its
own layer's probe; held at 1 with the penalty, the same). Small samples get more epochs
(``min_steps`` optimiser steps at least), so that the mix is trained as far as its members,
and the mix weights a slower rate (3e-3 instead of 5e-2): over those steps the faster one
drove them onto one layer before the classifier had learned which was best (minilm-l6
deprel, 20,000 arcs, all 7 layers: 0.872 with every weight on layer 2 at 5e-2, 0.884 at
3e-3, against 0.883 for layer 3 alone).

``solver="lbfgs"`` (issue 41) minimises the same penalised objective (γ at 1) full-batch
with the members' second-order machinery, started from the best member's probe
(:mod:`probing.probes.mix_solve`): no epochs, no dev selection, the members' stopping test.
The runners fit their mixes so; Adam stays for the unpenalised mix (``C=None``: γ free, whose
objective has no minimiser on separable words) and the results it made.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin

if TYPE_CHECKING:  # torch is imported where a fit runs, not with the module
    import torch

    from probing.encoders.scalar_mix import ScalarMix
    from probing.probes.linear import LinearProbe

# How the runners fit their mixes. L-BFGS from the best member (issue 41) reaches the
# penalised optimum but took 1.66x Adam's CPU at 4,000 sentences (bench/mix_solver.py,
# docs/benchmarks.md), and the committed runs were made with Adam: Adam stays the default.
RUNNER_SOLVER = "adam"
# Passes over the training words of a typical L-BFGS mix from its best member, for the cost
# model (probing/probes/cost.py): bench/mix_solver.py, docs/benchmarks.md (issue 41).
LBFGS_PASSES = 25
_CHUNK = 16_384  # words per pass when predicting or computing statistics, at most
_CHUNK_BYTES = 128 * 2**20  # and at most this much float64 per pass (13 x 768 dims: 1,365 words)


def _chunk_rows(X: np.ndarray) -> int:
    """Words per pass over X (L, n, D): ``_CHUNK``, fewer for wide stacks (mpnet-base's
    13 x 768 float64 chunk of 16,384 words was 1.3 GB, twice over while squaring)."""
    return max(256, min(_CHUNK, _CHUNK_BYTES // (8 * X.shape[0] * X.shape[2])))


class ScalarMixProbe(ClassifierMixin, BaseEstimator):
    """Softmax-weighted sum of layers (+ γ) and a linear classifier, trained with torch.

    Args:
        epochs: passes over the training words.
        batch_size: words per step.
        lr: Adam learning rate of the classifier; ``lr_mix`` of the mix weights and γ
            (default 5e-2 without ``C``, 3e-3 with it: module doc).
        weight_decay: Adam's L2 on the classifier (ignored with ``C``).
        C: the members' inverse L2 strength: penalty ``‖W‖² / (2 C n)`` on the mean loss,
            γ held at 1 (module doc). ``None``: no penalty, γ learned (ELMo's mix).
        min_steps: optimiser steps at least: more epochs than ``epochs`` on small samples.
        max_train_words: seeded subsample cap (``None``: all).
        random_state: seed of the subsample, initialisation and batch order.
        solver: ``"adam"`` (minibatch, best dev epoch) or ``"lbfgs"`` (full batch from the
            best member, needs ``C``; module doc). ``epochs``, ``batch_size``, ``lr``,
            ``lr_mix``, ``weight_decay`` and ``min_steps`` are Adam's only.
        tol: L-BFGS stops when every entry of the objective's gradient (W, b and the mix
            scalars) is at most this (the members' ``tol``).
        max_iter: L-BFGS iterations at most (evaluations at most 1.25 times as many).

    Attributes (after ``fit``):
        classes_: (k,) labels. weights_: (n_layers,) softmax mix weights (sum to 1).
        gamma_: the learned scale γ. layers_: layer ids the weights refer to (if given).
        With L-BFGS: objective_ (final penalised objective), n_iter_, n_evals_ (passes
        over the training words), start_layer_ (the member it started from, or None).
    """

    def __init__(
        self,
        epochs: int = 8,
        batch_size: int = 256,
        lr: float = 1e-3,
        lr_mix: float | None = None,
        weight_decay: float = 0.0,
        C: float | None = None,
        min_steps: int = 2000,
        max_train_words: int | None = 20_000,
        random_state: int = 0,
        solver: str = "adam",
        tol: float = 1e-4,
        max_iter: int = 200,
    ) -> None:
        self.epochs = epochs
        self.batch_size = batch_size
        self.lr = lr
        self.lr_mix = lr_mix
        self.weight_decay = weight_decay
        self.C = C
        self.min_steps = min_steps
        self.max_train_words = max_train_words
        self.random_state = random_state
        self.solver = solver
        self.tol = tol
        self.max_iter = max_iter

    def fit(
        self,
        X: np.ndarray,
        y: Sequence,
        X_dev: np.ndarray | None = None,
        y_dev: Sequence | None = None,
        layers: Sequence[int] | None = None,
        *,
        standardised: tuple[np.ndarray, np.ndarray] | None = None,
        stats: tuple[np.ndarray, np.ndarray] | None = None,
        member: tuple[int, LinearProbe] | None = None,
    ) -> ScalarMixProbe:
        """X: (n_layers, n, dim) vectors; y: (n,) labels; optional dev (n_layers, m, dim).

        ``standardised``: the (mean, std), (n_layers, 1, dim) each, when X is already
        standardised with them (:func:`standardise_layers`). ``stats``: the same statistics
        (:func:`layer_stats`) of a raw X, standardised batch by batch (same values: the
        operation is elementwise), so that no float32 copy of the sample is held: the
        cumulative mixes of a full-data sweep share one sample's statistics. With either, X
        must be the training sample itself (no more than ``max_train_words`` words).
        ``member``: (position in X, its fitted single-layer probe on the same words at C),
        where L-BFGS starts (module doc); ignored by Adam and when the classes differ."""
        y = np.asarray(y)
        rng = np.random.default_rng(self.random_state)
        rows = np.arange(len(y))
        if self.max_train_words is not None and len(y) > self.max_train_words:
            if standardised is not None or stats is not None:
                raise ValueError(
                    f"a standardised sample must have at most max_train_words="
                    f"{self.max_train_words} words, not {len(y)}"
                )
            rows = np.sort(rng.choice(len(y), size=self.max_train_words, replace=False))
        y = y[rows]
        self.classes_, y_idx = np.unique(y, return_inverse=True)
        n_layers = X.shape[0]
        prep = self._standardise  # each batch, from the raw sample
        if standardised is not None:
            self.mean_, self.std_ = standardised
            Xs, prep = np.asarray(X, np.float32), None
        elif stats is not None:
            self.mean_, self.std_ = stats
            Xs = X
        else:
            self.mean_, self.std_ = _layer_stats(X, rows)  # (L, 1, D) each
            Xs = X if len(rows) == X.shape[1] else X[:, rows]
        # A batch at a time: a float32 copy of the whole sample was 2.2 GB for minilm-l6 on
        # all of UD-EWT (7 layers x 204,577 words x 384), beside the float16 features.
        self.layers_ = list(layers) if layers is not None else list(range(n_layers))
        if self.solver == "lbfgs":
            self._fit_lbfgs(Xs, y_idx, standardised is not None, member)
            if X_dev is not None and y_dev is not None:
                self.dev_score_ = self.score(X_dev, y_dev)
        elif self.solver == "adam":
            self._fit_adam(Xs, prep, y_idx, X_dev, y_dev)
        else:
            raise ValueError(f"solver must be 'adam' or 'lbfgs', not {self.solver!r}")
        self.weights_, self.gamma_ = mix_weights(self.mix_)
        return self

    def _fit_adam(
        self,
        Xs: np.ndarray,
        prep: Callable[[np.ndarray], np.ndarray] | None,
        y_idx: np.ndarray,
        X_dev: np.ndarray | None,
        y_dev: Sequence | None,
    ) -> None:
        """Adam over minibatches, the best dev epoch kept (module doc); ``prep``
        standardises a raw batch (None: Xs is standardised)."""
        import torch

        from probing.encoders.scalar_mix import ScalarMix

        n_layers, dim = Xs.shape[0], Xs.shape[2]
        torch.manual_seed(self.random_state)
        self.mix_ = ScalarMix(n_layers)
        self.linear_ = torch.nn.Linear(dim, len(self.classes_))
        opt, l2 = self._optimiser(len(y_idx))
        yt = torch.from_numpy(y_idx.astype(np.int64))
        dev = None
        if X_dev is not None and y_dev is not None:
            dev = (X_dev, np.asarray(y_dev))  # standardised chunk by chunk when scored
        best = None
        gen = torch.Generator().manual_seed(self.random_state)
        steps_per_epoch = max(1, math.ceil(len(yt) / self.batch_size))
        self.epochs_ = max(self.epochs, math.ceil(self.min_steps / steps_per_epoch))
        for _ in range(self.epochs_):
            self.mix_.train()
            for batch in torch.randperm(len(yt), generator=gen).split(self.batch_size):
                # Sorted: the loss is order-free, and sorted rows keep earlier results to the digit.
                batch = batch.sort().values
                xb = Xs[:, batch.numpy()]
                xb = torch.from_numpy(xb if prep is None else prep(xb))
                logits = self.linear_(self._mix(xb))
                loss = torch.nn.functional.cross_entropy(logits, yt[batch])
                if l2 is not None:
                    loss = loss + 0.5 * l2 * (self.linear_.weight**2).sum()
                opt.zero_grad()
                loss.backward()
                opt.step()
            if dev is not None:
                score = float(np.mean(self.predict(dev[0]) == dev[1]))
                if best is None or score > best[0]:
                    best = (score, self._state())
        if best is not None:
            self._load_state(best[1])
            self.dev_score_ = best[0]

    def predict_proba(self, X: np.ndarray) -> np.ndarray:
        """(n, k) probabilities for X (n_layers, n, dim)."""
        import torch

        with torch.no_grad():
            self.mix_.eval()
            out = []
            step = _chunk_rows(X)
            for start in range(0, X.shape[1], step):
                xt = torch.from_numpy(self._standardise(X[:, start : start + step]))
                out.append(torch.softmax(self.linear_(self._mix(xt)), dim=-1).numpy())
        return np.concatenate(out) if out else np.zeros((0, len(self.classes_)))

    def predict(self, X: np.ndarray) -> np.ndarray:
        """(n,) labels for X (n_layers, n, dim)."""
        return self.classes_[np.argmax(self.predict_proba(X), axis=1)]

    def score(self, X: np.ndarray, y: Sequence) -> float:
        return float(np.mean(self.predict(X) == np.asarray(y)))

    # -- internals ------------------------------------------------------------------------

    def _fit_lbfgs(
        self,
        Xs: np.ndarray,
        y_idx: np.ndarray,
        standardised: bool,
        member: tuple[int, LinearProbe] | None,
    ) -> None:
        """The full-batch solve from the best member (:mod:`probing.probes.mix_solve`);
        sets ``mix_`` (γ at 1), ``linear_`` and the solve's counts."""
        import torch

        from probing.encoders.scalar_mix import ScalarMix
        from probing.probes.mix_solve import member_start, solve_mix, start_scalars

        if self.C is None or not self.C > 0:
            raise ValueError(f"the lbfgs solver needs the members' C > 0, not {self.C}")
        n_layers, dim = Xs.shape[0], Xs.shape[2]
        k = len(self.classes_)
        usable = member is not None and np.array_equal(
            getattr(member[1], "classes_", None), self.classes_
        )
        if usable:
            pos, probe = member
            W, b = member_start(probe, self.mean_[pos, 0], self.std_[pos, 0])
            self.start_layer_ = self.layers_[pos]
        else:
            pos, self.start_layer_ = None, None
            counts = np.bincount(y_idx, minlength=k).astype(float)
            log_p = np.log(np.maximum(counts, 1) / counts.sum())
            W, b = np.zeros((k, dim), np.float32), (log_p - log_p.mean()).astype(np.float32)
        mean, std = self.mean_, self.std_
        if standardised:
            mean, std = np.zeros_like(mean), np.ones_like(std)
        sol = solve_mix(
            Xs,
            y_idx,
            mean,
            std,
            float(self.C),
            (start_scalars(n_layers, pos), W, b),
            tol=self.tol,
            max_iter=self.max_iter,
            chunk_rows=_chunk_rows(Xs),
        )
        self.mix_ = ScalarMix(n_layers, initial_weights=sol.scalars.tolist())
        self.mix_.gamma.requires_grad_(False)
        self.linear_ = torch.nn.Linear(dim, k)
        with torch.no_grad():
            self.linear_.weight.copy_(torch.from_numpy(sol.coef))
            self.linear_.bias.copy_(torch.from_numpy(sol.intercept))
        self.objective_, self.n_iter_, self.n_evals_ = sol.objective, sol.n_iter, sol.n_evals
        self.epochs_ = 0

    def _optimiser(self, n: int) -> tuple[torch.optim.Adam, float | None]:
        """Adam over the mix and the classifier, and the classifier's L2 strength on the
        mean loss of ``n`` words: with the members' penalty (``C``) γ is held at 1 and the
        L2 is in the loss instead of Adam's weight decay."""
        import torch

        if self.C is not None and not self.C > 0:
            raise ValueError(f"C must be > 0, not {self.C}")
        l2 = None if self.C is None else 1.0 / (self.C * n)
        mix_params = list(self.mix_.parameters())
        if l2 is not None:
            self.mix_.gamma.requires_grad_(False)
            mix_params = [q for name, q in self.mix_.named_parameters() if name != "gamma"]
        lr_mix = self.lr_mix if self.lr_mix is not None else 5e-2 if l2 is None else 3e-3
        opt = torch.optim.Adam(
            [
                {"params": mix_params, "lr": lr_mix},
                {
                    "params": self.linear_.parameters(),
                    "lr": self.lr,
                    "weight_decay": self.weight_decay if l2 is None else 0.0,
                },
            ]
        )
        return opt, l2

    def _standardise(self, X: np.ndarray) -> np.ndarray:
        """float32 (L, B, D) standardised per layer and dimension (a new array)."""
        return _standardised(X, self.mean_, self.std_)

    def _mix(self, x: torch.Tensor) -> torch.Tensor:  # (L, B, D) -> (B, D)
        # γ · Σ_j softmax(s)_j h_j as one contraction (ScalarMix's formula, vectorised).
        return self.mix_.gamma * torch_tensordot(self.mix_.weights, x)

    def _state(self) -> dict:
        return {
            "mix": {k: v.detach().clone() for k, v in self.mix_.state_dict().items()},
            "linear": {k: v.detach().clone() for k, v in self.linear_.state_dict().items()},
        }

    def _load_state(self, state: dict) -> None:
        self.mix_.load_state_dict(state["mix"])
        self.linear_.load_state_dict(state["linear"])


def standardise_layers(X: np.ndarray) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray]]:
    """X (L, n, D) standardised per layer and dimension with its own statistics, float32,
    and those (mean, std): what :meth:`ScalarMixProbe.fit` does to its training sample.
    A layer's statistics do not depend on the other layers, so any first k layers of the
    result, with the first k of the statistics, are the standardised sample of those k."""
    mean, std = _layer_stats(X, np.arange(X.shape[1]))
    return _standardised(X, mean, std), (mean, std)


def layer_stats(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(mean, std), (L, 1, D) each, of X (L, n, D) over all its rows: what
    :meth:`ScalarMixProbe.fit` computes for its training sample (``stats=``)."""
    return _layer_stats(X, np.arange(X.shape[1]))


def _standardised(X: np.ndarray, mean: np.ndarray, std: np.ndarray) -> np.ndarray:
    """``(X - mean) / std`` as a new float32 array, computed in place on one copy (not three
    more arrays of X's size at the peak)."""
    x = np.array(X, np.float32)
    x -= mean
    x /= std
    return x


def torch_tensordot(w: torch.Tensor, x: torch.Tensor) -> torch.Tensor:  # (L,), (L, B, D) -> (B, D)
    import torch

    return torch.tensordot(w.to(x.dtype), x, dims=1)


def _layer_stats(X: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-layer, per-dimension mean and std (+1e-6) over ``rows``, float64 sums in chunks:
    float32 (L, 1, D) each."""
    total = np.zeros((X.shape[0], 1, X.shape[2]))
    sq = np.zeros_like(total)
    step = _chunk_rows(X)
    for start in range(0, len(rows), step):
        chunk = np.asarray(X[:, rows[start : start + step]], np.float64)
        total += chunk.sum(axis=1, keepdims=True)
        sq += np.square(chunk, out=chunk).sum(axis=1, keepdims=True)
    mean = total / len(rows)
    std = np.sqrt(np.maximum(sq / len(rows) - mean * mean, 0.0)) + 1e-6
    return mean.astype(np.float32), std.astype(np.float32)


def mix_weights(mix: ScalarMix) -> tuple[np.ndarray, float]:
    """(softmax weights (n_layers,) summing to 1, γ) of a ScalarMix module."""
    import torch

    with torch.no_grad():
        return mix.weights.detach().cpu().numpy().astype(float), float(mix.gamma)
