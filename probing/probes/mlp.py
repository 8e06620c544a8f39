"""A probe with one hidden layer, and selectivity at two capacities.

:class:`MLPProbe` is Hewitt & Liang's (2019) MLP-1, as john-hewitt/control-tasks builds it
(``OneWordNNLabelProbe``): dropout on the input, ``Linear(dim, hidden)``, ReLU, dropout,
``Linear(hidden, n_classes)``, trained with Adam on cross-entropy, the epoch with the
lowest dev loss kept. Differences: the inputs are standardised (as the linear probe's), and
without a dev split 10 % of the training words are held out for the early stopping.

:func:`capacity_selectivity` trains the linear probe and the MLP on the same words, each on
the task and on the same control labels (Hewitt & Liang's control task), and compares them
paired on the same test sentences: selectivity (task − control) per probe family, and the
difference of the two selectivities, so that "selectivity falls as capacity grows" is a
claim with an interval (:mod:`probing.probes.compare`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin

from probing.probes.compare import Engine, Replicates, SentenceCounts, compare

if TYPE_CHECKING:  # torch is imported where a fit runs, not with the module
    from torch import nn


class MLPProbe(BaseEstimator, ClassifierMixin):
    """One-hidden-layer probe (see the module doc).

    Args:
        hidden: hidden units (control-tasks' ``maximum_rank``; their MLP-1 default 1000).
        dropout: on the input and the hidden layer.
        lr: Adam's learning rate. max_epochs: epochs at most. batch_size: words per step.
        patience: epochs without a dev-loss improvement before stopping.
        random_state: seed of the initialisation, the batches and the held-out words.

    Examples:
        >>> import numpy as np
        >>> X = np.r_[np.zeros((20, 2)), np.ones((20, 2))]
        >>> y = np.array(["a"] * 20 + ["b"] * 20)
        >>> MLPProbe(hidden=8, lr=0.05, max_epochs=50).fit(X, y).score(X, y)
        1.0
    """

    def __init__(
        self,
        hidden: int = 1000,
        dropout: float = 0.0,
        lr: float = 1e-3,
        max_epochs: int = 40,
        batch_size: int = 256,
        patience: int = 3,
        random_state: int = 0,
    ) -> None:
        self.hidden = hidden
        self.dropout = dropout
        self.lr = lr
        self.max_epochs = max_epochs
        self.batch_size = batch_size
        self.patience = patience
        self.random_state = random_state

    def fit(
        self,
        X: np.ndarray,
        y: Sequence,
        X_dev: np.ndarray | None = None,
        y_dev: Sequence | None = None,
    ) -> MLPProbe:
        """X: (n, dim) vectors; y: (n,) labels; optional dev split for early stopping."""
        import torch

        rng = np.random.default_rng(self.random_state)
        torch.manual_seed(self.random_state)
        X = np.asarray(X, dtype=np.float32)
        y = np.asarray(y)
        self.classes_, codes = np.unique(y, return_inverse=True)
        if X_dev is None or y_dev is None or not len(y_dev):
            held = rng.random(len(y)) < 0.1
            X, X_dev, codes, dev_codes = X[~held], X[held], codes[~held], codes[held]
        else:
            X_dev = np.asarray(X_dev, dtype=np.float32)
            known = np.isin(np.asarray(y_dev), self.classes_)
            X_dev = X_dev[known]
            dev_codes = np.searchsorted(self.classes_, np.asarray(y_dev)[known])
        self.mean_ = X.mean(axis=0)
        self.scale_ = np.maximum(X.std(axis=0), 1e-6)  # a constant dimension stays put
        net = self._net(X.shape[1], len(self.classes_))
        opt = torch.optim.Adam(net.parameters(), lr=self.lr)
        Xt, yt = torch.from_numpy(self._standardise(X)), torch.from_numpy(codes.astype(np.int64))
        Xd = torch.from_numpy(self._standardise(X_dev))
        yd = torch.from_numpy(dev_codes.astype(np.int64))
        loss_fn = torch.nn.CrossEntropyLoss()
        best, best_state, waited, self.epochs_ = np.inf, None, 0, 0
        for epoch in range(self.max_epochs):
            net.train()
            for idx in np.array_split(rng.permutation(len(yt)), max(1, len(yt) // self.batch_size)):
                opt.zero_grad()
                loss = loss_fn(net(Xt[idx]), yt[idx])
                loss.backward()
                opt.step()
            net.eval()
            with torch.no_grad():
                dev_loss = float(loss_fn(net(Xd), yd)) if len(yd) else float(loss)
            if dev_loss < best - 1e-6:
                best, waited, self.epochs_ = dev_loss, 0, epoch + 1
                best_state = {k: v.clone() for k, v in net.state_dict().items()}
            else:
                waited += 1
                if waited >= self.patience:
                    break
        if best_state is not None:
            net.load_state_dict(best_state)
        self.net_ = net.eval()
        return self

    def _net(self, dim: int, n_classes: int) -> nn.Sequential:
        import torch.nn as nn

        return nn.Sequential(
            nn.Dropout(self.dropout),
            nn.Linear(dim, self.hidden),
            nn.ReLU(),
            nn.Dropout(self.dropout),
            nn.Linear(self.hidden, n_classes),
        )

    def _standardise(self, X: np.ndarray) -> np.ndarray:
        return ((np.asarray(X, np.float32) - self.mean_) / self.scale_).astype(np.float32)

    def predict(self, X: np.ndarray) -> np.ndarray:
        """(n,) predicted labels."""
        import torch

        with torch.no_grad():
            logits = self.net_(torch.from_numpy(self._standardise(X)))
        return self.classes_[logits.argmax(dim=1).numpy()]


def capacity_selectivity(
    X_tr: np.ndarray,
    y_tr: np.ndarray,
    c_tr: np.ndarray,
    X_te: np.ndarray,
    y_te: np.ndarray,
    c_te: np.ndarray,
    sentence: np.ndarray,
    n_sentences: int,
    linear: Callable[[], ClassifierMixin],  # a factory of fresh estimators
    mlp: Callable[[], MLPProbe],
    engine: Engine | None = None,
) -> dict:
    """Task and control accuracy of two probe families on the same words, paired.

    Args:
        X_tr, y_tr, c_tr: (n, dim) training vectors, task labels, control labels.
        X_te, y_te, c_te: the same for the test words; ``sentence`` (n_te,) their test
            sentence (0 … n_sentences - 1).
        linear, mlp: factories of fresh estimators (``fit(X, y)``, ``predict(X)``).

    Returns:
        ``{"linear": {...}, "mlp": {...}, "selectivity_drop": Difference dict}``: per family
        accuracy, control accuracy and selectivity (with its paired interval), and
        ``selectivity(linear) − selectivity(mlp)`` with its interval and p.
    """
    correct = {
        name: {
            "task": [make().fit(X_tr, y_tr).predict(X_te) == np.asarray(y_te)],
            "control": [make().fit(X_tr, c_tr).predict(X_te) == np.asarray(c_te)],
        }
        for name, make in (("linear", linear), ("mlp", mlp))
    }
    return selectivity_by_capacity(correct, sentence, n_sentences, (0,), engine)


def selectivity_by_capacity(
    correct: dict[str, dict[str, Sequence[np.ndarray]]],
    sentence: np.ndarray,
    n_sentences: int,
    seeds: Sequence[int],
    engine: Engine | None = None,
    unit: str = "test",
) -> dict:
    """Selectivity per probe family and its drop between two families, seeds folded in.

    Args:
        correct: ``{family: {"task": [...], "control": [...]}}``, per seed a (n_te,) bool
            array of right predictions (each seed may have its own control labelling and
            training words); exactly two families, the first the lower capacity.
        sentence, n_sentences: each test word's sentence, and how many there are.
        seeds: the seeds, in the order of the lists.
        unit: the bootstrap unit's name (the engine's draws are keyed on it: the same name
            gives the same resampled sentences as other tables of that test split).

    Returns:
        As :func:`capacity_selectivity`; the intervals are the engine's two-level ones
        (seeds and test sentences), and ``selectivity_drop`` is
        ``selectivity(first) − selectivity(second)``.
    """
    if len(correct) != 2:
        raise ValueError(f"two probe families are compared, got {sorted(correct)}")
    engine = engine or Engine(n_boot=1000, seed=0)
    out: dict = {}
    selectivity = {}
    for name, by_kind in correct.items():
        reps = {
            kind: engine.replicates(
                f"{name} {kind}",
                SentenceCounts.from_predictions(
                    "accuracy",
                    np.ones(len(sentence), dtype=int),
                    [np.asarray(ok, dtype=int) for ok in by_kind[kind]],
                    sentence,
                    n_sentences,
                    tuple(seeds),
                ),
                unit,
            )
            for kind in ("task", "control")
        }
        t, c = reps["task"], reps["control"]
        selectivity[name] = Replicates(
            f"{name} selectivity", t.points - c.points, t.draws - c.draws, unit, t.seeds
        )
        out[name] = {
            "accuracy": t.value,
            "control": c.value,
            "selectivity": compare(t, c, engine.seed).as_dict(),
        }
    # selectivity(first) − selectivity(second), paired: a difference of paired differences.
    low, high = selectivity
    out["selectivity_drop"] = compare(selectivity[low], selectivity[high], engine.seed).as_dict()
    return out
