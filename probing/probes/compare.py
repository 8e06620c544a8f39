"""Paired comparisons of probe scores: a difference, its 95 % interval, a p-value, Holm.

A :class:`Replicates` is one score (a layer's accuracy, a control task's accuracy, a task's
centre of gravity …) as its point value per seed, ``points`` (S,), and its bootstrap
replicates per seed, ``draws`` (S, B): replicate b of every seed is scored on the same
resampled test sentences. Two scores with the same ``unit`` (the same test sentences and
the same sentence picks, e.g. two layers, task and control, two tasks of one data set)
are **paired**: replicate b of their difference is the difference of their replicates b,
so the sentences that are hard for both cancel. Scores of different units (two data sets)
are independent, and the difference of independent replicates is the two-sample bootstrap.

Seed variance: a two-level bootstrap
    Replicate b also resamples the S seeds with replacement and averages those seeds'
    sentence replicate b (Davison & Hinkley 1997, §3.8, the two-stage bootstrap for
    nested data: the outer level is the seed, the inner the test sentence). Two scores that
    share their seeds (seed s draws the same control labels at every layer) share the seed
    draw, so the pairing holds at both levels. With S = 3 the outer level under-states
    the seed variance by a factor (S - 1) / S, so a difference is also *called* only when
    its sign is the same at every seed: one that flips with the control seed is not
    called whatever its interval. Where every seed is the same fit (the task probe at
    full data is fitted once), the outer level changes nothing.

p-value and Holm
    The two-sided bootstrap p-value is twice the smaller fraction of replicates on either
    side of zero, ``(count + 1) / (B + 1)`` so that it is never 0, capped at 1. A statement
    that rests on m comparisons tests them together with Holm's step-down correction
    (Holm 1979), which controls the family-wise error at 5 % without assuming
    independence.

Resolution: where the bootstrap is the bottleneck, a normal-approximation p
    The bootstrap p cannot go below ``2 / (B + 1)``, so Holm over m rows cannot go below
    ``2 m / (B + 1)``: 0.044 for 22 rows at B = 1,000, 0.04995 for 25 (every call on the
    edge of 0.05) and over 0.05 from 26 rows on (nothing can be called). More replicates
    only move that floor (the 72 heads of a head ablation need B ≈ 30,000 to reach
    0.005). So where fewer than :data:`MIN_TAIL` replicates fall on the far side of zero —
    the bootstrap's tail is too thin to estimate p — the p is the normal approximation
    from the bootstrap's own standard error, ``erfc(|d| / (se √2))`` with ``se`` the
    standard deviation of the replicates of ``d`` (the normal test on a
    bootstrap standard error; Efron & Tibshirani 1993), floored at :data:`P_FLOOR`. Rows with a resolved tail keep the
    bootstrap p unchanged.

Seed level
    Where no score of a comparison varies over seeds (one fit, or every seed the same fit:
    the full-data runs, WSD's 1-NN) the outer level does nothing; the difference says so
    (``seed_level`` "seeds identical" instead of "two-level").

:class:`SentenceCounts` is the stored form (``results/sentence-scores/``): per seed and
per test sentence the counts a score is made of, so that any two cells of any two runs can
be compared later without the features or the probes.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from probing.errors import InvalidArgumentError
from probing.probes.metrics import centre_of_gravity_draws

ALPHA = 0.05
MIN_TAIL = 10  # replicates past zero below which the bootstrap p is not resolved
P_FLOOR = 1e-16  # the smallest p reported (double precision's resolution near 1)
METHOD = (
    "paired percentile bootstrap over test sentences (1,000 replicates, shared by every "
    "cell of a data set's test split), two-level: seeds resampled with replacement inside "
    'each replicate ("seeds identical" where no seed varies); two-sided bootstrap p, or '
    f"where fewer than {MIN_TAIL} replicates cross zero the normal-approximation p from the "
    "bootstrap standard error; Holm over the table's rows; a difference is called when its "
    "Holm-adjusted p < 0.05 and its sign is the same at every seed"
)
SEEDS_IDENTICAL = "seeds identical"
TWO_LEVEL = "two-level"

# How a score is made from its counts (..., K): K-column layouts.
#   accuracy: (wrong, right); ratio: (hits, total) as UUAS / root accuracy;
#   f1, precision, recall: (correct, wrong, abstained) as WSD with a possible no-answer.
KINDS = ("accuracy", "ratio", "f1", "precision", "recall")


def score_counts(kind: str, counts: np.ndarray) -> np.ndarray:
    """The score of each row of ``counts`` (..., K); NaN where it is undefined."""
    c = np.asarray(counts, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        if kind == "accuracy":
            return c[..., 1] / (c[..., 0] + c[..., 1])
        if kind == "ratio":
            return c[..., 0] / c[..., 1]
        if kind in ("f1", "precision", "recall"):
            correct, answered = c[..., 0], c[..., 0] + c[..., 1]
            p = np.where(answered > 0, correct / answered, 0.0)
            r = correct / c.sum(axis=-1)
            if kind == "precision":
                return p
            if kind == "recall":
                return r
            return np.where(p + r > 0, 2 * p * r / (p + r), 0.0)
    raise InvalidArgumentError(f"unknown score kind {kind!r}; one of {', '.join(KINDS)}")


@dataclass
class SentenceCounts:
    """Per seed and per test sentence, the counts one score is made of.

    Attributes:
        kind: one of :data:`KINDS` (says what the K columns are).
        counts: (S, G, K) non-negative counts, G test sentences in data-set order.
        seeds: (S,) the seed of each row.
    """

    kind: str
    counts: np.ndarray
    seeds: tuple[int, ...] = (0,)

    def __post_init__(self) -> None:
        self.counts = np.asarray(self.counts, dtype=np.float64)
        if self.counts.ndim == 2:
            self.counts = self.counts[None]
        if len(self.seeds) != self.counts.shape[0]:
            raise InvalidArgumentError(
                f"{len(self.seeds)} seeds for {self.counts.shape[0]} rows of counts"
            )
        score_counts(self.kind, self.counts[:1, :1].sum(axis=1))  # the kind is known

    @classmethod
    def from_predictions(
        cls,
        kind: str,
        y_true: np.ndarray,
        preds: Sequence[np.ndarray],
        sentence: np.ndarray,
        n_sentences: int,
        seeds: Sequence[int] | None = None,
        abstain: str = "",
    ) -> SentenceCounts:
        """Counts of labelled predictions (one (n,) array per seed); ``sentence`` (n,) is
        each item's test sentence (0 … n_sentences - 1). ``kind`` accuracy or f1 family."""
        y_true, sentence = np.asarray(y_true), np.asarray(sentence, dtype=np.int64)
        out = np.zeros((len(preds), n_sentences, 3 if kind != "accuracy" else 2))
        for s, pred in enumerate(preds):
            pred = np.asarray(pred)
            right = pred == y_true
            if kind == "accuracy":
                cell = right.astype(np.int64)
            else:
                cell = np.where(pred == abstain, 2, np.where(right, 0, 1))
            np.add.at(out[s], (sentence, cell), 1.0)
        return cls(kind, out, tuple(seeds) if seeds is not None else tuple(range(len(preds))))

    @property
    def points(self) -> np.ndarray:
        """(S,) each seed's score on the full test set."""
        return score_counts(self.kind, self.counts.sum(axis=1))

    def draws(self, picks: np.ndarray) -> np.ndarray:
        """(S, B) each seed's score on each replicate (``picks`` (B, G): how often each
        sentence is drawn)."""
        return np.stack([score_counts(self.kind, picks @ c) for c in self.counts])


