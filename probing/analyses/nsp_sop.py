"""NSP vs SOP as a measurement: each pair head's accuracy on its own pairs and on the two
diagnostic sets, with intervals and Holm-corrected differences from the comparison engine.

A *set* is the positives (``next``: B is A's next sentence) plus one kind of negative:
``other_doc`` (NSP's own), ``same_doc`` (same document, not adjacent) or ``swapped`` (SOP's
own). Every set shares the positives, and every cell is scored on the same test documents,
so all cells are paired: the bootstrap resamples test *documents* (the unit of the split;
pairs of one document are not independent), :class:`~probing.probes.compare.Engine`.

Inputs are per-item arrays, as committed in ``results/nsp-sop/items.csv``: each pair's kind,
label (0 continues, 1 not), test document and each head's predicted class (1 when its
P(continues) < 0.5).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np

from probing.probes.compare import (
    Difference,
    Engine,
    Replicates,
    SentenceCounts,
    compare,
    with_holm,
)

SET_KINDS = ("other_doc", "same_doc", "swapped")  # negatives; each set adds the positives
# heads: the frozen-encoder NSP and SOP heads, and the SOP head trained with the top 2 layers
OWN_SET = {"nsp": "other_doc", "sop": "swapped", "sop-top2": "swapped"}
SET_LABELS = {
    "other_doc": "negatives from another document",
    "same_doc": "negatives from the same document",
    "swapped": "swapped pairs",
}
HEAD_LABELS = {"nsp": "NSP head", "sop": "SOP head", "sop-top2": "SOP head with top 2 layers tuned"}
UNIT = "nsp-sop test documents"
CHANCE = "chance"


@dataclass(frozen=True)
class Accuracy:
    """One head's accuracy on one set with its 95 % bootstrap interval."""

    head: str
    kind: str
    value: float
    ci_low: float
    ci_high: float
    n_pairs: int

    def as_dict(self) -> dict:
        return {
            "head": self.head,
            "set": self.kind,
            "accuracy": self.value,
            "ci_low": self.ci_low,
            "ci_high": self.ci_high,
            "n_pairs": self.n_pairs,
        }


def cell_name(head: str, kind: str) -> str:
    """``"nsp other_doc"``: the engine's name of a cell."""
    return f"{head} {kind}"


def set_counts(
    kinds: Sequence[str],
    labels: np.ndarray,
    docs: np.ndarray,
    pred: np.ndarray,
    kind: str,
    n_docs: int,
) -> SentenceCounts:
    """Per test document (wrong, right) counts of the set ``next`` + ``kind``; a pair is
    right when the predicted class ``pred`` is its label."""
    kinds = np.asarray(kinds)
    keep = (kinds == "next") | (kinds == kind)
    pred = np.asarray(pred)[keep].astype(int)
    return SentenceCounts.from_predictions(
        "accuracy", np.asarray(labels)[keep], [pred], np.asarray(docs)[keep], n_docs
    )


def cell_replicates(
    kinds: Sequence[str],
    labels: np.ndarray,
    docs: np.ndarray,
    pred_by_head: Mapping[str, np.ndarray],
    engine: Engine,
) -> dict[str, Replicates]:
    """Replicates of every (head, set) cell from each head's predicted classes, and of
    ``chance`` (0.5 on every replicate)."""
    n_docs = int(np.max(docs)) + 1
    out = {
        cell_name(h, k): engine.replicates(
            cell_name(h, k), set_counts(kinds, labels, docs, p, k, n_docs), UNIT
        )
        for h, p in pred_by_head.items()
        for k in SET_KINDS
    }
    out[CHANCE] = Replicates(CHANCE, np.array([0.5]), np.full((1, engine.n_boot), 0.5), UNIT)
    return out


def accuracies(
    reps: Mapping[str, Replicates], kinds: Sequence[str], level: float = 0.95
) -> list[Accuracy]:
    """Each cell's point accuracy and percentile interval (the engine's replicates)."""
    kinds = np.asarray(kinds)
    out = []
    for name, rep in reps.items():
        if name == CHANCE:
            continue
        head, kind = name.split(" ", 1)
        lo, hi = np.quantile(rep.draws[0], [(1 - level) / 2, (1 + level) / 2])
        n = int(np.sum((kinds == "next") | (kinds == kind)))
        out.append(Accuracy(head, kind, rep.value, float(lo), float(hi), n))
    return out


def comparison_rows(heads: Sequence[str]) -> list[tuple[str, str]]:
    """The family of differences the lesson rests on, ``(a, b)`` as ``a − b``: each cell
    against chance; each head's own set against its two other sets; every two heads on each
    set (in ``heads`` order)."""
    rows = [(cell_name(h, k), CHANCE) for h in heads for k in SET_KINDS]
    for h in heads:
        own = OWN_SET[h]
        rows += [(cell_name(h, own), cell_name(h, k)) for k in SET_KINDS if k != own]
    for a, b in combinations(heads, 2):
        rows += [(cell_name(a, k), cell_name(b, k)) for k in SET_KINDS]
    return rows


def differences(reps: Mapping[str, Replicates], seed: int = 0) -> list[Difference]:
    """Every row of :func:`comparison_rows`, with Holm over them as one family."""
    heads = [h for h in OWN_SET if cell_name(h, OWN_SET[h]) in reps]
    raw = [compare(reps[a], reps[b], seed=seed) for a, b in comparison_rows(heads)]
    return with_holm(raw)


def _label(name: str) -> str:
    if name == CHANCE:
        return "chance"
    head, kind = name.split(" ", 1)
    return f"{HEAD_LABELS[head]} on {SET_LABELS[kind]}"


def finding(d: Difference, points: Mapping[str, float]) -> str:
    """One sentence for one difference (``points``: each cell's accuracy), its wording
    decided by the engine's call: Holm p < 0.05, interval off 0, sign stable."""
    word = ("above" if d.value > 0 else "below") if d.called else "not distinguishable from"
    ptext = f"p_Holm {d.p_holm:.3f}" if d.p_holm >= 0.001 else "p_Holm < 0.001"
    return (
        f"{_label(d.a)} ({100 * points[d.a]:.1f} %) is {word} {_label(d.b)} "
        f"({100 * points[d.b]:.1f} %): difference {100 * d.value:+.1f} points, 95 % CI "
        f"[{100 * d.ci_low:+.1f}, {100 * d.ci_high:+.1f}], {ptext}."
    )


def findings(reps: Mapping[str, Replicates], diffs: Sequence[Difference]) -> list[str]:
    """The sentences of :func:`finding` for every difference, in family order."""
    points = {name: r.value for name, r in reps.items()}
    return [finding(d, points) for d in diffs]
