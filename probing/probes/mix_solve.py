"""The scalar mix solved second-order: full-batch L-BFGS from its best member (issue 41).

The objective is :class:`probing.probes.mix.ScalarMixProbe`'s with the members' penalty
(γ held at 1)::

    f(s, W, b) = mean_i CE(softmax(W z_i(s) + b), y_i) + ||W||² / (2 C n),
    z_i(s) = Σ_j softmax(s)_j (x_ij - m_j) / σ_j

(m_j, σ_j: layer j's training mean and std per dimension). Adam trains it in thousands of
minibatch steps (8 epochs at least) and stops short of its minimum (docs/benchmarks.md,
issue 41); here it is minimised full-batch with the members' machinery
(:mod:`probing.probes.linear`): L-BFGS with a strong-Wolfe line search in whitened
coordinates ``W = M V P``, ``b = M c`` (P from the start mix's feature correlations, M from
the softmax's class curvature at the start) and the mix scalars s as extra parameters,
stopping by the members' test (every entry of the true gradient of W, b and s at most
``tol``).

The start is the best member's probe: s concentrated on that layer (``_START_WEIGHT`` of the
softmax; a weight of 1 needs infinite scalars, and near it the other layers' scalars get
almost no gradient, so the stop could pass at once), the classifier that layer's fitted
probe mapped into the mix's standardised coordinates. Without a member, the start is the
uniform mix with W = 0 and the log class frequencies as intercept.

Each evaluation is one pass over the training words in row chunks, each chunk read once
(float16 or lazy stacks are converted chunk by chunk: no float32 copy of the sample is held)
with the standardisation folded into per-layer scale vectors.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import torch

    from probing.probes.linear import LinearProbe

_START_WEIGHT = 0.9  # softmax weight of the best member at the start (module doc)
_WHITEN_ROWS = 20_000  # rows whose start mix estimates the whitening (shapes the path only)


@dataclass
class MixSolution:
    """What a solve found: mix scalars s (L,), classifier W (k, D) and b (k,) on the mix's
    standardised coordinates, the final objective, L-BFGS iterations and evaluations."""

    scalars: np.ndarray
    coef: np.ndarray
    intercept: np.ndarray
    objective: float
    n_iter: int
    n_evals: int


def member_start(
    probe: LinearProbe, mean: np.ndarray, std: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(W, b) of a fitted single-layer probe mapped onto the mix's coordinates of the same
    layer, ``(x - mean) / std`` (mean, std: (D,)): the same logits for every x.

    The probe computes ``((x - m_p) / σ_p) W_pᵀ + b_p``; with ``W = W_p σ / σ_p`` and
    ``b = b_p + (W_p / σ_p)(mean - m_p)`` the mix's ``((x - mean) / std) Wᵀ + b`` is equal."""
    W_p = np.asarray(probe.coef_, np.float64)
    b_p = np.asarray(probe.intercept_, np.float64)
    m_p = _numpy(probe.mean_).astype(np.float64)
    s_p = _numpy(probe.scale_).astype(np.float64)
    W_raw = W_p / s_p
    W = W_raw * np.asarray(std, np.float64)
    b = b_p + W_raw @ (np.asarray(mean, np.float64) - m_p)
    return W.astype(np.float32), b.astype(np.float32)


def start_scalars(n_layers: int, best: int | None) -> np.ndarray:
    """Mix scalars s with ``_START_WEIGHT`` of the softmax on layer ``best`` and the rest
    spread evenly (uniform for ``best`` None or one layer)."""
    s = np.zeros(n_layers, np.float32)
    if best is not None and n_layers > 1:
        s[best] = math.log(_START_WEIGHT * (n_layers - 1) / (1.0 - _START_WEIGHT))
    return s