@dataclass
class Replicates:
    """One score with its per-seed bootstrap replicates (see the module doc).

    Attributes:
        name: what it is (``"layer 3"``, ``"control 3"``, ``"pos CoG"``).
        points: (S,) per-seed point values; ``value`` is their mean.
        draws: (S, B) per-seed replicates on the unit's shared sentence picks.
        unit: which test sentences and picks (same unit = paired).
        seeds: (S,) seed ids; scores with equal seeds share the outer (seed) draw.
    """

    name: str
    points: np.ndarray
    draws: np.ndarray
    unit: str = "test"
    seeds: tuple[int, ...] = (0,)

    def __post_init__(self) -> None:
        self.points = np.atleast_1d(np.asarray(self.points, dtype=float))
        self.draws = np.atleast_2d(np.asarray(self.draws, dtype=float))
        if self.draws.shape[0] != len(self.points) or len(self.seeds) != len(self.points):
            raise InvalidArgumentError(
                f"{self.name}: {len(self.points)} points, {self.draws.shape[0]} rows of "
                f"draws and {len(self.seeds)} seeds must agree"
            )

    @property
    def value(self) -> float:
        return float(np.mean(self.points))


@dataclass(frozen=True)
class Difference:
    """``a − b`` with its interval, p-values and per-seed differences."""

    a: str
    b: str
    value: float
    ci_low: float
    ci_high: float
    p: float
    per_seed: tuple[float, ...]
    paired: bool
    p_holm: float = math.nan
    alpha: float = ALPHA
    kind: str = ""  # in a layer table: "adjacent", "best" or "adjacent, best"
    seed_level: str = ""  # "two-level" or "seeds identical" ("" read from older tables)

    @property
    def sign_stable(self) -> bool:
        """The sign of the difference is the same (and not zero) at every seed."""
        s = np.sign(self.per_seed)
        return bool(len(s) and np.all(s == s[0]) and s[0] != 0)

    @property
    def called(self) -> bool:
        """A difference one may state: Holm-adjusted p < alpha (the raw p where no family
        was adjusted), the interval excludes 0 and the sign holds at every seed."""
        p = self.p if math.isnan(self.p_holm) else self.p_holm
        return p < self.alpha and (self.ci_low > 0 or self.ci_high < 0) and self.sign_stable

    def as_dict(self) -> dict:
        """JSON-ready (NaN -> None)."""
        f = _json_float
        return {
            "a": self.a,
            "b": self.b,
            "diff": f(self.value),
            "ci_low": f(self.ci_low),
            "ci_high": f(self.ci_high),
            "p": f(self.p),
            "p_holm": f(self.p_holm),
            "per_seed": [f(x) for x in self.per_seed],
            "paired": self.paired,
            "sign_stable": self.sign_stable,
            "called": self.called,
            "kind": self.kind,
            "seed_level": self.seed_level,
        }

    @classmethod
    def from_dict(cls, d: dict) -> Difference:
        """Read back :meth:`as_dict` (``called`` is recomputed, not trusted)."""
        g = lambda k: math.nan if d.get(k) is None else float(d[k])  # noqa: E731
        per_seed = tuple(math.nan if x is None else float(x) for x in d.get("per_seed", ()))
        return cls(
            str(d["a"]),
            str(d["b"]),
            g("diff"),
            g("ci_low"),
            g("ci_high"),
            g("p"),
            per_seed,
            bool(d.get("paired", True)),
            g("p_holm"),
            kind=str(d.get("kind", "")),
            seed_level=str(d.get("seed_level", "")),
        )


