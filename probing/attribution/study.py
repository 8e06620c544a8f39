"""The faithfulness study: every method's deletion/insertion AOPC against a random order on
a fixed set of cases, paired comparisons between methods, and per-layer agreement.

Intervals are sentence-bootstrap intervals (:class:`probing.interventions.stats.PairedBootstrap`:
every method is scored on the same resampled sentences, so differences are paired). The
comparisons are made by :mod:`probing.probes.compare`'s engine (one seed: the outer, seed
level changes nothing), every pair of methods (the random order included) in one Holm
family per metric. A method is *most faithful* for a metric only when its difference with
every other method is called (Holm-adjusted p < 0.05, interval excluding 0) and positive.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
from scipy.stats import spearmanr

from probing.attribution.case import MaskedCase
from probing.attribution.faithfulness import curves, importance_order, random_curves
from probing.attribution.integrated_gradients import DEFAULT_BASELINE, DEFAULT_STEPS
from probing.attribution.methods import LAYER_METHODS, METHODS, score_case
from probing.interventions.stats import PairedBootstrap, est_fields
from probing.probes.compare import Replicates, compare, table_dict, with_holm

if TYPE_CHECKING:
    from probing.encoders.bert import TransformersMaskedLM

METRICS = ("aopc_deletion", "aopc_insertion")
UNIT = "attribution cases"


@dataclass
class StudyRows:
    """Per-item data of a study run (what is committed and compared later).

    Attributes:
        curves: per case × method (``random``: mean of the random orders) the AOPCs and
            both curves.
        agreement: per case × layer × method pair, Spearman's ρ over the context words.
        ig: per case, IG's f(x), f(x'), convergence delta and relative gap.
    """

    curves: list[dict] = field(default_factory=list)
    agreement: list[dict] = field(default_factory=list)
    ig: list[dict] = field(default_factory=list)


def _rho(a: np.ndarray, b: np.ndarray) -> float:
    ok = np.isfinite(a) & np.isfinite(b)
    if ok.sum() < 3 or np.ptp(a[ok]) == 0 or np.ptp(b[ok]) == 0:
        return float("nan")
    return float(spearmanr(a[ok], b[ok]).statistic)


def run_study(
    encoder: TransformersMaskedLM,
    cases: Sequence[MaskedCase],
    sent_ids: Sequence[str],
    *,
    steps: int = DEFAULT_STEPS,
    baseline: str = DEFAULT_BASELINE,
    n_random: int = 10,
    seed: int = 0,
    progress: Callable[[int, int], None] | None = None,
) -> StudyRows:
    """Score every case with every method and measure the curves."""
    out = StudyRows()
    for c, (case, sid) in enumerate(zip(cases, sent_ids, strict=True)):
        scores = score_case(encoder, case, baseline=baseline, steps=steps)
        key = {
            "case": c,
            "sent_id": sid,
            "masked": case.words[case.mask_word],
            "target": case.target,
            "n_words": len(case.words),
        }
        out.ig.append(
            {
                **key,
                "f_input": scores.ig.f_input,
                "f_baseline": scores.ig.f_baseline,
                "delta": scores.ig.delta,
                "relative_delta": scores.ig.relative_delta,
            }
        )
        for method in METHODS:
            cv = curves(encoder, case, importance_order(scores.words[method], case))
            out.curves.append(_curve_row(key, method, [cv]))
        rng = np.random.default_rng([seed, c])
        out.curves.append(_curve_row(key, "random", random_curves(encoder, case, n_random, rng)))
        n_layers = next(iter(scores.layers.values())).shape[0]
        for layer in range(n_layers):
            for a, b in itertools.combinations(LAYER_METHODS, 2):
                rho = _rho(scores.layers[a][layer], scores.layers[b][layer])
                out.agreement.append({**key, "layer": layer + 1, "a": a, "b": b, "spearman": rho})
        if progress is not None:
            progress(c + 1, len(cases))
    return out


def _curve_row(key: dict, method: str, cvs: list) -> dict:
    return {
        **key,
        "method": method,
        "aopc_deletion": float(np.mean([cv.aopc_deletion for cv in cvs])),
        "aopc_insertion": float(np.mean([cv.aopc_insertion for cv in cvs])),
        "deletion": np.mean([cv.deletion for cv in cvs], axis=0).tolist(),
        "insertion": np.mean([cv.insertion for cv in cvs], axis=0).tolist(),
    }


def summarise(
    rows: StudyRows, n_boot: int = 1000, seed: int = 0, methods: Sequence[str] | None = None
) -> dict:
    """Means with sentence-bootstrap intervals, paired method comparisons (Holm per metric),
    the most faithful method where the comparisons single one out, and agreement per layer.
    ``methods``: the rows' methods, ``random`` last (default: every fill-mask method)."""
    methods = [*METHODS, "random"] if methods is None else list(methods)
    by = {(r["case"], r["method"]): r for r in rows.curves}
    cases = sorted({r["case"] for r in rows.curves})
    groups = [by[(c, methods[0])]["sent_id"] for c in cases]
    boot = PairedBootstrap(groups, n_boot=n_boot, seed=seed)
    means: list[dict] = []
    comparisons: dict[str, dict] = {}
    most: dict[str, str | None] = {}
    statements: dict[str, str] = {}
    for metric in METRICS:
        reps = {}
        for m in methods:
            values = [by[(c, m)][metric] for c in cases]
            point, draws = boot.mean_draws(values)
            reps[m] = Replicates(m, [point], draws[None], UNIT)
            means.append({"metric": metric, "method": m, **est_fields("mean", boot.mean(values))})
        diffs = with_holm(
            [
                compare(reps[a], reps[b], seed=seed)
                for a, b in itertools.permutations(methods, 2)
                if methods.index(a) < methods.index(b)
            ]
        )
        comparisons[metric] = table_dict(diffs, metric, "every pair of methods, one Holm family")
        most[metric] = _most_faithful(methods, diffs)
        statements[metric] = _statement(metric, most[metric], diffs)
    return {
        "n_cases": len(cases),
        "means": means,
        "comparisons": comparisons,
        "most_faithful": most,
        "statements": statements,
        "agreement": _agreement(rows, boot, cases),
    }


