"""The linear probe: multinomial logistic regression on one layer's word vectors (torch).

The objective is scikit-learn's ``LogisticRegression(C)`` with a multinomial loss::

    f(W, b) = mean_i CE(softmax(W x_i + b), y_i) + ||W||² / (2 C n)

(the intercept is not penalised), minimised full-batch with L-BFGS (strong-Wolfe line
search), so the same C means the same model as sklearn's (tests check the objective to
1e-4 relative on real features). Two-class problems are fitted as a two-row softmax, not
sklearn's single logistic vector; every task here has more classes.

L-BFGS runs in whitened coordinates: ``W = M V P`` and ``b = M c`` with ``P = (Σ + εI)^-1/2``
(Σ the correlation matrix of the standardised features) and ``M = (A + εI)^-1/2`` (A the
softmax's class curvature at the start point), a reparametrisation of the same objective
(the penalty stays ``||W||²``, so the minimiser is the same W) that is better conditioned,
and stops by sklearn's test on W's own gradient.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin

if TYPE_CHECKING:  # torch is imported where a fit runs, not with the module
    import torch

DEFAULT_CS: tuple[float, ...] = (0.01, 0.1, 1.0)
_CHUNK = 65_536  # rows per prediction pass
_WHITEN_ROWS = 20_000  # rows that estimate the whitening (it only shapes the path, not the answer)
_WHITEN_EPS = 3.0  # ε of (Σ + εI)^-1/2, in units of Σ's mean eigenvalue (1: a correlation matrix)
_CARRY_MEMORY = True  # each C of a grid starts with the previous C's L-BFGS memory
_CLASS_EPS = 1.0  # ε of the class side's (A + εI)^-1/2, in units of A's mean diagonal
# sklearn's ``_handle_zeros_in_scale`` floor for a float32 scale: 10 x float32's eps.
NEAR_CONSTANT_SCALE = 10 * float(np.finfo(np.float32).eps)
_EVALUATIONS = [0]  # objective evaluations in this process (benchmarks read it)


def evaluation_count() -> int:
    """Objective evaluations (one pass over the training matrix and back) made by every
    linear probe fit in this process so far."""
    return _EVALUATIONS[0]


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
        - *Whitened coordinates* (``whiten``): BERT features are strongly correlated, so the
          objective's curvature spans orders of magnitude and L-BFGS needs many evaluations.
          Optimising over V with ``W = V (Σ + εI)^-1/2`` is the same objective in other
          coordinates (same minimiser, penalty still on W); it stops when W's gradient meets
          ``tol``, as without whitening.
        - *Warm starts* (``init``): a fitted probe with the same classes (the previous layer's,
          the task's control at the previous layer) starts the first C of this fit from its
          solution at that C instead of from zero; the answer is the same minimiser.

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
        whiten: optimise in whitened coordinates (same objective; far fewer evaluations).
        init: a fitted LinearProbe to warm-start from (ignored unless its classes and
            dimension match).

    Attributes (after ``fit``):
        classes_: (k,) labels. C_: the C used. dev_scores_: {C: dev accuracy}.
        n_train_: training words used. coef_: (k, dim), intercept_: (k,) on standardised
        features; mean_, scale_: (dim,) the standardisation. n_iter_: L-BFGS iterations
        of the final fit. objective_: its final objective value. n_evals_: objective
        evaluations of the whole fit (every C). path_: {C: (coef, intercept)} each C's
        solution (what ``init`` reads).
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
        whiten: bool = True,
        init: LinearProbe | None = None,
    ) -> None:
        self.C = C
        self.Cs = Cs
        self.max_iter = max_iter
        self.tol = tol
        self.max_train_words = max_train_words
        self.random_state = random_state
        self.device = device
        self.n_threads = n_threads
        self.whiten = whiten
        self.init = init

    # -- pickling ---------------------------------------------------------------------------

    # A probe crosses processes (the app's worker pipe, Ray) as numpy arrays: torch pickles a
    # tensor by sharing its storage through a file descriptor, which a process the sender did
    # not start itself (the app's spawned worker and its server) cannot open.
    def __getstate__(self) -> dict:
        return {k: _packed(v) for k, v in super().__getstate__().items()}

    def __setstate__(self, state: dict) -> None:
        super().__setstate__({k: _unpacked(v) for k, v in state.items()})
        device = getattr(self, "device_", None)
        if device is not None and str(device) != str(_unpacked_device(str(device))):
            self.device_ = _unpacked_device(str(device))  # fitted on a GPU this process lacks

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
            self._fit(X, y, X_dev, y_dev)
        self._PS = (None, None)  # 2 x dim x dim floats only the fit needs
        self._memory, self._y_idx = None, None
        return self

    def _fit(
        self, X: np.ndarray, y: Sequence, X_dev: np.ndarray | None, y_dev: Sequence | None
    ) -> LinearProbe:
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
        # Near-constant features get scale 1, as sklearn's ``_handle_zeros_in_scale`` floors
        # a float32 scale (< 10 eps): minilm-l6's layer 6 has a dimension near -1e-7 whose sd
        # (2e-8) is float16 rounding alone; dividing by it made the probe read that rounding.
        scale[scale < NEAR_CONSTANT_SCALE] = 1.0
        self.mean_, self.scale_ = mean.float(), scale.float()
        yt = torch.from_numpy(y_idx.astype(np.int64)).to(self.device_)
        self._y_idx = yt
        self.n_train_ = int(len(y))
        self.dev_scores_: dict[float, float] = {}
        # Standardisation is folded into the weights (below), so the training matrix is never
        # copied: at 200k words x 384 dims that is 300 MB less at the peak.
        self.n_evals_ = 0
        self.path_: dict[float, tuple[np.ndarray, np.ndarray]] = {}
        self._PS = _whitening(Xt, self.mean_, self.scale_) if self.whiten else (None, None)
        self._memory = None  # the last C's L-BFGS memory (the next C of the grid starts with it)
        first_c = float(self.C) if self.C is not None else min(float(c) for c in self.Cs)
        W, b = self._start(first_c, Xt.shape[1])
        if self.C is not None:
            self.C_ = float(self.C)
            W = self._lbfgs(Xt, yt, W, b, self.C_)
            self._keep(W, b)
            return self
        Xd = np.asarray(X_dev, dtype=np.float32)
        y_dev = np.asarray(y_dev)
        best = None
        for C in sorted(float(c) for c in self.Cs):  # strong to weak: warm starts help most
            W = self._lbfgs(Xt, yt, W, b, C)
            self._keep(W, b)
            score = float(np.mean(self.predict(Xd) == y_dev))
            self.dev_scores_[C] = score
            if best is None or score > best[0]:
                best = (
                    score,
                    C,
                    W.detach().clone(),
                    b.detach().clone(),
                    self.n_iter_,
                    self.objective_,
                )
        _, self.C_, W_best, b_best, self.n_iter_, self.objective_ = best
        self._keep(W_best, b_best)
        return self

    def _start(self, C: float, dim: int) -> tuple[torch.Tensor, torch.Tensor]:
        """Where the first fit starts: ``init``'s solution at C (or its nearest C) when it
        fits this problem, else zeros."""
        import torch

        k = len(self.classes_)
        path = getattr(self.init, "path_", None) or {}
        same = (
            path
            and np.array_equal(getattr(self.init, "classes_", None), self.classes_)
            and next(iter(path.values()))[0].shape == (k, dim)
        )
        if not same:
            # From zero weights, the intercept that is optimal for them: the log class
            # frequencies (centred). Only the path changes, not the minimiser.
            b = torch.zeros(k, device=self.device_)
            if self.whiten:
                counts = torch.bincount(self._y_idx, minlength=k).double()
                log_p = torch.log(counts.clamp_min(1) / counts.sum())
                b = (log_p - log_p.mean()).float()
            return torch.zeros(k, dim, device=self.device_), b
        W, b = path[min(path, key=lambda c: abs(np.log(c / C)))]
        return torch.tensor(W, device=self.device_), torch.tensor(b, device=self.device_)

    def _lbfgs(
        self, X: torch.Tensor, yt: torch.Tensor, W: torch.Tensor, b: torch.Tensor, C: float
    ) -> torch.Tensor:
        """Minimise the objective for one C from (W, b); returns the new W, updates ``b`` in
        place.

        ``X`` is the raw (n, dim) matrix: ``((X - mean) / scale) W^T + b`` is computed as
        ``X (W / scale)^T + (b - (W / scale) mean)``, the same function of (W, b).
        Whitened, L-BFGS moves (V, c) with W = M V P and b = M c; the stopping test is on
        W's and b's own gradients, G_W = M^-1 G_V P^-1 and G_b = M^-1 G_c: when it passes,
        the gradients handed to L-BFGS are zeroed, which ends the run there."""
        import torch

        n = X.shape[0]
        l2 = 1.0 / (C * n)
        P, S = self._PS
        M, Minv = (
            _class_whitening(X, W, b, self.mean_, self.scale_) if P is not None else (None, None)
        )
        V = W if S is None else Minv @ W @ S
        c = b if M is None else Minv @ b
        V = V.detach().clone().requires_grad_(True)
        c = c.detach().clone().requires_grad_(True)
        opt = torch.optim.LBFGS(
            [V, c],
            lr=1.0,
            max_iter=self.max_iter,
            tolerance_grad=self.tol if S is None else 0.0,
            tolerance_change=1e-12,
            history_size=10,
            line_search_fn="strong_wolfe",
        )

        def weights() -> tuple[torch.Tensor, torch.Tensor]:  # from the optimiser's coordinates
            if P is None:
                return V, c
            return M @ V @ P, M @ c

        def objective() -> torch.Tensor:
            W, b_ = weights()
            w_raw = W / self.scale_
            logits = torch.addmm(b_ - w_raw @ self.mean_, X, w_raw.T)
            loss = torch.nn.functional.cross_entropy(logits, yt)
            return loss + 0.5 * l2 * (W * W).sum()

        def closure() -> torch.Tensor:
            opt.zero_grad()
            loss = objective()
            loss.backward()
            _EVALUATIONS[0] += 1
            self.n_evals_ += 1
            if S is not None:
                g_w = (Minv @ V.grad @ S).abs().max()
                g_b = (Minv @ c.grad).abs().max()
                if max(float(g_w), float(g_b)) <= self.tol:
                    V.grad.zero_()
                    c.grad.zero_()
            return loss

        if P is not None and _CARRY_MEMORY:
            _inject_memory(opt, self._memory, l2, M, P)
        opt.step(closure)
        if P is not None:
            st = opt.state[V]
            self._memory = (l2, st.get("old_dirs") or [], st.get("old_stps") or [])
        self.n_iter_ = int(opt.state[V].get("n_iter", 0))
        with torch.no_grad():
            self.objective_ = float(objective())
            W, b_new = (t.detach() for t in weights())
            b.copy_(b_new)
        self.path_[C] = (W.cpu().numpy().copy(), b.detach().cpu().numpy().copy())
        return W

    def _keep(self, W: torch.Tensor, b: torch.Tensor) -> None:
        self.coef_ = W.detach().cpu().numpy().copy()
        self.intercept_ = b.detach().cpu().numpy().copy()
        self._W, self._b = W.detach().clone(), b.detach().clone()

    def _standardise(self, Xt: torch.Tensor) -> torch.Tensor:  # (n, dim) float32
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


def _chunked_moments(Xt: torch.Tensor, chunk: int = 8_192) -> tuple[torch.Tensor, torch.Tensor]:
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


def _whitening(
    Xt: torch.Tensor, mean: torch.Tensor, scale: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """P = (Σ + εI)^-1/2 and S = P^-1 (dim x dim, float32), Σ the correlation matrix of the
    standardised features estimated on at most ``_WHITEN_ROWS`` evenly spaced rows.

    Only the optimiser's path depends on P (the objective and its minimiser do not), so a
    sample and a float32 product are enough. What slows L-BFGS on BERT features is a few
    directions of very large variance (Σ's top eigenvalues are tens of times its mean of
    1); ε = ``_WHITEN_EPS`` shrinks those and leaves the many small ones nearly as they are
    (stretching them as full whitening does made fits slower: bench/probe_fit.py)."""
    import torch

    step = max(1, Xt.shape[0] // _WHITEN_ROWS)
    Z = (Xt[::step][:_WHITEN_ROWS] - mean) / scale
    evals, evecs = torch.linalg.eigh((Z.T @ Z).double() / Z.shape[0])
    lam = evals.clamp_min(0) + _WHITEN_EPS
    P = (evecs * lam.rsqrt()) @ evecs.T
    S = (evecs * lam.sqrt()) @ evecs.T
    return P.float(), S.float()


def _inject_memory(
    opt: torch.optim.LBFGS,
    memory: tuple[float, list[torch.Tensor], list[torch.Tensor]] | None,
    l2: float,
    M: torch.Tensor,
    P: torch.Tensor,
) -> None:
    """Start ``opt`` (a fresh L-BFGS over [V, c]) with the curvature pairs of the previous
    C's run on the same data, each y shifted for the change of penalty.

    The penalty 0.5 λ ||M V P||² is quadratic, so its part of y = ∇f(x + s) - ∇f(x) is
    λ M² s_V P²; replacing λ_old by λ_new (with this run's M) shifts each y by that much.
    The class factor M is re-estimated at each C, so the old pairs were measured in
    slightly other coordinates: they are used as they are, an approximation of the
    curvature that only shapes the first steps (the stopping test is on W's true
    gradient, so the answer is the same minimiser; an exact change of coordinates was
    tried: docs/benchmarks.md). Pairs no longer of positive curvature are
    dropped. The state is set so that torch's next iteration adds no pair and takes the
    quasi-Newton step from the carried memory (torch starts from a gradient step
    otherwise)."""
    import torch

    if memory is None or not memory[1]:
        return
    l2_old, ys, ss = memory
    shape = opt._params[0].shape
    n_v = opt._params[0].numel()
    M2, P2 = M @ M, P @ P
    dirs, stps, ro = [], [], []
    for y, s in zip(ys, ss, strict=True):
        s_v = s[:n_v].view(shape)
        y = y.clone()
        y[:n_v] += (l2 - l2_old) * (M2 @ s_v @ P2).reshape(-1)
        ys_dot = float(y.dot(s))
        if ys_dot > 1e-10:
            dirs.append(y)
            stps.append(s)
            ro.append(1.0 / ys_dot)
    if not dirs:
        return
    flat = torch.zeros_like(dirs[0])
    state = opt.state[opt._params[0]]
    state.update(
        {
            "n_iter": 1,  # not the first: torch then uses the memory
            "func_evals": 0,
            "d": flat.clone(),
            "t": 0.0,  # s = d t = 0: no pair added from the (other-C) previous step
            "old_dirs": dirs,
            "old_stps": stps,
            "ro": ro,
            "H_diag": float(stps[-1].dot(dirs[-1]) / dirs[-1].dot(dirs[-1])),
            "prev_flat_grad": flat.clone(),
            "prev_loss": float("inf"),
        }
    )


def _class_whitening(
    X: torch.Tensor, W: torch.Tensor, b: torch.Tensor, mean: torch.Tensor, scale: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """M = (A + εI)^-1/2 and M^-1 (k x k, float32), A = mean_i(diag(p_i) - p_i p_i^T) the
    softmax's curvature over classes at (W, b), normalised to mean diagonal 1, on at most
    ``_WHITEN_ROWS`` evenly spaced rows (a forward pass over a tenth of the data or less).

    The logistic objective's Hessian is close to A ⊗ Σ: P handles Σ, M handles A, whose
    diagonal spans orders of magnitude between frequent, rare and already-certain classes
    (the slow directions once the path has left zero). ε = ``_CLASS_EPS``."""
    import torch

    with torch.no_grad():
        step = max(1, X.shape[0] // _WHITEN_ROWS)
        w_raw = W / scale
        logits = torch.addmm(b - w_raw @ mean, X[::step][:_WHITEN_ROWS], w_raw.T)
        p = torch.softmax(logits.double(), dim=1)
        A = torch.diag(p.mean(0)) - p.T @ p / p.shape[0]
        A = A / torch.diagonal(A).mean().clamp_min(1e-12)
        evals, evecs = torch.linalg.eigh(A + _CLASS_EPS * torch.eye(len(A), dtype=A.dtype))
        evals = evals.clamp_min(1e-6)
        M = (evecs * evals.rsqrt()) @ evecs.T
        Minv = (evecs * evals.sqrt()) @ evecs.T
    return M.float().to(W.device), Minv.float().to(W.device)


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


class _Tensor:
    """A torch tensor's values as numpy, in a pickle (see ``LinearProbe.__getstate__``)."""

    def __init__(self, values: np.ndarray, device: str) -> None:
        self.values, self.device = values, device


def _packed(value: object) -> object:
    import torch

    if isinstance(value, torch.Tensor):
        return _Tensor(value.detach().cpu().numpy(), str(value.device))
    if isinstance(value, tuple | list):
        return type(value)(_packed(v) for v in value)
    return value


def _unpacked(value: object) -> object:
    import torch

    if isinstance(value, _Tensor):
        return torch.from_numpy(value.values).to(_unpacked_device(value.device))
    if isinstance(value, tuple | list):
        return type(value)(_unpacked(v) for v in value)
    return value


def _unpacked_device(device: str) -> torch.device:
    """``device`` where this process has it, else the CPU."""
    import torch

    usable = not device.startswith("cuda") or torch.cuda.is_available()
    return torch.device(device if usable else "cpu")