@dataclass
class Engine:
    """Sentence picks per unit and the comparisons made from them.

    Args:
        n_boot: replicates.
        seed: seed of the sentence picks (mixed with the unit's name: two units draw
            independently) and of the seed resampling.
        level: interval coverage.
    """

    n_boot: int = 1000
    seed: int = 0
    level: float = 0.95
    _picks: dict[tuple[str, int], np.ndarray] = field(default_factory=dict, repr=False)

    def picks(self, unit: str, n_groups: int) -> np.ndarray:
        """(B, G) multinomial sentence picks of a unit (the same every call)."""
        key = (unit, int(n_groups))
        if key not in self._picks:
            rng = np.random.default_rng([self.seed, _stable_hash(unit)])
            p = np.full(n_groups, 1.0 / max(n_groups, 1))
            self._picks[key] = rng.multinomial(n_groups, p, size=self.n_boot).astype(float)
        return self._picks[key]

    def replicates(self, name: str, counts: SentenceCounts, unit: str) -> Replicates:
        """A stored score made comparable: its draws on the unit's picks."""
        picks = self.picks(unit, counts.counts.shape[1])
        return Replicates(name, counts.points, counts.draws(picks), unit, counts.seeds)

    def compare(self, a: Replicates, b: Replicates) -> Difference:
        """``a − b`` (see the module doc)."""
        return compare(a, b, seed=self.seed, level=self.level)


