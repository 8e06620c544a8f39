"""Structural probes (Hewitt & Manning 2019): is the parse tree a linear map of the vectors away?

A *distance probe* learns ``B`` (rank × dim) so that the squared distance
``‖B(h_i − h_j)‖²`` between two words' vectors matches their distance in the dependency tree
(edges on the path); a *depth probe* learns ``B`` so that ``‖B h_i‖²`` matches the word's
depth (edges to the root). Both are trained with Hewitt & Manning's L1 loss, per sentence
normalised by the squared length (distance) or the length (depth), averaged over the batch,
with Adam (lr 1e-3), the learning rate divided by 10 whenever the dev loss does not improve,
and training stopped when it has not improved for ``patience`` epochs (the best epoch kept).

Evaluation follows their reporting code (``john-hewitt/structural-probes``, ``reporter.py``):

- **UUAS**: the minimum spanning tree of the predicted distances over the sentence's
  non-punctuation words against the gold tree's edges between non-punctuation words,
  pooled over the corpus (correct edges / gold edges). Punctuation is UD ``PUNCT`` here
  (their code uses the PTB punctuation tags).
- **Spearman** (distance): per word, the Spearman correlation between its predicted and
  gold distances to every word of its sentence (all words, punctuation included, as their
  code does); averaged per sentence length, then over the lengths 5–50.
- **Spearman** (depth): per sentence, predicted vs gold depths of all words; averaged per
  length, then over lengths 5–50.
- **Root accuracy**: the non-punctuation word of least predicted depth is the gold root.

Intervals resample *sentences* (the same draws for every layer, so the centre of gravity
gets an interval too).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from scipy.sparse.csgraph import minimum_spanning_tree, shortest_path
from scipy.stats import rankdata, spearmanr

from probing.probes.metrics import Estimate, centre_of_gravity

if TYPE_CHECKING:  # torch is imported where a fit runs, not with the module
    import torch

    from probing.features import Features

PUNCT = "PUNCT"
SPEARMAN_LENGTHS = (5, 50)
ProgressFn = Callable[[int, int], None]


# -- trees ------------------------------------------------------------------------------


def _heads_array(heads: Sequence[int | str]) -> np.ndarray:
    h = np.asarray([int(x) for x in heads], dtype=np.int64)
    if len(h) and (h.min() < 0 or h.max() > len(h)):
        raise ValueError(f"heads must be 0 (root) or 1..{len(h)}; got {h.tolist()}")
    return h


def tree_distances(heads: Sequence[int | str]) -> np.ndarray:
    """(n, n) path lengths in the tree given by 1-based ``heads`` (0 = the root's head)."""
    h = _heads_array(heads)
    n = len(h)
    adj = np.zeros((n, n))
    for dep, head in enumerate(h):
        if head > 0:
            adj[dep, head - 1] = adj[head - 1, dep] = 1
    return shortest_path(adj, unweighted=True, directed=False)


def tree_depths(heads: Sequence[int | str]) -> np.ndarray:
    """(n,) edges from each word to the root (the root word has depth 0)."""
    h = _heads_array(heads)
    depth = np.full(len(h), -1.0)
    for i in range(len(h)):
        path, j = [], i
        while j >= 0 and depth[j] < 0 and len(path) <= len(h):
            path.append(j)
            j = h[j] - 1
        base = -1.0 if j < 0 else depth[j]
        for k, node in enumerate(reversed(path), start=1):
            depth[node] = base + k
    return depth


def gold_edges(heads: Sequence[int | str], keep: np.ndarray | None = None) -> set[tuple[int, int]]:
    """The tree's undirected edges ``(i, j)``, ``i < j`` (0-based), between kept words."""
    h = _heads_array(heads)
    keep = np.ones(len(h), bool) if keep is None else np.asarray(keep, bool)
    return {
        (min(d, int(p) - 1), max(d, int(p) - 1))
        for d, p in enumerate(h)
        if p > 0 and keep[d] and keep[p - 1]
    }


def mst_edges(distances: np.ndarray, keep: np.ndarray | None = None) -> set[tuple[int, int]]:
    """Undirected edges ``(i, j)``, ``i < j``, of the minimum spanning tree over kept words.

    Args:
        distances: (n, n) symmetric predicted distances.
        keep: (n,) bool, the words to span (default all).
    """
    d = np.asarray(distances, dtype=np.float64)
    idx = np.arange(len(d)) if keep is None else np.flatnonzero(keep)
    if len(idx) < 2:
        return set()
    sub = d[np.ix_(idx, idx)]
    # scipy reads 0 (and values within its tolerance of 0) as "no edge": add one constant,
    # of the distances' own scale, to every pair; every spanning tree has n - 1 edges, so
    # the minimum one does not change.
    sub = np.maximum(sub, 0.0)
    sub = sub + (sub.max() if sub.max() > 0 else 1.0)
    tree = minimum_spanning_tree(np.triu(sub, 1)).tocoo()
    return {
        (int(min(idx[a], idx[b])), int(max(idx[a], idx[b])))
        for a, b in zip(tree.row, tree.col, strict=True)
    }


# -- the probe --------------------------------------------------------------------------


class StructuralProbe:
    """Hewitt & Manning's distance or depth probe: a rank-``rank`` linear map ``B``.

    Args:
        kind: ``distance`` or ``depth``.
        rank: rows of ``B`` (ours: 128, capped at the vector size; the reference's NAACL'19
            configs use the full dimension, ``maximum_rank`` 768 for BERT-base and 1024 for
            ELMo, and its README example 32).
        lr: Adam's learning rate.
        max_epochs: epochs at most.
        patience: epochs without a dev-loss improvement before stopping.
        batch_size: sentences per step (theirs: 20).
        random_state: seed of the initialisation and of the batch order.

    Attributes (after ``fit``):
        B_: float32 (rank, dim). epochs_: epochs run. dev_loss_: best dev loss.

    Examples:
        >>> X = [np.eye(4, dtype=np.float32)]
        >>> probe = StructuralProbe("depth", rank=4, max_epochs=2).fit(X, [[0, 1, 2, 1]])
        >>> probe.predict(X[0]).shape
        (4,)
    """

    def __init__(
        self,
        kind: str = "distance",
        rank: int = 128,
        lr: float = 1e-3,
        max_epochs: int = 40,
        patience: int = 4,
        batch_size: int = 20,
        random_state: int = 0,
    ) -> None:
        if kind not in ("distance", "depth"):
            raise ValueError(f"kind must be 'distance' or 'depth', not {kind!r}")
        self.kind, self.rank, self.lr = kind, rank, lr
        self.max_epochs, self.patience = max_epochs, patience
        self.batch_size, self.random_state = batch_size, random_state

    # targets: per sentence, (n, n) tree distances (distance) or (n,) depths (depth)
    def fit(
        self,
        X: Sequence[np.ndarray],
        targets: Sequence,
        X_dev: Sequence[np.ndarray] | None = None,
        targets_dev: Sequence | None = None,
    ) -> StructuralProbe:
        """Train on sentences: ``X[s]`` (n_s, dim) vectors, ``targets[s]`` as per ``kind``.

        Without dev sentences the probe trains ``max_epochs`` epochs on the training loss.
        """
        import torch

        torch.manual_seed(self.random_state)
        dim = X[0].shape[1]
        rank = min(self.rank, dim)
        B = torch.nn.Parameter(torch.empty(rank, dim).uniform_(-0.05, 0.05))
        opt = torch.optim.Adam([B], lr=self.lr)
        train = _batches(X, targets, self.kind, self.batch_size)
        dev = None if X_dev is None else _batches(X_dev, targets_dev, self.kind, 200)
        rng = np.random.default_rng(self.random_state)
        best, best_B, since = math.inf, B.detach().clone(), 0
        self.epochs_ = 0
        for _ in range(self.max_epochs):
            self.epochs_ += 1
            for i in rng.permutation(len(train)):
                opt.zero_grad()
                self._loss(B, *train[i]).backward()
                opt.step()
            with torch.no_grad():
                data = dev if dev is not None else train
                n = sum(len(b[2]) for b in data)
                loss = sum(float(self._loss(B, *b)) * len(b[2]) for b in data) / n
            if loss < best - 1e-4:
                best, best_B, since = loss, B.detach().clone(), 0
            else:
                since += 1
                for group in opt.param_groups:  # their ReduceLROnPlateau(factor=0.1, patience=0)
                    group["lr"] *= 0.1
                if since >= self.patience:
                    break
        self.B_ = best_B.numpy().astype(np.float32)
        self.dev_loss_ = best
        return self

    def _loss(
        self,
        B: torch.Tensor,
        x: torch.Tensor,
        y: torch.Tensor,
        lengths: torch.Tensor,
        mask: torch.Tensor,
    ) -> torch.Tensor:
        z = x @ B.T  # (b, T, rank)
        lengths = lengths.to(z.dtype)
        if self.kind == "distance":
            sq = (z * z).sum(-1)
            pred = (sq[:, :, None] + sq[:, None, :] - 2 * z @ z.transpose(1, 2)).clamp_min(0)
            m = mask[:, :, None] & mask[:, None, :]
            per = ((pred - y).abs() * m).sum((1, 2)) / lengths**2
        else:
            pred = (z * z).sum(-1)
            per = ((pred - y).abs() * mask).sum(1) / lengths
        return per.mean()

    def transform(self, X: np.ndarray) -> np.ndarray:
        """(n, rank): the vectors in the probe's space."""
        return np.asarray(X, np.float32) @ self.B_.T

    def predict(self, X: np.ndarray) -> np.ndarray:
        """(n, n) squared distances (distance probe) or (n,) squared norms (depth probe)."""
        z = self.transform(X).astype(np.float64)
        sq = (z * z).sum(1)
        if self.kind == "depth":
            return sq
        return np.maximum(sq[:, None] + sq[None, :] - 2 * z @ z.T, 0.0)


def _batches(
    X: Sequence[np.ndarray], targets: Sequence[np.ndarray], kind: str, size: int
) -> list[tuple[torch.Tensor, ...]]:
    """Length-sorted padded batches (x, y, lengths, mask) as torch tensors."""
    import torch

    order = np.argsort([len(x) for x in X], kind="stable")
    out = []
    for start in range(0, len(order), size):
        ids = order[start : start + size]
        T, dim = max(len(X[i]) for i in ids), X[ids[0]].shape[1]
        x = np.zeros((len(ids), T, dim), np.float32)
        y = np.zeros((len(ids), T, T) if kind == "distance" else (len(ids), T), np.float32)
        mask = np.zeros((len(ids), T), bool)
        for b, i in enumerate(ids):
            n = len(X[i])
            x[b, :n], mask[b, :n] = X[i], True
            t = np.asarray(targets[i], np.float32)
            if kind == "distance":
                y[b, :n, :n] = t
            else:
                y[b, :n] = t
        lengths = torch.from_numpy(mask.sum(1))
        out.append((torch.from_numpy(x), torch.from_numpy(y), lengths, torch.from_numpy(mask)))
    return out


# -- evaluation -------------------------------------------------------------------------


@dataclass
class SentenceScores:
    """Per-sentence sufficient statistics, so that corpus metrics can be bootstrapped.

    Attributes (each (n_sentences,)):
        correct, total: UUAS edges right / gold edges (distance) or root right / 1 (depth).
        rho_sum, rho_count: sum and number of Spearman values (per word for distance, one
            per sentence for depth; NaN values left out).
        length: sentence length in words (punctuation included).
    """

    correct: np.ndarray
    total: np.ndarray
    rho_sum: np.ndarray
    rho_count: np.ndarray
    length: np.ndarray

    def headline(self, w: np.ndarray | None = None) -> float:
        """UUAS or root accuracy, pooled over sentences with weights ``w`` (default 1)."""
        w = np.ones(len(self.total)) if w is None else w
        total = float(np.sum(w * self.total))
        return float(np.sum(w * self.correct)) / total if total else math.nan

    def spearman(self, w: np.ndarray | None = None) -> float:
        """Mean over lengths 5-50 of the mean Spearman per length."""
        w = np.ones(len(self.total)) if w is None else w
        lo, hi = SPEARMAN_LENGTHS
        size = max(hi + 1, int(self.length.max(initial=0)) + 1)
        s = np.bincount(self.length, weights=w * self.rho_sum, minlength=size)[lo : hi + 1]
        c = np.bincount(self.length, weights=w * self.rho_count, minlength=size)[lo : hi + 1]
        return float(np.mean(s[c > 0] / c[c > 0])) if (c > 0).any() else math.nan


def score_sentences(
    kind: str,
    predictions: Sequence[np.ndarray],
    heads: Sequence[Sequence[int]],
    punct: Sequence[np.ndarray],
) -> SentenceScores:
    """Score predicted distances (n, n) or depths (n,) per sentence against gold trees.

    Args:
        kind: ``distance`` or ``depth``.
        predictions: per sentence, the probe's output (or a baseline's).
        heads: per sentence, 1-based heads (0 = root).
        punct: per sentence, (n,) bool, True for punctuation (left out of UUAS/root).
    """
    n = len(predictions)
    out = SentenceScores(*(np.zeros(n) for _ in range(4)), length=np.zeros(n, np.int64))
    for s, (pred, h, p) in enumerate(zip(predictions, heads, punct, strict=True)):
        keep = ~np.asarray(p, bool)
        out.length[s] = len(h)
        if kind == "distance":
            gold = gold_edges(h, keep)
            out.total[s] = len(gold)
            out.correct[s] = len(gold & mst_edges(pred, keep))
            if len(h) > 1:
                rhos = _row_spearman(pred, tree_distances(h))
                out.rho_sum[s], out.rho_count[s] = np.nansum(rhos), np.sum(~np.isnan(rhos))
        else:
            depth = tree_depths(h)
            if keep.any():
                root = int(np.flatnonzero(np.asarray(h, dtype=int) == 0)[0])
                guess = np.flatnonzero(keep)[np.argmin(np.asarray(pred)[keep])]
                out.total[s], out.correct[s] = 1, float(guess == root)
            if len(h) > 1:
                rho = _spearman(pred, depth)
                out.rho_sum[s], out.rho_count[s] = (0.0, 0) if math.isnan(rho) else (rho, 1)
    return out


def _spearman(a: np.ndarray, b: np.ndarray) -> float:
    if np.ptp(a) == 0 or np.ptp(b) == 0:
        return math.nan
    return float(spearmanr(a, b).statistic)


def _row_spearman(pred: np.ndarray, gold: np.ndarray) -> np.ndarray:
    """:func:`_spearman` of each row pair, bit for bit (spearmanr's own steps: ranks with
    ties averaged, then ``np.corrcoef(...)[1, 0]``; NaN for a constant row) without its
    per-call overhead: the ranks of all rows at once. Scoring calls this once per sentence."""
    pred, gold = np.asarray(pred, dtype=float), np.asarray(gold, dtype=float)
    out = np.full(len(pred), np.nan)
    if pred.shape[1] < 2:
        return out
    a, b = rankdata(pred, axis=1), rankdata(gold, axis=1)
    live = (np.ptp(pred, axis=1) != 0) & (np.ptp(gold, axis=1) != 0)
    for i in np.flatnonzero(live):
        out[i] = np.corrcoef(np.column_stack((a[i], b[i])), rowvar=False)[1, 0]
    return out


def right_branching(kind: str, n: int) -> np.ndarray:
    """The right-branching chain as a prediction: distances |i − j| or depths i."""
    i = np.arange(n, dtype=float)
    return np.abs(i[:, None] - i[None, :]) if kind == "distance" else i


def bootstrap_scores(
    scores: Sequence[SentenceScores],
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
    both: bool = False,
) -> tuple[list[dict[str, Estimate]], np.ndarray]:
    """Sentence-bootstrap intervals of the headline metric and Spearman of several runs.

    The same resampled sentences serve every run in ``scores`` (e.g. every layer), so the
    draws can be combined (the centre of gravity's interval).

    Returns:
        Per run ``{"headline": Estimate, "spearman": Estimate}``, and the draws of the
        headline metric, (n_boot, n_runs) (with ``both``: (n_boot, n_runs, 2), Spearman's
        draws in ``[..., 1]``).
    """
    rng = np.random.default_rng(seed)
    n = len(scores[0].total)
    draws = np.empty((n_boot, len(scores), 2))
    for b in range(n_boot):
        w = np.bincount(rng.integers(0, n, n), minlength=n).astype(float)
        for r, sc in enumerate(scores):
            draws[b, r] = sc.headline(w), sc.spearman(w)
    alpha = (1 - level) / 2
    out = []
    for r, sc in enumerate(scores):
        est = {}
        for k, (name, point) in enumerate(
            (("headline", sc.headline()), ("spearman", sc.spearman()))
        ):
            lo, hi = np.nanquantile(draws[:, r, k], [alpha, 1 - alpha])
            count = int(sc.total.sum()) if name == "headline" else _n_spearman(sc)
            est[name] = Estimate(float(point), float(lo), float(hi), count)
        out.append(est)
    return out, draws if both else draws[:, :, 0]


def _n_spearman(sc: SentenceScores) -> int:
    lo, hi = SPEARMAN_LENGTHS
    return int(np.sum((sc.length >= lo) & (sc.length <= hi) & (sc.rho_count > 0)))


def centre_of_gravity_interval(
    draws: np.ndarray, layers: Sequence[int], level: float = 0.95
) -> tuple[float, float]:
    """Percentile interval of the centre of gravity over bootstrap draws (n_boot, n_layers)."""
    cogs = np.array([centre_of_gravity(d, layers) for d in draws])
    alpha = (1 - level) / 2
    if np.isnan(cogs).all():
        return math.nan, math.nan
    lo, hi = np.nanquantile(cogs, [alpha, 1 - alpha])
    return float(lo), float(hi)


# -- sentences from features ----------------------------------------------------------------


@dataclass
class TreeSentences:
    """A split's sentences as row groups of a :class:`~probing.features.Features`.

    Attributes:
        rows: per sentence, the feature rows of its words (in word order).
        heads: per sentence, (n,) int 1-based heads (0 = root).
        punct: per sentence, (n,) bool, UD PUNCT.
    """

    rows: list[np.ndarray]
    heads: list[np.ndarray]
    punct: list[np.ndarray]

    @classmethod
    def from_features(cls, feats: Features) -> TreeSentences:
        """Group the rows of features that carry ``head`` and ``upos`` by sentence."""
        if "head" not in feats.fields or "upos" not in feats.fields:
            raise KeyError("structural probes need the 'head' and 'upos' fields (UD CoNLL-U)")
        sidx = np.asarray(feats.sentence_index)
        order = np.argsort(sidx, kind="stable")
        bounds = np.flatnonzero(np.diff(sidx[order])) + 1
        rows = [r for r in np.split(order, bounds) if len(r)]
        head = feats.fields["head"]
        upos = feats.fields["upos"]
        heads = [np.array([int(h) for h in head[r]]) for r in rows]
        for r, h in zip(rows, heads, strict=True):
            if h.max(initial=0) > len(r) or (h == 0).sum() != 1:
                raise ValueError(
                    "a sentence's words are not all in the features (heads point outside it)"
                )
        punct = [upos[r] == PUNCT for r in rows]
        return cls(rows, heads, punct)

    def vectors(self, matrix: np.ndarray) -> list[np.ndarray]:
        """Per sentence, (n, dim) rows of a (n_words, dim) matrix."""
        return [matrix[r] for r in self.rows]

    def targets(self, kind: str) -> list[np.ndarray]:
        fn = tree_distances if kind == "distance" else tree_depths
        return [fn(h) for h in self.heads]


def timed() -> Callable[[], float]:
    t0 = time.perf_counter()
    return lambda: round(time.perf_counter() - t0, 2)