def solve_mix(
    X: np.ndarray,
    y_idx: np.ndarray,
    mean: np.ndarray,
    std: np.ndarray,
    C: float,
    start: tuple[np.ndarray, np.ndarray, np.ndarray],
    *,
    tol: float = 1e-4,
    max_iter: int = 200,
    chunk_rows: int = 16_384,
) -> MixSolution:
    """Minimise the penalised mix objective (module doc) from ``start`` = (s, W, b).

    X: (L, n, D) raw vectors (an array or a lazy ``LayerStack``); y_idx: (n,) class indices
    0..k-1; mean, std: (L, 1, D) the layers' training statistics; C: the members' C."""
    import torch

    from probing.probes.linear import _class_whitening, _whitening

    if not C > 0:
        raise ValueError(f"C must be > 0, not {C}")
    n = len(y_idx)
    l2 = 1.0 / (C * n)
    mean_t = torch.from_numpy(np.asarray(mean, np.float32)[:, 0, :])  # (L, D)
    std_t = torch.from_numpy(np.asarray(std, np.float32)[:, 0, :])
    yt = torch.from_numpy(np.asarray(y_idx, np.int64))
    s0, W0, b0 = (torch.from_numpy(np.asarray(a, np.float32)) for a in start)

    # Whitening from the start mix on evenly spaced rows (only the path depends on it).
    sample = np.arange(0, n, max(1, n // _WHITEN_ROWS))[:_WHITEN_ROWS]
    with torch.no_grad():
        Z = torch.cat(
            [
                _mixed(_read(X, sample[a : a + chunk_rows]), torch.softmax(s0, 0), mean_t, std_t)
                for a in range(0, len(sample), chunk_rows)
            ]
        )
    zero, one = torch.zeros(Z.shape[1]), torch.ones(Z.shape[1])
    P, S = _whitening(Z, zero, one)
    M, Minv = _class_whitening(Z, W0, b0, zero, one)
    del Z

    V = (Minv @ W0 @ S).requires_grad_(True)
    c = (Minv @ b0).requires_grad_(True)
    s = s0.clone().requires_grad_(True)
    opt = torch.optim.LBFGS(
        [V, c, s],
        lr=1.0,
        max_iter=max_iter,
        tolerance_grad=0.0,  # the stop is the test on the true gradients (closure)
        tolerance_change=1e-12,
        history_size=10,
        line_search_fn="strong_wolfe",
    )
    evals = [0]
    seen: list[tuple[list[torch.Tensor], float]] = []  # each evaluation's point and value

    def closure() -> torch.Tensor:
        opt.zero_grad()
        W, b, w = M @ V @ P, M @ c, torch.softmax(s, 0)
        # The data term's gradient is accumulated chunk by chunk on detached copies, then
        # carried back to (V, c, s) in one step: each chunk's graph is freed after it.
        Wd, bd, wd = (t.detach().requires_grad_(True) for t in (W, b, w))
        total = 0.0
        for a in range(0, n, chunk_rows):
            xb = _read(X, slice(a, a + chunk_rows))
            logits = torch.addmm(bd, _mixed(xb, wd, mean_t, std_t), Wd.T)
            part = (
                torch.nn.functional.cross_entropy(logits, yt[a : a + chunk_rows], reduction="sum")
                / n
            )
            part.backward()
            total += float(part.detach())
        penalty = 0.5 * l2 * (W * W).sum()
        surrogate = (W * Wd.grad).sum() + (b * bd.grad).sum() + (w * wd.grad).sum() + penalty
        surrogate.backward()
        evals[0] += 1
        g_w = (Wd.grad + l2 * W.detach()).abs().max()
        g_b, g_s = bd.grad.abs().max(), s.grad.abs().max()
        if max(float(g_w), float(g_b), float(g_s)) <= tol:
            for p in (V, c, s):  # zero gradients end torch's run here (tolerance_grad 0)
                p.grad.zero_()
        value = total + float(penalty.detach())
        seen[:] = [([p.detach().clone() for p in (V, c, s)], value)]
        return torch.tensor(value)

    opt.step(closure)
    with torch.no_grad():
        W, b = M @ V @ P, M @ c
        point, value = seen[-1]
        if not all(torch.equal(p, q) for p, q in zip(point, (V, c, s), strict=True)):
            # The line search ended away from its last evaluation: one more pass.
            value = _objective(X, yt, s, W, b, mean_t, std_t, l2, chunk_rows)
    return MixSolution(
        scalars=s.detach().numpy().copy(),
        coef=W.numpy().copy(),
        intercept=b.numpy().copy(),
        objective=value,
        n_iter=int(opt.state[V].get("n_iter", 0)),
        n_evals=evals[0],
    )


def mix_objective(
    X: np.ndarray,
    y_idx: np.ndarray,
    scalars: np.ndarray,
    coef: np.ndarray,
    intercept: np.ndarray,
    mean: np.ndarray,
    std: np.ndarray,
    C: float,
    chunk_rows: int = 16_384,
) -> float:
    """The penalised objective (module doc) of a mix (s, W, b) on X (L, n, D), y_idx (n,)."""
    import torch

    t = (torch.from_numpy(np.asarray(a, np.float32)) for a in (scalars, coef, intercept))
    s, W, b = t
    mean_t = torch.from_numpy(np.asarray(mean, np.float32)[:, 0, :])
    std_t = torch.from_numpy(np.asarray(std, np.float32)[:, 0, :])
    yt = torch.from_numpy(np.asarray(y_idx, np.int64))
    return _objective(X, yt, s, W, b, mean_t, std_t, 1.0 / (C * len(yt)), chunk_rows)


def _objective(
    X: np.ndarray,
    yt: torch.Tensor,
    s: torch.Tensor,
    W: torch.Tensor,
    b: torch.Tensor,
    mean_t: torch.Tensor,
    std_t: torch.Tensor,
    l2: float,
    chunk_rows: int,
) -> float:
    import torch

    n = len(yt)
    total = 0.0
    with torch.no_grad():
        w = torch.softmax(s.detach(), 0)
        for a in range(0, n, chunk_rows):
            logits = torch.addmm(
                b, _mixed(_read(X, slice(a, a + chunk_rows)), w, mean_t, std_t), W.T
            )
            total += float(
                torch.nn.functional.cross_entropy(logits, yt[a : a + chunk_rows], reduction="sum")
            )
        return total / n + 0.5 * l2 * float((W * W).sum())


def _read(X: np.ndarray, rows: slice | np.ndarray) -> torch.Tensor:
    """float32 (L, B, D) of X's rows (one copy of the chunk)."""
    import torch

    return torch.from_numpy(np.asarray(X[:, rows], np.float32))


def _mixed(
    xb: torch.Tensor, w: torch.Tensor, mean: torch.Tensor, std: torch.Tensor
) -> torch.Tensor:
    """Σ_j w_j (x_j - m_j) / σ_j of a chunk (L, B, D) -> (B, D), standardisation folded into
    per-layer scale vectors (no standardised copy of the chunk). A loop of fused
    multiply-adds: ``einsum("lbd,ld->bd")`` took 2.2 times as long forward and backward."""
    import torch

    a = w[:, None] / std  # (L, D)
    z = xb[0] * a[0]
    for j in range(1, xb.shape[0]):
        z = torch.addcmul(z, xb[j], a[j])
    return z - (a * mean).sum(0)


def _numpy(t: object) -> np.ndarray:
    return t.detach().cpu().numpy() if hasattr(t, "detach") else np.asarray(t)
