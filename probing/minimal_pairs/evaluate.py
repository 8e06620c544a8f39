"""Scoring pairs, per-paradigm accuracy with intervals, model vs model, pseudo-perplexity.

A pair is right when the grammatical sentence's score is strictly above the other's (a tie
is wrong, as in BLiMP). Accuracy per paradigm is a :class:`~probing.probes.compare.
SentenceCounts` of kind ``accuracy`` over the paradigm's groups (the source sentence or
template item of each pair), so its interval and every comparison come from the comparison
engine: one set of group picks per paradigm (``unit`` = the paradigm), shared by every
model scored on it, hence paired. Two models are compared on the pairs both could score
(ELMo leaves out pairs whose changed word is outside its vocabulary), Holm over paradigms.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from probing.encoders.base import Encoder
from probing.minimal_pairs.pairs import MIN_PAIRS, MinimalPair, by_paradigm
from probing.minimal_pairs.pll import ProgressFn, SentenceScore, check_metric
from probing.probes.compare import Difference, Engine, SentenceCounts, with_holm

BILM = "bi-LM (forward + backward log-likelihood)"
UNIT_PREFIX = "minimal-pairs:"


def is_bilm(encoder: Encoder) -> bool:
    """Scored by its forward and backward LMs (ELMo), not by pseudo-log-likelihood."""
    return encoder.info.objective == "bidirectional-lm"


def scorer_name(encoder: Encoder, metric: str = "original") -> str:
    """What scores sentences for ``encoder``: the PLL ``metric``, or the bi-LM."""
    return BILM if is_bilm(encoder) else f"PLL ({check_metric(metric)})"


def score_sentences(
    encoder: Encoder,
    sentences: Sequence[Sequence[str]],
    metric: str = "original",
    progress: ProgressFn | None = None,
) -> list[SentenceScore]:
    """PLL (masked LMs) or forward + backward LM log-likelihood (ELMo) of each sentence."""
    if is_bilm(encoder):
        from probing.minimal_pairs.bilm_score import bilm_scores

        return bilm_scores(encoder, sentences, progress=progress)
    from probing.minimal_pairs.pll import pll_scores

    return pll_scores(encoder, sentences, metric, progress=progress)


@dataclass
class PairScores:
    """One model's scores of ``pairs``: sentence totals ``good`` / ``bad`` (n,), ``kept``
    (n,) bool (scorable by this model), and who scored them."""

    model: str
    scorer: str
    pairs: list[MinimalPair]
    good: np.ndarray
    bad: np.ndarray
    kept: np.ndarray

    @property
    def correct(self) -> np.ndarray:
        return self.good > self.bad

    def rows(self) -> list[dict]:
        """Per pair, for the per-item CSV."""
        return [
            {
                "paradigm": p.paradigm,
                "group": p.group,
                "good": p.good_text,
                "bad": p.bad_text,
                "good_score": float(g),
                "bad_score": float(b),
                "kept": bool(k),
                "correct": bool(k and g > b),
            }
            for p, g, b, k in zip(self.pairs, self.good, self.bad, self.kept, strict=True)
        ]

    @classmethod
    def from_rows(cls, rows: Sequence[dict], model: str, scorer: str) -> PairScores:
        """Read back :meth:`rows` (e.g. a committed ``.pairs.csv``)."""
        pairs = [
            MinimalPair(
                tuple(str(r["good"]).split(" ")),
                tuple(str(r["bad"]).split(" ")),
                str(r["paradigm"]),
                str(r["group"]),
            )
            for r in rows
        ]
        f = lambda k: np.array([float(r[k]) for r in rows])  # noqa: E731
        kept = np.array([str(r["kept"]).lower() in ("true", "1") for r in rows])
        return cls(model, scorer, pairs, f("good_score"), f("bad_score"), kept)


def _changed_words(p: MinimalPair) -> set[str]:
    """Words in one member and not the other (as multisets)."""
    g, b = Counter(p.good), Counter(p.bad)
    return set((g - b) + (b - g))


def score_pairs(
    encoder: Encoder,
    pairs: Sequence[MinimalPair],
    metric: str = "original",
    progress: ProgressFn | None = None,
) -> tuple[PairScores, dict[tuple[str, ...], SentenceScore]]:
    """Score both members of every pair (each distinct sentence once); also the sentence
    scores by word tuple (per-unit log-probabilities, for display)."""
    sentences = list(dict.fromkeys(s for p in pairs for s in (p.good, p.bad)))
    scores = score_sentences(encoder, sentences, metric, progress)
    by_words = dict(zip(sentences, scores, strict=True))
    good = np.array([by_words[p.good].total for p in pairs])
    bad = np.array([by_words[p.bad].total for p in pairs])
    kept = np.ones(len(pairs), bool)
    if is_bilm(encoder):
        for i, p in enumerate(pairs):
            oov = set(by_words[p.good].out_of_vocabulary) | set(by_words[p.bad].out_of_vocabulary)
            kept[i] = not (oov & _changed_words(p))
    return PairScores(encoder.name, scorer_name(encoder, metric), list(pairs), good, bad, kept), (
        by_words
    )


def paradigm_counts(
    ps: PairScores, paradigm: str, keep: np.ndarray | None = None
) -> SentenceCounts:
    """(1, G, 2) (wrong, right) per group of ``paradigm`` over its kept pairs (and
    ``keep``); G counts every group of the paradigm, scored or not, so that every model's
    counts of one paradigm line up with the same picks."""
    idx = [i for i, p in enumerate(ps.pairs) if p.paradigm == paradigm]
    groups = {g: k for k, g in enumerate(sorted({ps.pairs[i].group for i in idx}))}
    counts = np.zeros((1, len(groups), 2))
    ok = ps.kept if keep is None else ps.kept & keep
    correct = ps.correct
    for i in idx:
        if ok[i]:
            counts[0, groups[ps.pairs[i].group], int(correct[i])] += 1
    return SentenceCounts("accuracy", counts)


def accuracy_table(ps: PairScores, engine: Engine | None = None) -> list[dict]:
    """Per paradigm: pairs, scored pairs, groups, accuracy with its 95 % interval (group
    bootstrap through the engine), mean margin (good − bad, nats), and a warning where it
    has fewer than :data:`MIN_PAIRS` scored pairs."""
    engine = engine or Engine()
    rows = []
    for name, items in by_paradigm(ps.pairs).items():
        counts = paradigm_counts(ps, name)
        n_scored = int(counts.counts.sum())
        rep = engine.replicates(name, counts, UNIT_PREFIX + name)
        draws = rep.draws[0][np.isfinite(rep.draws[0])]
        alpha = (1 - engine.level) / 2
        lo, hi = np.quantile(draws, [alpha, 1 - alpha]) if draws.size else (np.nan, np.nan)
        mask = np.array([p.paradigm == name for p in ps.pairs]) & ps.kept
        margin = float(np.mean(ps.good[mask] - ps.bad[mask])) if mask.any() else float("nan")
        row = {
            "model": ps.model,
            "scorer": ps.scorer,
            "paradigm": name,
            "phenomenon": items[0].phenomenon,
            "n_pairs": len(items),
            "n_scored": n_scored,
            "n_groups": int(counts.counts.shape[1]),
            "accuracy": rep.value if n_scored else float("nan"),
            "accuracy_lo": float(lo),
            "accuracy_hi": float(hi),
            "mean_margin": margin,
            "warning": "",
        }
        if n_scored < MIN_PAIRS:
            row["warning"] = f"{n_scored} scored pairs (< {MIN_PAIRS}): a wide interval"
        rows.append(row)
    return rows


def _key(p: MinimalPair) -> tuple:
    return (p.paradigm, p.group, p.good, p.bad)


def compare_runs(a: PairScores, b: PairScores, engine: Engine | None = None) -> list[Difference]:
    """Accuracy of ``a`` − ``b`` per paradigm both scored, on the pairs both kept, paired
    over the paradigm's groups; Holm over the paradigms."""
    engine = engine or Engine()
    # One model under two scorers (original vs within_word_l2r): the scorer names the run.
    label_a, label_b = (
        (a.model, b.model)
        if a.model != b.model
        else (f"{a.model} {a.scorer}", f"{b.model} {b.scorer}")
    )
    kept_b = {_key(p) for p, k in zip(b.pairs, b.kept, strict=True) if k}
    kept_a = {_key(p) for p, k in zip(a.pairs, a.kept, strict=True) if k}
    both_a = np.array([_key(p) in kept_b for p in a.pairs], bool)
    both_b = np.array([_key(p) in kept_a for p in b.pairs], bool)
    diffs = []
    names_b = set(by_paradigm(b.pairs))
    for name in by_paradigm(a.pairs):
        if name not in names_b:
            continue
        ca, cb = paradigm_counts(a, name, both_a), paradigm_counts(b, name, both_b)
        if ca.counts.shape != cb.counts.shape or not ca.counts.sum():
            continue  # different pair sets (another paradigm build): not paired
        unit = UNIT_PREFIX + name
        ra = engine.replicates(f"{label_a}: {name}", ca, unit)
        rb = engine.replicates(f"{label_b}: {name}", cb, unit)
        diffs.append(engine.compare(ra, rb))
    return with_holm(diffs)


