"""Top-k vs random-k neurons as paired comparisons through the comparison engine
(:mod:`probing.probes.compare`), and the sentences written from them.

Per test item the probe on a neuron set is right or wrong (the ablation: the masked-LM loss
of a held-out word); items are grouped by sentence. A top-k set is one fit; the random
k-sets are ``n_random`` draws, which the engine treats as its seeds: a replicate resamples
the test sentences (the same picks for every set, so top k and random k are paired item by
item) and, for random k, the draws too (the two-level bootstrap). Every ranking and k of a
run is one family for Holm's correction (probe accuracy one family, ablation loss another).
A difference is *called* as the engine calls it: Holm p < 0.05, its interval excludes 0,
and — the seed rule — its sign is the same against every random draw.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from probing.probes.compare import (
    Difference,
    Engine,
    Replicates,
    SentenceCounts,
    compare,
    table_dict,
    with_holm,
)

if TYPE_CHECKING:
    from probing.interventions.masked_words import WordScores
    from probing.interventions.neurons import KSetPredictions

TEST_UNIT = "neurons: test words"
HELDOUT_UNIT = "neurons: held-out masked words"
LEVEL = 0.95


def interval(rep: Replicates, seed: int = 0, level: float = LEVEL) -> tuple[float, float]:
    """Percentile interval of one score: of its sentence replicates (one fit), or of the
    engine's two-level replicates (several draws: the draws resampled in each replicate)."""
    draws = rep.draws
    if draws.shape[0] > 1:
        rng = np.random.default_rng([seed, _hash(rep.name)])
        idx = rng.integers(0, draws.shape[0], size=(draws.shape[1], draws.shape[0]))
        d = np.nanmean(draws[idx, np.arange(draws.shape[1])[:, None]], axis=1)
    else:
        d = draws[0]
    d = d[np.isfinite(d)]
    if not d.size:
        return math.nan, math.nan
    alpha = (1.0 - level) / 2
    lo, hi = np.quantile(d, [alpha, 1 - alpha])
    return float(lo), float(hi)


def _est(prefix: str, rep: Replicates, seed: int) -> dict[str, float]:
    lo, hi = interval(rep, seed)
    return {prefix: rep.value, f"{prefix}_lo": lo, f"{prefix}_hi": hi}


def probe_table(
    preds: Sequence[KSetPredictions],
    y_test: np.ndarray,
    sentence: np.ndarray,
    n_sentences: int,
    engine: Engine,
) -> dict:
    """Per k: each ranking's top-k probe accuracy and random k's, with intervals; and the
    engine's table of ``top k − random k`` (accuracy, Holm over every ranking and k)."""
    rows, diffs = [], []
    for p in preds:
        rand = engine.replicates(
            f"random {p.k}",
            SentenceCounts.from_predictions(
                "accuracy", y_test, list(p.random), sentence, n_sentences
            ),
            TEST_UNIT,
        )
        per_draw = rand.points
        row = {
            "k": p.k,
            **_est("random_accuracy", rand, engine.seed),
            "random_min": float(per_draw.min()),
            "random_max": float(per_draw.max()),
        }
        for name, top in p.top.items():
            rep = engine.replicates(
                f"{name} top {p.k}",
                SentenceCounts.from_predictions("accuracy", y_test, [top], sentence, n_sentences),
                TEST_UNIT,
            )
            row.update(_est(f"{name}_accuracy", rep, engine.seed))
            diffs.append(compare(rep, rand, engine.seed, engine.level))
        rows.append(row)
    return {
        "rows": rows,
        "comparisons": table_dict(
            with_holm(diffs),
            "probe accuracy on test words (fraction)",
            "top k − random k per ranking and k; the random draws are the seeds",
        ),
    }


def loss_counts(scores: Sequence[WordScores], n_sentences: int) -> SentenceCounts:
    """Per scored set (one row each) and held-out sentence: (Σ word loss, words), a
    ``ratio`` score whose value is the mean loss per word."""
    rows = []
    for s in scores:
        total = np.bincount(s.sentence, weights=s.loss, minlength=n_sentences)
        words = np.bincount(s.sentence, minlength=n_sentences).astype(float)
        rows.append(np.stack([total, words], axis=-1))
    return SentenceCounts("ratio", np.stack(rows), tuple(range(len(rows))))


def ablation_table(
    scores: Mapping[int, Mapping[str, WordScores]],
    rankings: Sequence[str],
    n_random: int,
    n_sentences: int,
    engine: Engine,
) -> dict:
    """Per k (``scores[k]``: word scores named ``"none"``, each ranking, ``"random i"``):
    the masked-LM loss with each set ablated, with intervals; and the engine's table of
    ``top k − random k`` (nats, Holm over every ranking and k)."""
    rows, diffs = [], []
    for k, named in scores.items():
        clean = engine.replicates("clean", loss_counts([named["none"]], n_sentences), HELDOUT_UNIT)
        rand = engine.replicates(
            f"random {k}",
            loss_counts([named[f"random {i}"] for i in range(n_random)], n_sentences),
            HELDOUT_UNIT,
        )
        row = {
            "k": k,
            **_est("clean_loss", clean, engine.seed),
            **_est("random_loss", rand, engine.seed),
            "random_min": float(rand.points.min()),
            "random_max": float(rand.points.max()),
        }
        for name in rankings:
            rep = engine.replicates(
                f"{name} top {k}", loss_counts([named[name]], n_sentences), HELDOUT_UNIT
            )
            row.update(_est(f"{name}_loss", rep, engine.seed))
            diffs.append(compare(rep, rand, engine.seed, engine.level))
        rows.append(row)
    return {
        "rows": rows,
        "comparisons": table_dict(
            with_holm(diffs),
            "masked-LM loss on held-out words (nats)",
            "top k ablated − random k ablated per ranking and k; the random draws are the seeds",
        ),
    }


def _p(p: float | None) -> str:
    if p is None or not math.isfinite(p):
        return "n/a"
    return f"{p:.3f}" if p >= 0.001 else f"{p:.0e}".replace("e-0", "e-")


def finding_lines(table: dict, scale: float, unit: str, more: str, less: str) -> list[str]:
    """One line per comparison of a stored table (``table_dict``), its wording from the
    engine's call: ``more`` / ``less`` when called with that sign, "not distinguishable"
    otherwise; the difference, its 95 % interval and the Holm p follow."""
    lines = []
    for r in table["rows"]:
        d = Difference.from_dict(r)
        if d.called:
            verdict = more if d.value > 0 else less
        elif not d.sign_stable and d.value != 0:
            verdict = "not called (the sign differs between random draws)"
        else:
            verdict = "not distinguishable"
        lines.append(
            f"{d.a} vs {d.b}: {verdict} ({d.a} − {d.b} {d.value * scale:+.2f} "
            f"[{d.ci_low * scale:+.2f}, {d.ci_high * scale:+.2f}] {unit}, p_Holm {_p(d.p_holm)})"
        )
    return lines


def findings(result: dict) -> dict[str, list[str]]:
    """The run's comparative sentences, written from its stored tables: ``"probes"`` and,
    for a masked LM, ``"ablation"``."""
    out = {
        "probes": finding_lines(
            result["probes"]["comparisons"],
            100.0,
            "points",
            "top k higher accuracy than random k",
            "top k lower accuracy than random k",
        )
    }
    if result.get("ablation"):
        out["ablation"] = finding_lines(
            result["ablation"]["comparisons"],
            1.0,
            "nats",
            "ablating the top k raises the loss more than random k",
            "ablating the top k raises the loss less than random k",
        )
    return out


def _hash(text: str) -> int:
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "little")
