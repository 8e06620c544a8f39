"""The linear probe: multinomial logistic regression on one layer's word vectors."""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_limits

DEFAULT_CS: tuple[float, ...] = (0.01, 0.1, 1.0)


class LinearProbe(ClassifierMixin, BaseEstimator):
    """Multinomial logistic regression over standardised features, C chosen on dev.

    Why these choices:
        - *Linear* (Hewitt & Liang 2019; Liu et al. 2019): a probe simple enough that what it
          finds must be (linearly) present in the representation, not learned by the probe.
        - *Standardised* features: BERT layers have a few dimensions with very large values;
          scaling makes one C grid sensible across layers and models, and lbfgs converge.
        - *C from a small grid on the dev split* (``Cs``, tried from strongest to weakest
          regularisation, each fit warm-started from the previous one, so the grid costs
          little more than one fit). Without dev data, 10 % of the training words are held
          out for the choice. Give ``C`` to skip the search (control probes reuse the task
          probe's C so that task and control are probed with the same capacity).
        - *Training words capped* at ``max_train_words`` (a seeded uniform sample): probe
          accuracy is nearly flat beyond a few tens of thousands of words for tag sets of
          this size, while lbfgs time grows linearly with them.
        - ``max_iter`` bounded: convergence warnings are silenced; at these sizes the last
          iterations change dev accuracy by less than the bootstrap interval.
        - *One BLAS thread*: the gradient's matrix products are skinny (one column per
          class), so extra BLAS threads gain nothing, and on a busy machine OpenBLAS's
          threads waiting for each other made a fit 10-40x slower (measured: 14.7 s vs
          0.38 s for 5k words x 384 dims x 17 tags on 2 shared cores).

    Args:
        C: inverse regularisation strength; ``None`` chooses it from ``Cs``.
        Cs: grid for the choice.
        max_iter: lbfgs iterations per fit.
        max_train_words: training-set cap (``None``: no cap).
        random_state: seed of the subsample and the holdout.

    Attributes (after ``fit``):
        classes_: (n_classes,) labels. C_: the C used. dev_scores_: {C: dev accuracy}.
        n_train_: training words actually used.
    """

    def __init__(
        self,
        C: float | None = None,
        Cs: Sequence[float] = DEFAULT_CS,
        max_iter: int = 200,
        max_train_words: int | None = 20_000,
        random_state: int = 0,
    ) -> None:
        self.C = C
        self.Cs = Cs
        self.max_iter = max_iter
        self.max_train_words = max_train_words
        self.random_state = random_state

    def fit(
        self,
        X: np.ndarray,
        y: Sequence,
        X_dev: np.ndarray | None = None,
        y_dev: Sequence | None = None,
    ) -> LinearProbe:
        """Fit on (n, dim) vectors and (n,) labels; dev (m, dim), (m,) for choosing C."""
        with threadpool_limits(limits=1, user_api="blas"):
            return self._fit(X, y, X_dev, y_dev)

    def _fit(self, X, y, X_dev, y_dev) -> LinearProbe:  # noqa: ANN001
        X, y = np.asarray(X, dtype=np.float32), np.asarray(y)
        rng = np.random.default_rng(self.random_state)
        if self.max_train_words is not None and len(y) > self.max_train_words:
            keep = np.sort(rng.choice(len(y), size=self.max_train_words, replace=False))
            X, y = X[keep], y[keep]
        if self.C is None and X_dev is None:
            hold = rng.random(len(y)) < 0.1
            X, X_dev, y, y_dev = X[~hold], X[hold], y[~hold], y[hold]
        self.scaler_ = StandardScaler().fit(X)
        Xs = self.scaler_.transform(X)
        self.n_train_ = int(len(y))
        self.dev_scores_: dict[float, float] = {}
        if self.C is not None:
            self.model_ = self._fit_one(Xs, y, float(self.C), None)
            self.C_ = float(self.C)
        else:
            Xd = self.scaler_.transform(np.asarray(X_dev, dtype=np.float32))
            y_dev = np.asarray(y_dev)
            best, model = None, None
            for C in sorted(self.Cs):
                model = self._fit_one(Xs, y, float(C), model)
                score = float(np.mean(model.predict(Xd) == y_dev))
                self.dev_scores_[float(C)] = score
                if best is None or score > best[0]:
                    best = (score, float(C), _copy_model(model))
            _, self.C_, self.model_ = best
        self.classes_ = self.model_.classes_
        return self

    def _fit_one(
        self, X: np.ndarray, y: np.ndarray, C: float, previous: LogisticRegression | None
    ) -> LogisticRegression:
        model = previous or LogisticRegression(
            max_iter=self.max_iter, warm_start=True, random_state=self.random_state
        )
        model.set_params(C=C)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            model.fit(X, y)
        return model

    def decision_function(self, X: np.ndarray) -> np.ndarray:
        """(n, n_classes) scores."""
        with threadpool_limits(limits=1, user_api="blas"):
            return self.model_.decision_function(self.scaler_.transform(np.asarray(X, np.float32)))

    def predict_proba(self, X: np.ndarray) -> np.ndarray:
        """(n, n_classes) class probabilities."""
        with threadpool_limits(limits=1, user_api="blas"):
            return self.model_.predict_proba(self.scaler_.transform(np.asarray(X, np.float32)))

    def predict(self, X: np.ndarray) -> np.ndarray:
        """(n,) predicted labels."""
        with threadpool_limits(limits=1, user_api="blas"):
            return self.model_.predict(self.scaler_.transform(np.asarray(X, np.float32)))


def _copy_model(model: LogisticRegression) -> LogisticRegression:
    """A frozen copy of a fitted model (the warm-started one keeps changing)."""
    copy = LogisticRegression(**model.get_params())
    for attr in ("coef_", "intercept_", "classes_", "n_iter_", "n_features_in_"):
        setattr(copy, attr, np.array(getattr(model, attr), copy=True))
    return copy
