"""Concept erasers: LEACE (Belrose et al. 2023), INLP (Ravfogel et al. 2020) and the random
subspace of equal rank that is Elazar et al.'s (2021) control.

Every eraser is one affine map of the same form, ``x -> x - ((x - bias) @ right.T) @ left.T``
(``left`` (dim, r), ``right`` (r, dim)), so that the probes, the model hook and the page
apply all three the same way. LEACE comes from the ``concept-erasure`` package as published;
INLP follows ``nullspace_projection/src/debias.py`` (``get_debiasing_projection``) with the
project's own linear probe in place of its SGD/SVM classifier.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from probing.errors import InvalidArgumentError, RankTooLargeError

if TYPE_CHECKING:  # torch is imported where a model hook applies the map
    import torch


@dataclass(frozen=True)
class Eraser:
    """An affine eraser ``x -> x - ((x - bias) @ right.T) @ left.T``.

    Attributes:
        left: (dim, r). right: (r, dim). bias: (dim,) (the training mean; zeros for none).
        method: ``leace``, ``inlp`` or ``random``. rank: the rank of ``left @ right``.
    """

    left: np.ndarray
    right: np.ndarray
    bias: np.ndarray
    method: str
    rank: int
    # Ranks of the diagonal blocks when fitted per block (ELMo: forward half, backward half);
    # empty for one eraser over all dims.
    blocks: tuple[int, ...] = ()

    @property
    def dim(self) -> int:
        return int(self.left.shape[0])

    def __call__(self, X: np.ndarray) -> np.ndarray:
        """(n, dim) float32 vectors erased."""
        X = np.asarray(X, dtype=np.float32)
        return (X - ((X - self.bias) @ self.right.T) @ self.left.T).astype(np.float32)

    def torch_apply(self, h: torch.Tensor) -> torch.Tensor:  # (..., dim) in and out
        """The same map on a torch tensor (model hooks), in the tensor's dtype."""
        import torch

        left = torch.as_tensor(self.left, dtype=h.dtype, device=h.device)
        right = torch.as_tensor(self.right, dtype=h.dtype, device=h.device)
        bias = torch.as_tensor(self.bias, dtype=h.dtype, device=h.device)
        return h - ((h - bias) @ right.T) @ left.T


def _one_hot(y: Sequence) -> tuple[np.ndarray, np.ndarray]:
    classes, idx = np.unique(np.asarray(y), return_inverse=True)
    z = np.zeros((len(idx), len(classes)), np.float64)
    z[np.arange(len(idx)), idx] = 1.0
    return z, classes


def _rank(left: np.ndarray, right: np.ndarray) -> int:
    s = np.linalg.svd(left @ right, compute_uv=False)
    return int((s > 1e-6 * max(float(s[0]), 1e-12)).sum()) if s.size else 0


def fit_leace(X: np.ndarray, y: Sequence) -> Eraser:
    """LEACE on (n, dim) vectors and (n,) labels (one-hot concept), the package's defaults:
    affine, covariance-trace constraint, shrinkage, ``svd_tol`` 0.01. Fitted in float64."""
    import torch
    from concept_erasure import LeaceFitter

    z, classes = _one_hot(y)
    if len(classes) < 2:
        raise InvalidArgumentError("Erasure needs at least two labels in the training words.")
    x = torch.from_numpy(np.asarray(X, np.float64))
    eraser = LeaceFitter.fit(x, torch.from_numpy(z)).eraser
    left = eraser.proj_left.numpy()
    right = eraser.proj_right.numpy()
    bias = eraser.bias.numpy() if eraser.bias is not None else np.zeros(x.shape[1])
    keep = np.linalg.norm(left, axis=0) * np.linalg.norm(right, axis=1) > 1e-12
    left, right = left[:, keep], right[keep]
    return Eraser(
        left.astype(np.float32),
        right.astype(np.float32),
        bias.astype(np.float32),
        "leace",
        _rank(left, right),
    )


def random_eraser(dim: int, rank: int, seed: int, bias: np.ndarray | None = None) -> Eraser:
    """Orthogonal projection off a uniformly random ``rank``-dimensional subspace (centred on
    ``bias``, the training mean, as LEACE is), Elazar et al.'s control.

    Raises:
        RankTooLargeError: ``rank`` above ``dim``.
    """
    if rank > dim:
        raise RankTooLargeError(f"Erasure rank {rank} is larger than the vectors' dimension {dim}.")
    if rank < 0:
        raise InvalidArgumentError(f"Erasure rank must be ≥ 0, not {rank}.")
    rng = np.random.default_rng(seed)
    q, _ = np.linalg.qr(rng.standard_normal((dim, max(rank, 1))))
    q = q[:, :rank].astype(np.float32)
    b = np.zeros(dim, np.float32) if bias is None else np.asarray(bias, np.float32)
    return Eraser(q, q.T.copy(), b, "random", rank)


