"""The linear probe: multinomial logistic regression on one layer's word vectors (torch).

The objective is scikit-learn's ``LogisticRegression(C)`` with a multinomial loss::

    f(W, b) = mean_i CE(softmax(W x_i + b), y_i) + ||W||² / (2 C n)

(the intercept is not penalised), minimised full-batch with L-BFGS (strong-Wolfe line
search), so the same C means the same model as sklearn's (tests check the objective to
1e-4 relative on real features). Two-class problems are fitted as a two-row softmax, not
sklearn's single logistic vector; every task here has more classes.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin

DEFAULT_CS: tuple[float, ...] = (0.01, 0.1, 1.0)
_CHUNK = 65_536  # rows per prediction pass


class LinearProbe(ClassifierMixin, BaseEstimator):
    """Multinomial logistic regression over standardised features, C chosen on dev.

    Why these choices:
        - *Linear* (Hewitt & Liang 2019; Liu et al. 2019): a probe simple enough that what it
          finds must be (linearly) present in the representation, not learned by the probe.
        - *Standardised* features: BERT layers have a few dimensions with very large values;
          scaling makes one C grid sensible across layers and models, and L-BFGS converge.
        - *C from a small grid on the dev split* (``Cs``, tried from strongest to weakest
          regularisation, each fit warm-started from the previous one, so the grid costs
          little more than one fit). Without dev data, 10 % of the training words are held
          out for the choice. Give ``C`` to skip the search (control probes reuse the task
          probe's C so that task and control are probed with the same capacity).
        - *Full-batch L-BFGS in torch*: one pass over the data per function evaluation is
          two skinny matrix products (n x dim x classes), which BLAS runs near its peak;
          on CUDA when present (``device="auto"``).
        - *Threads pinned* (``n_threads``, default: torch's current setting, which follows
          ``OMP_NUM_THREADS``): on a busy machine, BLAS threads waiting for each other made
          a fit 10-40x slower.

    Args:
        C: inverse regularisation strength; ``None`` chooses it from ``Cs``.
        Cs: grid for the choice.
        max_iter: L-BFGS iterations per fit.
        tol: stop when every gradient entry of the (mean) objective is below this (sklearn's
            ``tol`` for lbfgs means the same).
        max_train_words: training-set cap, a seeded uniform sample (``None``: no cap).
        random_state: seed of the subsample and the holdout.
        device: ``auto`` (CUDA when present), ``cpu``, ``cuda``…
        n_threads: torch intra-op threads while fitting/predicting (``None``: unchanged).

    Attributes (after ``fit``):
        classes_: (k,) labels. C_: the C used. dev_scores_: {C: dev accuracy}.
        n_train_: training words used. coef_: (k, dim), intercept_: (k,) on standardised
        features; mean_, scale_: (dim,) the standardisation. n_iter_: L-BFGS iterations
        of the final fit. objective_: its final objective value.
    """

    def __init__(
        self,
        C: float | None = None,
        Cs: Sequence[float] = DEFAULT_CS,
        max_iter: int = 200,
        tol: float = 1e-4,
        max_train_words: int | None = 20_000,
        random_state: int = 0,
        device: str = "auto",
        n_threads: int | None = None,
    ) -> None:
        self.C = C
        self.Cs = Cs
        self.max_iter = max_iter
        self.tol = tol
        self.max_train_words = max_train_words
        self.random_state = random_state
        self.device = device
        self.n_threads = n_threads

    # -- fitting ----------------------------------------------------------------------------

    def fit(
        self,
        X: np.ndarray,
        y: Sequence,
        X_dev: np.ndarray | None = None,
        y_dev: Sequence | None = None,
    ) -> LinearProbe:
        """Fit on (n, dim) vectors and (n,) labels; dev (m, dim), (m,) for choosing C."""
        with _threads(self.n_threads):
            return self._fit(X, y, X_dev, y_dev)

    def _fit(self, X, y, X_dev, y_dev) -> LinearProbe:  # noqa: ANN001
        import torch

        from probing.encoders.batching import resolve_device

        y = np.asarray(y)
        rng = np.random.default_rng(self.random_state)
        rows = None
        if self.max_train_words is not None and len(y) > self.max_train_words:
            rows = np.sort(rng.choice(len(y), size=self.max_train_words, replace=False))
            y = y[rows]
        X = np.asarray(X if rows is None else X[rows], dtype=np.float32)
        if self.C is None and X_dev is None:
            hold = rng.random(len(y)) < 0.1
            X, X_dev, y, y_dev = X[~hold], X[hold], y[~hold], y[hold]
        self.device_ = resolve_device(self.device)
        self.classes_, y_idx = np.unique(y, return_inverse=True)
        Xt = torch.from_numpy(X).to(self.device_)
        if len(y) < 50_000:
            mean = Xt.mean(0, dtype=torch.float64)
            var = ((Xt.double() - mean) ** 2).mean(0)
        else:  # float64 sums in chunks: a float64 copy of 200k x 384 would be 600 MB
            mean, var = _chunked_moments(Xt)
        scale = torch.sqrt(var)
        scale[scale == 0] = 1.0  # constant features: as StandardScaler
        self.mean_, self.scale_ = mean.float(), scale.float()
        yt = torch.from_numpy(y_idx.astype(np.int64)).to(self.device_)
        self.n_train_ = int(len(y))
        self.dev_scores_: dict[float, float] = {}
        # Standardisation is folded into the weights (below), so the training matrix is never
        # copied: at 200k words x 384 dims that is 300 MB less at the peak.
        W = torch.zeros(len(self.classes_), Xt.shape[1], device=self.device_, requires_grad=True)
        b = torch.zeros(len(self.classes_), device=self.device_, requires_grad=True)
        if self.C is not None:
            self.C_ = float(self.C)
            self._lbfgs(Xt, yt, W, b, self.C_)
            self._keep(W, b)
            return self
        Xd = np.asarray(X_dev, dtype=np.float32)
        y_dev = np.asarray(y_dev)
        best = None
        for C in sorted(float(c) for c in self.Cs):  # strong to weak: warm starts help most
            self._lbfgs(Xt, yt, W, b, C)
            self._keep(W, b)
            score = float(np.mean(self.predict(Xd) == y_dev))
            self.dev_scores_[C] = score
            if best is None or score > best[0]:
                best = (score, C, W.detach().clone(), b.detach().clone(), self.n_iter_,
                        self.objective_)  # fmt: skip
        _, self.C_, W_best, b_best, self.n_iter_, self.objective_ = best
        self._keep(W_best, b_best)
        return self

    def _lbfgs(self, X, yt, W, b, C: float) -> None:  # noqa: ANN001 - tensors
        """Minimise the objective for one C from the current (W, b), in place.

        ``X`` is the raw (n, dim) matrix: ``((X - mean) / scale) W^T + b`` is computed as
        ``X (W / scale)^T + (b - (W / scale) mean)``, the same function of (W, b)."""
        import torch

        n = X.shape[0]
        l2 = 1.0 / (C * n)
        opt = torch.optim.LBFGS(
            [W, b],
            lr=1.0,
            max_iter=self.max_iter,
            tolerance_grad=self.tol,
            tolerance_change=1e-12,
            history_size=10,
            line_search_fn="strong_wolfe",
        )

        def objective():  # noqa: ANN202
            w_raw = W / self.scale_
            logits = torch.addmm(b - w_raw @ self.mean_, X, w_raw.T)
            loss = torch.nn.functional.cross_entropy(logits, yt)
            return loss + 0.5 * l2 * (W * W).sum()

        def closure():  # noqa: ANN202
            opt.zero_grad()
            loss = objective()
            loss.backward()
            return loss

        opt.step(closure)
        self.n_iter_ = int(opt.state[W].get("n_iter", 0))
        with torch.no_grad():
            self.objective_ = float(objective())

    def _keep(self, W, b) -> None:  # noqa: ANN001
        self.coef_ = W.detach().cpu().numpy().copy()
        self.intercept_ = b.detach().cpu().numpy().copy()
        self._W, self._b = W.detach().clone(), b.detach().clone()

    def _standardise(self, Xt):  # noqa: ANN001, ANN202 - (n, dim) float32 tensor
        return (Xt - self.mean_) / self.scale_

    # -- prediction -------------------------------------------------------------------------

    def standardise(self, X: np.ndarray) -> np.ndarray:
        """(n, dim) float32: X as the probe sees it (training mean and scale)."""
        import torch

        Xt = torch.from_numpy(np.asarray(X, np.float32)).to(self.device_)
        return self._standardise(Xt).cpu().numpy()

    def decision_function(self, X: np.ndarray) -> np.ndarray:
        """(n, k) scores."""
        return np.concatenate(list(self._scores(X, softmax=False)))

    def predict_proba(self, X: np.ndarray) -> np.ndarray:
        """(n, k) class probabilities."""
        return np.concatenate(list(self._scores(X, softmax=True)))

    def predict(self, X: np.ndarray) -> np.ndarray:
        """(n,) predicted labels."""
        idx = [s.argmax(axis=1) for s in self._scores(X, softmax=False)]
        return self.classes_[np.concatenate(idx)] if idx else self.classes_[:0]

    def _scores(self, X: np.ndarray, softmax: bool) -> Iterator[np.ndarray]:
        import torch

        X = np.asarray(X)
        if X.ndim != 2 or X.shape[1] != self.coef_.shape[1]:
            raise ValueError(f"expected (n, {self.coef_.shape[1]}) vectors, got {X.shape}")
        if len(X) == 0:
            yield np.zeros((0, len(self.classes_)), np.float32)
            return
        with _threads(self.n_threads), torch.no_grad():
            for start in range(0, len(X), _CHUNK):
                chunk = torch.from_numpy(np.asarray(X[start : start + _CHUNK], np.float32))
                s = torch.addmm(self._b, self._standardise(chunk.to(self.device_)), self._W.T)
                yield (torch.softmax(s, dim=1) if softmax else s).cpu().numpy()


def _chunked_moments(Xt, chunk: int = 8_192):  # noqa: ANN001, ANN202
    """Per-column mean and variance in float64 (two passes, as the whole-matrix formula)
    without a float64 copy of the matrix: at most ``chunk`` rows in float64 at a time."""
    import torch

    n = Xt.shape[0]
    total = 0.0
    for start in range(0, n, chunk):
        total = total + Xt[start : start + chunk].sum(0, dtype=torch.float64)
    mean = total / n
    acc = 0.0
    for start in range(0, n, chunk):
        acc = acc + ((Xt[start : start + chunk].double() - mean) ** 2).sum(0)
    return mean, acc / n


@contextlib.contextmanager
def _threads(n: int | None) -> Iterator[None]:
    """torch intra-op threads set to ``n`` for the block (unchanged when None)."""
    import torch

    if n is None:
        yield
        return
    before = torch.get_num_threads()
    torch.set_num_threads(int(n))
    try:
        yield
    finally:
        torch.set_num_threads(before)