def _most_faithful(methods: list[str], diffs: list) -> str | None:
    """The method whose difference with every other one is called and positive, or None."""
    for m in methods:
        wins = [
            (d.a == m and d.called and d.value > 0) or (d.b == m and d.called and d.value < 0)
            for d in diffs
            if m in (d.a, d.b)
        ]
        if wins and all(wins):
            return m
    return None


def _statement(metric: str, most: str | None, diffs: list) -> str:
    """The one sentence the comparisons support about ``metric`` (made from ``called``)."""
    what = metric.replace("aopc_", "").replace("_", " ") + " AOPC"
    family = f"paired sentence bootstrap, Holm over {len(diffs)} pairs"
    if most is not None:
        return f"{most}: higher {what} than every other method and the random order ({family})."
    beat = sorted(
        {d.a for d in diffs if d.b == "random" and d.called and d.value > 0}
        | {d.b for d in diffs if d.a == "random" and d.called and d.value < 0}
    )
    above = ", ".join(beat) if beat else "none"
    return (
        f"No method has a higher {what} than every other ({family}); above the random "
        f"order: {above}."
    )


def _agreement(rows: StudyRows, boot: PairedBootstrap, cases: list[int]) -> list[dict]:
    out = []
    index = {c: i for i, c in enumerate(cases)}
    keys = sorted({(r["layer"], r["a"], r["b"]) for r in rows.agreement})
    for layer, a, b in keys:
        vals = np.full(len(cases), np.nan)
        for r in rows.agreement:
            if (r["layer"], r["a"], r["b"]) == (layer, a, b):
                vals[index[r["case"]]] = r["spearman"]
        ok = np.isfinite(vals)
        est = boot.ratio(np.where(ok, vals, 0.0), ok.astype(float))
        out.append({"layer": layer, "a": a, "b": b, "n": int(ok.sum()), **est_fields("rho", est)})
    return out