def block_eraser(parts: Sequence[Eraser]) -> Eraser:
    """One eraser acting as ``parts[i]`` on the i-th block of dims (block-diagonal).

    For ELMo's ``[forward; backward]`` layers: an eraser fitted on the whole vector mixes the
    halves, so the forward LM would read (a projection of) the backward state, which has seen
    the word it predicts. Erasing each half with its own LEACE keeps the directions apart and
    still leaves no linear information in the whole vector: both halves' cross-covariances
    with the concept are zero, so the concatenation's is too.
    """
    dims = [p.dim for p in parts]
    ranks = [p.left.shape[1] for p in parts]
    left = np.zeros((sum(dims), sum(ranks)), np.float32)
    right = np.zeros((sum(ranks), sum(dims)), np.float32)
    d0 = r0 = 0
    for p, d, r in zip(parts, dims, ranks, strict=True):
        left[d0 : d0 + d, r0 : r0 + r] = p.left
        right[r0 : r0 + r, d0 : d0 + d] = p.right
        d0, r0 = d0 + d, r0 + r
    bias = np.concatenate([p.bias for p in parts]).astype(np.float32)
    return Eraser(
        left, right, bias, parts[0].method, sum(p.rank for p in parts), tuple(p.rank for p in parts)
    )


def fit_leace_blocks(X: np.ndarray, y: Sequence, n_blocks: int = 1) -> Eraser:
    """LEACE on the whole vector (``n_blocks`` 1), or per equal block of dims (ELMo: 2, see
    :func:`block_eraser`)."""
    if n_blocks == 1:
        return fit_leace(X, y)
    X = np.asarray(X)
    width = X.shape[1] // n_blocks
    return block_eraser([fit_leace(X[:, i * width : (i + 1) * width], y) for i in range(n_blocks)])


def random_like(eraser: Eraser, seed: int) -> Eraser:
    """Elazar et al.'s control for ``eraser``: a random subspace of the same rank, per block
    with each block's rank when ``eraser`` was fitted per block."""
    if not eraser.blocks:
        return random_eraser(eraser.dim, eraser.rank, seed, eraser.bias)
    width = eraser.dim // len(eraser.blocks)
    parts = [
        random_eraser(width, r, seed * 1000 + i, eraser.bias[i * width : (i + 1) * width])
        for i, r in enumerate(eraser.blocks)
    ]
    return block_eraser(parts)


def orthogonal_eraser(basis: np.ndarray, method: str, bias: np.ndarray | None = None) -> Eraser:
    """Projection off the span of ``basis`` (dim, k) (orthonormalised; rank = its rank)."""
    u, s, _ = np.linalg.svd(np.asarray(basis, np.float64), full_matrices=False)
    u = u[:, s > 1e-8 * max(float(s[0]), 1e-12)] if s.size else u[:, :0]
    dim = basis.shape[0]
    b = np.zeros(dim, np.float32) if bias is None else np.asarray(bias, np.float32)
    q = u.astype(np.float32)
    return Eraser(q, q.T.copy(), b, method, int(q.shape[1]))


def fit_inlp(
    X: np.ndarray,
    y: Sequence,
    X_dev: np.ndarray,
    y_dev: Sequence,
    *,
    max_iter: int = 30,
    margin: float = 0.01,
    C: float = 0.1,
    seed: int = 0,
    max_train_words: int | None = 20_000,
) -> tuple[Eraser, list[float]]:
    """Iterative nullspace projection with the project's linear probe.

    As in ``get_debiasing_projection``: each iteration fits a probe on the vectors projected
    so far, adds its weight rows' span to the removed subspace (the projection is onto the
    intersection of all nullspaces), and stops when the probe's dev accuracy falls to the
    majority baseline + ``margin`` (their ``min_accuracy``) or after ``max_iter`` iterations.
    Where this differs: the classifier is the L2 multinomial logistic probe (its weights
    mapped back through the probe's standardisation), and the projection is centred on the
    training mean, like LEACE's.

    Returns:
        The eraser and the probe's dev accuracy at each iteration.
    """
    from probing.probes.linear import LinearProbe

    X = np.asarray(X, np.float32)
    X_dev = np.asarray(X_dev, np.float32)
    y, y_dev = np.asarray(y), np.asarray(y_dev)
    values, counts = np.unique(y, return_counts=True)
    majority = float(np.mean(y_dev == values[np.argmax(counts)]))
    mean = X.mean(0)
    directions = np.zeros((X.shape[1], 0), np.float64)
    eraser = orthogonal_eraser(directions, "inlp", mean)
    accs: list[float] = []
    for it in range(max_iter):
        probe = LinearProbe(
            C=C,
            max_iter=100,
            random_state=seed + it,
            max_train_words=max_train_words,
            device="cpu",
        )
        probe.fit(eraser(X), y)
        acc = float(np.mean(probe.predict(eraser(X_dev)) == y_dev))
        accs.append(acc)
        if acc <= majority + margin:
            break
        w_raw = (probe.coef_ / probe.scale_.cpu().numpy()).T.astype(np.float64)  # (dim, k)
        directions = np.concatenate([directions, w_raw], axis=1)
        eraser = orthogonal_eraser(directions, "inlp", mean)
        if eraser.rank >= X.shape[1]:
            break
    return eraser, accs