def compare(a: Replicates, b: Replicates, seed: int = 0, level: float = 0.95) -> Difference:
    """``a − b``: two-level paired bootstrap interval, p-value and per-seed differences."""
    paired = a.unit == b.unit
    n = min(a.draws.shape[1], b.draws.shape[1])
    rng = np.random.default_rng([seed, _stable_hash(a.name), _stable_hash(b.name)])
    ia = rng.integers(0, len(a.points), size=(n, len(a.points)))
    share = paired and a.seeds == b.seeds
    ib = ia if share else rng.integers(0, len(b.points), size=(n, len(b.points)))
    d = _two_level(a.draws[:, :n], ia) - _two_level(b.draws[:, :n], ib)
    if share:
        per_seed = tuple(float(x) for x in a.points - b.points)
    else:  # unpaired seeds: every combination
        per_seed = tuple(float(x) for x in np.subtract.outer(a.points, b.points).ravel())
    alpha = (1.0 - level) / 2
    finite = d[np.isfinite(d)]
    if not finite.size:
        lo = hi = p = math.nan
    else:
        lo, hi = (float(x) for x in np.quantile(finite, [alpha, 1 - alpha]))
        p = difference_p(a.value - b.value, finite)
    level = TWO_LEVEL if _seeds_vary(a) or _seeds_vary(b) else SEEDS_IDENTICAL
    return Difference(
        a.name, b.name, a.value - b.value, lo, hi, p, per_seed, paired, seed_level=level
    )


def bootstrap_p(draws: np.ndarray) -> float:
    """Two-sided p-value of "the difference is 0" from its replicates (module doc)."""
    d = np.asarray(draws, dtype=float)
    n = len(d)
    below, above = (np.sum(d <= 0) + 1) / (n + 1), (np.sum(d >= 0) + 1) / (n + 1)
    return float(min(1.0, 2 * min(below, above)))


def normal_p(value: float, draws: np.ndarray) -> float:
    """Two-sided normal-approximation p of "the difference is 0": ``value`` over the
    standard deviation of its replicates (the bootstrap standard error); NaN if that is 0.
    Floored at :data:`P_FLOOR`: a normal tail that far out says only "far beyond any level"."""
    se = float(np.std(np.asarray(draws, dtype=float), ddof=1)) if len(draws) > 1 else 0.0
    if not (se > 0 and math.isfinite(value)):
        return math.nan
    return max(P_FLOOR, float(math.erfc(abs(value) / (se * math.sqrt(2.0)))))


def difference_p(value: float, draws: np.ndarray) -> float:
    """The p of a difference (module doc, "Resolution"): the bootstrap p where at least
    :data:`MIN_TAIL` replicates fall past zero, else the normal approximation."""
    d = np.asarray(draws, dtype=float)
    tail = min(int(np.sum(d <= 0)), int(np.sum(d >= 0)))
    if tail >= MIN_TAIL:
        return bootstrap_p(d)
    p = normal_p(value, d)
    return bootstrap_p(d) if math.isnan(p) else p


