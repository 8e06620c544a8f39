"""The ``dep-distance`` / ``dep-depth`` runs: a structural probe per layer, scored on test.

:func:`run` is the runner of the structural tasks (:mod:`probing.probes.tasks`). Per layer, a
:class:`~probing.probes.structural.StructuralProbe` trained on the train split with early
stopping on dev; scored on test (UUAS or root accuracy, and Spearman) with sentence-bootstrap
intervals. Baselines: the right-branching chain and the same probe on the static vectors.
Dev scores are kept in ``meta`` so that a best layer can be chosen on dev, not test.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from probing.probes.compare import Replicates, SentenceCounts, layer_table, table_dict
from probing.probes.metrics import Estimate, centre_of_gravity, seed_estimate
from probing.probes.results import ProbeResults, typed_table
from probing.probes.runners.base import ProbeProgress
from probing.probes.settings import ProbeSettings
from probing.probes.structural import (
    StructuralProbe,
    TreeSentences,
    bootstrap_scores,
    centre_of_gravity_interval,
    right_branching,
    score_sentences,
    timed,
)
from probing.probes.tasks import Task, get_task

if TYPE_CHECKING:
    from probing.features import Features

DEFAULT_RANK = 128


def run(
    task: Task,
    feats: dict,
    settings: ProbeSettings,
    *,
    model: str,
    dataset: str,
    progress: ProbeProgress | None = None,
    type_keys: object = None,  # the runners' common signature
    keep_probes: dict | None = None,
) -> ProbeResults:
    """The runner of a structural task: :func:`structural_features` with ``settings``'
    seed, seeds and bootstrap replicates."""
    return structural_features(
        feats,
        task.name,
        model=model,
        dataset=dataset,
        progress=progress,
        seed=settings.seed,
        n_boot=settings.n_boot,
        keep_probes=keep_probes,
        seeds=settings.seeds,
    )


def structural_features(
    feats: dict,
    task: str,
    *,
    model: str,
    dataset: str,
    progress: Callable[[str, int, int], None] | None = None,
    seed: int = 0,
    n_boot: int = 1000,
    rank: int = DEFAULT_RANK,
    keep_probes: dict | None = None,
    seeds: int = 1,
) -> ProbeResults:
    """Structural probes of every layer held by ``feats`` (``train``, ``dev``, ``test``).

    Args:
        feats: split -> :class:`~probing.features.Features` carrying ``head`` and ``upos``.
        task: ``dep-distance`` or ``dep-depth``.
        keep_probes: if given, filled with ``{layer or "static": StructuralProbe}``
            (the first seed's).
        seeds: probes per layer with seeds ``seed … seed + seeds - 1`` (their own
            initialisation and batch order); a layer's row is the mean over seeds, its
            interval the bootstrap of that mean (same resampled sentences for every seed)
            and ``sd`` the spread across seeds. The dev choice uses the mean dev score.
    """
    spec = get_task(task)
    kind, headline = spec.variant, spec.metric  # distance: UUAS; depth: root accuracy
    report = progress or (lambda stage, done, total: None)
    clock = timed()
    trees = {k: TreeSentences.from_features(f) for k, f in feats.items()}
    test, dev = feats["test"], feats.get("dev")
    targets = {k: t.targets(kind) for k, t in trees.items() if k != "test"}
    layer_ids = list(test.layer_ids)
    seed_ids = [seed + i for i in range(max(1, int(seeds)))]
    steps = len(layer_ids) * len(seed_ids) + 1
    report("fit", 0, steps)

    def run(get: Callable, s: int = seed) -> tuple:  # (test, dev SentenceScores, probe)
        X = {k: trees[k].vectors(get(f)) for k, f in feats.items()}
        probe = StructuralProbe(kind, rank=rank, random_state=s)
        probe.fit(X["train"], targets["train"], X.get("dev"), targets.get("dev"))
        scores = {
            k: score_sentences(
                kind, [probe.predict(x) for x in X[k]], trees[k].heads, trees[k].punct
            )
            for k in X
            if k != "train"
        }
        return scores["test"], scores.get("dev"), probe

    runs: dict = {}
    static_test, static_dev, probe = run(lambda f: f.static)
    if keep_probes is not None:
        keep_probes["static"] = probe
    report("fit", 1, steps)
    dev_scores, epochs, dev_by_seed = {}, {}, {}
    done = 1
    for layer in layer_ids:
        for s in seed_ids:
            runs[(s, layer)], d, probe = run(lambda f, layer=layer: f.layer(layer), s)
            if s == seed:
                epochs[str(layer)] = probe.epochs_
                if keep_probes is not None:
                    keep_probes[layer] = probe
            if d is not None:
                dev_by_seed.setdefault(str(layer), []).append((d.headline(), d.spearman()))
            done += 1
            report("fit", done, steps)
    dev_scores.update(_mean_dev(dev_by_seed, headline))

    rb = score_sentences(
        kind,
        [right_branching(kind, len(h)) for h in trees["test"].heads],
        trees["test"].heads,
        trees["test"].punct,
    )
    order = [(s, la) for la in layer_ids for s in seed_ids]
    all_scores = [runs[k] for k in order] + [static_test, rb]
    estimates, draws = bootstrap_scores(all_scores, n_boot=n_boot, seed=seed, both=True)
    rows: list[dict] = []
    n_s = len(seed_ids)
    points = np.array(
        [[runs[(s, la)].headline(), runs[(s, la)].spearman()] for la in layer_ids for s in seed_ids]
    ).reshape(len(layer_ids), n_s, 2)
    for la, ests in zip(layer_ids, _seed_means(points, draws, estimates), strict=True):
        for metric, est in zip((headline, "spearman"), ests, strict=True):
            rows.append(_row(model, task, dataset, "structural", la, metric, est, n_s))
    for probe_name, est in (("static", estimates[-2]), ("right-branching", estimates[-1])):
        for metric, key in ((headline, "headline"), ("spearman", "spearman")):
            rows.append(_row(model, task, dataset, probe_name, None, metric, est[key]))
    per_seed = draws[:, : len(layer_ids) * n_s, 0].reshape(-1, len(layer_ids), n_s)
    layer_draws = per_seed.mean(axis=2)  # (n_boot, layers): the seed mean's replicates
    values = [float(points[i, :, 0].mean()) for i in range(len(layer_ids))]
    cog = centre_of_gravity(values, layer_ids)
    best_dev = int(max(dev_scores, key=lambda k: dev_scores[k][headline])) if dev_scores else None
    meta = {
        "layers": layer_ids,
        "seed": seed,
        "seeds": seed_ids,
        "n_boot": n_boot,
        "bootstrap_unit": "sentence",
        "rank": rank,
        "probe_kind": kind,
        "punctuation": "UD PUNCT words left out of UUAS and root accuracy",
        "spearman_lengths": [5, 50],
        "n_train_sentences": len(trees["train"].rows),
        "n_dev_sentences": len(trees["dev"].rows) if dev is not None else 0,
        "n_test_sentences": len(trees["test"].rows),
        "n_train_words": int(sum(len(r) for r in trees["train"].rows)),
        "n_test_words": int(sum(len(r) for r in trees["test"].rows)),
        "eval_split": "test",
        "epochs": epochs,
        "dev_scores": dev_scores,
        "best_layer_dev": best_dev,
        "centre_of_gravity_ci": list(centre_of_gravity_interval(layer_draws, layer_ids)),
        "timing_s": {"fit": clock()},
    }
    reps = {
        la: Replicates(f"layer {la}", points[i, :, 0], per_seed[:, i, :].T, "test", tuple(seed_ids))
        for i, la in enumerate(layer_ids)
    }
    counts = _sentence_counts(test, trees["test"], runs, layer_ids, seed_ids)
    note = f"{n_s} seeds folded in" if n_s > 1 else "one seed"
    comparisons = (
        table_dict(layer_table(reps, best_dev, seed=seed), headline, note)
        if len(reps) > 1
        else None
    )
    return ProbeResults(
        model=model,
        task=task,
        dataset=dataset,
        table=typed_table(rows),
        centre_of_gravity=cog,
        meta=meta,
        comparisons=comparisons,
        sentence_counts=counts,
    )


def _mean_dev(dev_by_seed: dict[str, list], headline: str) -> dict[str, dict[str, float]]:
    """Per layer, the dev (headline, Spearman) averaged over seeds."""
    out = {}
    for layer, pairs in dev_by_seed.items():
        h, r = np.mean(pairs, axis=0)
        out[layer] = {headline: float(h), "spearman": float(r)}
    return out


def _seed_means(points: np.ndarray, draws: np.ndarray, estimates: list) -> list[list[Estimate]]:
    """Per layer, (headline, Spearman) estimates of the mean over seeds: ``points`` (layers,
    seeds, 2), ``draws`` (n_boot, runs, 2) with runs ordered layer-major, seeds inside."""
    n_layers, n_s, _ = points.shape
    out = []
    for i in range(n_layers):
        ests = []
        for k, key in enumerate(("headline", "spearman")):
            d = draws[:, i * n_s : (i + 1) * n_s, k].T  # (seeds, n_boot)
            ests.append(seed_estimate(points[i, :, k], list(d), estimates[i * n_s][key].n))
        out.append(ests)
    return out


def _sentence_counts(
    test: Features,
    trees: TreeSentences,
    runs: dict,
    layer_ids: Sequence[int],
    seed_ids: Sequence[int],
) -> dict:
    """Per layer, SentenceCounts ("ratio": hits, total) of every seed's probe."""
    sent = np.array([int(test.sentence_index[r[0]]) for r in trees.rows], dtype=np.int64)
    counts = {}
    for la in layer_ids:
        c = np.zeros((len(seed_ids), len(test.sent_ids), 2))
        for j, s in enumerate(seed_ids):
            c[j, sent, 0], c[j, sent, 1] = runs[(s, la)].correct, runs[(s, la)].total
        counts[f"layer {la}"] = SentenceCounts("ratio", c, tuple(seed_ids))
    return counts


def _row(
    model: str,
    task: str,
    dataset: str,
    probe: str,
    layer: int | None,
    metric: str,
    est: Estimate,
    seeds: int = 1,
) -> dict:
    return {
        "model": model,
        "task": task,
        "dataset": dataset,
        "split": "test",
        "probe": probe,
        "layer": layer,
        "metric": metric,
        "value": est.value,
        "ci_low": est.ci_low,
        "ci_high": est.ci_high,
        "control": math.nan,
        "selectivity": math.nan,
        "n": est.n,
        "seeds": seeds,
        "sd": est.sd,
    }
