"""The ``dep-distance`` / ``dep-depth`` runs: a structural probe per layer, scored on test.

Called by :func:`probing.probes.run.probe_features` for structural tasks. Per layer, a
:class:`~probing.probes.structural.StructuralProbe` trained on the train split with early
stopping on dev; scored on test (UUAS or root accuracy, and Spearman) with sentence-bootstrap
intervals. Baselines: the right-branching chain and the same probe on the static vectors.
Dev scores are kept in ``meta`` so that a best layer can be chosen on dev, not test.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from probing.probes.compare import Replicates, SentenceCounts, layer_table, table_dict
from probing.probes.metrics import Estimate, centre_of_gravity
from probing.probes.run import ProbeResults, typed_table
from probing.probes.structural import (
    SentenceScores,
    StructuralProbe,
    TreeSentences,
    bootstrap_scores,
    centre_of_gravity_interval,
    right_branching,
    score_sentences,
    timed,
)

KINDS = {"dep-distance": "distance", "dep-depth": "depth"}
HEADLINE = {"distance": "uuas", "depth": "root_accuracy"}
DEFAULT_RANK = 128


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
) -> ProbeResults:
    """Structural probes of every layer held by ``feats`` (``train``, ``dev``, ``test``).

    Args:
        feats: split -> :class:`~probing.features.Features` carrying ``head`` and ``upos``.
        task: ``dep-distance`` or ``dep-depth``.
        keep_probes: if given, filled with ``{layer or "static": StructuralProbe}``.
    """
    kind = KINDS[task]
    report = progress or (lambda stage, done, total: None)
    clock = timed()
    trees = {k: TreeSentences.from_features(f) for k, f in feats.items()}
    test, dev = feats["test"], feats.get("dev")
    targets = {k: t.targets(kind) for k, t in trees.items() if k != "test"}
    layer_ids = list(test.layer_ids)
    steps = len(layer_ids) + 1
    report("fit", 0, steps)

    def run(get: Callable) -> tuple[SentenceScores, SentenceScores | None, StructuralProbe]:  # noqa: ANN001
        X = {k: trees[k].vectors(get(f)) for k, f in feats.items()}
        probe = StructuralProbe(kind, rank=rank, random_state=seed)
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
    dev_scores, epochs = {}, {}
    for i, layer in enumerate(layer_ids, start=2):
        runs[layer], d, probe = run(lambda f, layer=layer: f.layer(layer))
        epochs[str(layer)] = probe.epochs_
        if d is not None:
            dev_scores[str(layer)] = {HEADLINE[kind]: d.headline(), "spearman": d.spearman()}
        if keep_probes is not None:
            keep_probes[layer] = probe
        report("fit", i, steps)

    rb = score_sentences(
        kind, [right_branching(kind, len(h)) for h in trees["test"].heads],
        trees["test"].heads, trees["test"].punct,
    )  # fmt: skip
    all_scores = [runs[la] for la in layer_ids] + [static_test, rb]
    estimates, draws = bootstrap_scores(all_scores, n_boot=n_boot, seed=seed)
    rows: list[dict] = []
    headline = HEADLINE[kind]
    for probe_name, layer, est in [
        ("structural", la, e) for la, e in zip(layer_ids, estimates, strict=False)
    ] + [("static", None, estimates[-2]), ("right-branching", None, estimates[-1])]:
        for metric, key in ((headline, "headline"), ("spearman", "spearman")):
            rows.append(_row(model, task, dataset, probe_name, layer, metric, est[key]))
    layer_draws = draws[:, : len(layer_ids)]
    values = [runs[la].headline() for la in layer_ids]
    cog = centre_of_gravity(values, layer_ids)
    best_dev = int(max(dev_scores, key=lambda k: dev_scores[k][headline])) if dev_scores else None
    meta = {
        "layers": layer_ids,
        "seed": seed,
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
    reps = {la: Replicates(f"layer {la}", [values[i]], [layer_draws[:, i]], "test", (seed,))
            for i, la in enumerate(layer_ids)}  # fmt: skip
    sent = np.array([int(test.sentence_index[r[0]]) for r in trees["test"].rows], dtype=np.int64)
    counts = {}
    for la in layer_ids:
        c = np.zeros((1, len(test.sent_ids), 2))
        c[0, sent, 0], c[0, sent, 1] = runs[la].correct, runs[la].total
        counts[f"layer {la}"] = SentenceCounts("ratio", c, (seed,))
    comparisons = (
        table_dict(layer_table(reps, best_dev, seed=seed), headline, "one seed")
        if len(reps) > 1 else None
    )  # fmt: skip
    return ProbeResults(
        model=model, task=task, dataset=dataset, table=typed_table(rows),
        centre_of_gravity=cog, meta=meta, comparisons=comparisons, sentence_counts=counts,
    )  # fmt: skip


def _row(model, task, dataset, probe, layer, metric, est: Estimate) -> dict:  # noqa: ANN001
    return {
        "model": model, "task": task, "dataset": dataset, "split": "test", "probe": probe,
        "layer": layer, "metric": metric, "value": est.value, "ci_low": est.ci_low,
        "ci_high": est.ci_high, "control": math.nan, "selectivity": math.nan, "n": est.n,
    }  # fmt: skip