def holm(pvalues: Sequence[float]) -> np.ndarray:
    """Holm's step-down adjusted p-values (same order as given; NaN stays NaN)."""
    p = np.asarray(pvalues, dtype=float)
    out = np.full(len(p), np.nan)
    ok = np.flatnonzero(np.isfinite(p))
    m, running = len(ok), 0.0
    for rank, i in enumerate(ok[np.argsort(p[ok], kind="stable")]):
        running = max(running, min(1.0, (m - rank) * p[i]))
        out[i] = running
    return out


def with_holm(diffs: Sequence[Difference]) -> list[Difference]:
    """The differences with ``p_holm`` set over them as one family."""
    from dataclasses import replace

    adj = holm([d.p for d in diffs])
    return [replace(d, p_holm=float(q)) for d, q in zip(diffs, adj, strict=True)]


def layer_table(
    scores: Mapping[int, Replicates], best: int | None = None, seed: int = 0
) -> list[Difference]:
    """Adjacent-layer differences (``l+1 − l``) and best-vs-each (``best − l``), each pair
    once (a neighbour of ``best`` as ``best − l``, kind "adjacent, best"), Holm over all of
    them. ``best``: the dev-chosen layer (default: the best point value)."""
    from dataclasses import replace

    layers = sorted(scores)
    if best is None or best not in scores:
        best = max(layers, key=lambda la: scores[la].value)
    rows = [
        replace(compare(scores[hi], scores[lo], seed), kind="adjacent")
        for lo, hi in zip(layers, layers[1:], strict=False)
        if best not in (lo, hi)
    ]
    at = layers.index(best)
    for i, la in enumerate(layers):
        if la != best:
            kind = "adjacent, best" if abs(i - at) == 1 else "best"
            rows.append(replace(compare(scores[best], scores[la], seed), kind=kind))
    return with_holm(rows)


def mix_vs_best_member(
    mix: Replicates, members: Mapping[int, Replicates], seed: int = 0
) -> Difference:
    """``mix − best member`` (the member with the best point value), paired. A scalar mix
    can weight its best member alone, so a *called* negative difference means the mix is
    under-trained (fewer training words or epochs than the single layers), not a property
    of the layers."""
    best = max(members, key=lambda la: members[la].value)
    return compare(mix, members[best], seed)


def centre_of_gravity_replicates(
    name: str, scores: Mapping[int, Replicates], cumulative: bool = True
) -> Replicates:
    """The centre of gravity (running best, :func:`~probing.probes.metrics.centre_of_gravity`)
    as a score of its own: per seed, of the layers' points and of each replicate."""
    layers = sorted(scores)
    first = scores[layers[0]]
    pts = np.stack([scores[la].points for la in layers], axis=-1)  # (S, L)
    draws = np.stack([scores[la].draws for la in layers], axis=-1)  # (S, B, L)
    cog_pts = np.array([centre_of_gravity_draws(p[None], layers, cumulative)[0] for p in pts])
    cog_draws = np.stack([centre_of_gravity_draws(d, layers, cumulative) for d in draws])
    return Replicates(name, cog_pts, cog_draws, first.unit, first.seeds)


@dataclass(frozen=True)
class DepthDifference:
    """Two models' centres of gravity compared in absolute layers *and* in relative depth
    (each centre divided by its model's number of layers), both as paired differences.

    Dividing by 12 instead of 6 alone moves a centre a long way in relative depth, so the
    relative ordering is *called* only where the absolute one does not contradict it: its
    point difference is not of the opposite sign (a model whose centre is higher in layers
    is not said to sit lower in its depth)."""

    absolute: Difference  # a − b, layers
    relative: Difference  # a / L_a − b / L_b, fractions of the depth

    @property
    def contradicted(self) -> bool:
        """The absolute difference points the other way from the relative one."""
        return bool(self.absolute.value * self.relative.value < 0)

    @property
    def relative_called(self) -> bool:
        return self.relative.called and not self.contradicted

    def as_dict(self) -> dict:
        return {
            "absolute": self.absolute.as_dict(),
            "relative": self.relative.as_dict(),
            "contradicted": self.contradicted,
            "relative_called": self.relative_called,
        }