def pseudo_perplexity(
    encoder: Encoder,
    sentences: Sequence[Sequence[str]],
    metric: str = "original",
    progress: ProgressFn | None = None,
) -> dict:
    """Salazar et al.'s pseudo-perplexity exp(−Σ PLL / Σ pieces) for a masked LM; for ELMo
    the bi-LM perplexity exp(−Σ (fwd + bwd) / (2 Σ (words + 1))), the mean of the two
    directions' per-token log-likelihoods (``</S>``/``<S>`` counted). Pieces and words are
    different units: the figures of two tokenizations are not comparable."""
    scores = score_sentences(encoder, sentences, metric, progress)
    total = float(sum(s.total for s in scores))
    if is_bilm(encoder):
        n = 2 * sum(len(s.words) + 1 for s in scores)
        what, unit = "bi-LM perplexity", "word (forward and backward, </S> <S> included)"
    else:
        n = sum(len(s.units) for s in scores)
        what, unit = "pseudo-perplexity", "word piece"
    out = {
        "measure": what,
        "per": unit,
        "value": float(np.exp(-total / n)),
        "n_sentences": len(scores),
        "n_tokens": int(n),
        "scorer": scorer_name(encoder, metric),
    }
    if is_bilm(encoder):  # scored as <UNK>: easier than the word itself would be
        out["n_unknown_words"] = sum(len(s.out_of_vocabulary) for s in scores)
    return out