def depth_differences(
    pairs: Sequence[tuple[Replicates, int, Replicates, int]], seed: int = 0
) -> list[DepthDifference]:
    """Per pair ``(cog_a, layers_a, cog_b, layers_b)``: ``a − b`` in layers and in relative
    depth, Holm over the pairs within each (absolute, relative) family."""
    absolute = with_holm([compare(a, b, seed) for a, _, b, _ in pairs])
    relative = with_holm(
        [
            compare(
                _scaled(a, 1 / la, f"{a.name} / {la}"), _scaled(b, 1 / lb, f"{b.name} / {lb}"), seed
            )
            for a, la, b, lb in pairs
        ]
    )
    return [DepthDifference(x, y) for x, y in zip(absolute, relative, strict=True)]


def _scaled(r: Replicates, factor: float, name: str) -> Replicates:
    return Replicates(name, r.points * factor, r.draws * factor, r.unit, r.seeds)


def table_dict(diffs: Sequence[Difference], metric: str, note: str = "") -> dict:
    """The JSON form of a comparison table (``results/*.json`` key ``comparisons``)."""
    out = {"metric": metric, "method": METHOD, "rows": [d.as_dict() for d in diffs]}
    if note:
        out["note"] = note
    return out


def format_table(diffs: Sequence[Difference], scale: float = 100.0, unit: str = "points") -> str:
    """Plain-text table (what ``probe --compare`` prints)."""
    lines = [
        f"{'comparison':<28} {'diff':>8} {'95 % CI':>19} {'p':>7} {'p Holm':>7}  called",
        "-" * 80,
    ]
    for d in diffs:
        ci = f"[{d.ci_low * scale:+.2f}, {d.ci_high * scale:+.2f}]"
        flag = (
            "yes"
            if d.called
            else ("no (sign flips over seeds)" if not d.sign_stable and d.value != 0 else "no")
        )
        lines.append(
            f"{d.a + ' − ' + d.b:<28} {d.value * scale:>+8.2f} {ci:>19} "
            f"{_p_text(d.p):>7} {_p_text(d.p_holm):>7}  {flag}"
        )
    if diffs and all(d.seed_level == SEEDS_IDENTICAL for d in diffs):
        lines.append(f"({SEEDS_IDENTICAL}: the seed level of the bootstrap does nothing here)")
    lines.append(f"(differences in {unit}; {METHOD})")
    return "\n".join(lines)


def _p_text(p: float) -> str:
    """Three decimals, or a power of ten below 0.001 (normal-approximation p's)."""
    return f"{p:.3f}" if not math.isfinite(p) or p >= 0.001 else f"{p:.0e}"


def _seeds_vary(r: Replicates) -> bool:
    """Whether the seed level of ``r`` does anything (more than one seed, not all alike)."""
    if len(r.points) < 2:
        return False
    same = np.allclose(r.points, r.points[0], equal_nan=True) and np.allclose(
        r.draws, r.draws[:1], equal_nan=True
    )
    return not same


def _two_level(draws: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """(B,) replicate b = mean over the resampled seeds ``idx[b]`` of ``draws[seed, b]``."""
    b = np.arange(draws.shape[1])[:, None]
    return np.nanmean(draws[idx, b], axis=1) if draws.shape[0] > 1 else draws[0]


def _json_float(x: float) -> float | None:
    return None if x is None or not math.isfinite(float(x)) else float(x)


def _stable_hash(text: str) -> int:
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "little")
