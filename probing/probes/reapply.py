"""Per-sentence scores of committed runs, by re-applying their saved probes to test features.

The committed ``results/<stem>.json`` keep each layer's score and interval but not which
test sentences each layer got right, which a paired comparison needs. The saved probes
(``results/probes/<stem>.*``) re-applied to the test split's features give exactly that:
:func:`reapplied_counts` returns one :class:`~probing.probes.compare.SentenceCounts` per
layer, and the re-applied score of each layer next to the committed one (they agree to
rounding where the saved probe is the one that was scored: linear probes fitted on all
training words, which every seed shares, and the structural probes).

Stored as ``results/sentence-scores/<stem>.safetensors`` (:func:`save_counts`): the counts
per cell and, in the metadata, each cell's kind and seeds, the unit (data set and split:
cells of one unit are paired) and where the counts came from.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from probing.errors import DataFormatError
from probing.probes.compare import Engine, Replicates, SentenceCounts, layer_table, table_dict
from probing.probes.results import ProbeResults
from probing.probes.runners.base import first_word_of_mwes as _first_word_of_mwes
from probing.probes.saved import SavedProbes
from probing.probes.tasks import get_task

if TYPE_CHECKING:
    from probing.features import Features
    from probing.probes.edge import ArcFeatures

COUNTS_DIR = "sentence-scores"


@dataclass
class StoredCounts:
    """Per-sentence counts of one run's cells (``"layer 3"`` …), all of one unit."""

    unit: str
    n_sentences: int
    cells: dict[str, SentenceCounts]
    info: dict = field(default_factory=dict)

    def replicates(self, engine: Engine, prefix: str = "") -> dict[str, Replicates]:
        return {
            name: engine.replicates(prefix + name, c, self.unit) for name, c in self.cells.items()
        }

    def layers(self, engine: Engine, suffix: str = "", prefix: str = "") -> dict[int, Replicates]:
        """The per-layer cells (``"layer N" + suffix``) as replicates keyed by layer."""
        out = {}
        for name, c in self.cells.items():
            head, _, rest = name.partition(" ")
            if head == "layer" and rest.split(" ", 1)[0].isdigit():
                layer = int(rest.split(" ", 1)[0])
                if name == f"layer {layer}{suffix}":
                    out[layer] = engine.replicates(prefix + name, c, self.unit)
        return out


def unit_of(dataset: str, split: str = "test") -> str:
    return f"{dataset}:{split}"


def reapplied_counts(results: ProbeResults, saved: SavedProbes, test: Features) -> StoredCounts:
    """Counts per layer of the saved probes on ``test`` (:class:`~probing.features.Features`
    of the run's data set and test split, every word: the label field is selected here)."""
    spec = get_task(results.task)
    n_sent = len(test.sent_ids)
    cells: dict[str, SentenceCounts] = {}
    if spec.kind == "structural":
        from probing.probes.structural import TreeSentences

        kind = spec.variant  # distance or depth
        trees = TreeSentences.from_features(test)
        sent = np.array([int(test.sentence_index[r[0]]) for r in trees.rows])
        for layer in saved.layers:
            X = trees.vectors(test.layer(layer))
            counts = np.zeros((1, n_sent, 2))
            for i, (x, h, p) in enumerate(zip(X, trees.heads, trees.punct, strict=True)):
                counts[0, sent[i]] = _tree_hits(kind, saved.predict(layer, x), h, p)
            cells[f"layer {layer}"] = SentenceCounts("ratio", counts, (results.meta.seed or 0,))
        return StoredCounts(unit_of(results.dataset), n_sent, cells)
    if saved.kind != "linear":
        raise DataFormatError(
            f"{results.task}: re-application handles linear and structural probes, not "
            f"{saved.kind} (WSD keeps only some lemmas' centroids: re-run it instead)"
        )
    feats = test.with_label(spec.field_for(results.dataset))
    if spec.per_expression:  # as probe_features selects them
        feats = _first_word_of_mwes({"test": feats})["test"]
    if spec.kind == "edge":
        from probing.probes.edge import arc_features

        feats = arc_features(feats, spec.variant == "product")
    y = np.asarray(feats.labels)
    for layer in saved.layers:
        pred = saved.predict(layer, feats.layer(layer))
        cells[f"layer {layer}"] = SentenceCounts.from_predictions(
            "accuracy", y, [pred], feats.sentence_index, n_sent, seeds=(results.meta.seed or 0,)
        )
    return StoredCounts(unit_of(results.dataset), n_sent, cells)


def refit_seeds(
    results: ProbeResults, saved: SavedProbes, train: Features, test: Features
) -> StoredCounts:
    """Counts of every seed of a run whose seeds drew their own training samples: the
    first seed from its saved probe, the others refitted as the run fitted them (the same
    sample of ``train``, the committed C, the seed as ``random_state``). ``train`` and
    ``test``: Features of the run's training sample and test split (every word)."""
    from probing.probes.linear import LinearProbe

    spec = get_task(results.task)
    first = reapplied_counts(results, saved, test)
    seeds = list(results.meta.seeds or [results.meta.seed or 0])

    def prepared(f: Features) -> Features | ArcFeatures:  # as probe_features prepares a split
        f = f.with_label(spec.field_for(results.dataset))
        if spec.per_expression:
            f = _first_word_of_mwes({"x": f})["x"]
        if spec.kind == "edge":
            from probing.probes.edge import arc_features

            f = arc_features(f, spec.variant == "product")
        return f

    full, te = prepared(train), prepared(test)
    y = np.asarray(te.labels)
    n_sent = len(test.sent_ids)
    cells = {}
    for layer in saved.layers:
        C = float(results.meta.C[str(layer)])
        X_te = te.layer(layer)
        preds = [saved.predict(layer, X_te)]
        for s in seeds[1:]:
            tr = full.subsample(results.meta.max_train_words, seed=s)
            probe = LinearProbe(C=C, max_train_words=None, random_state=s)
            preds.append(probe.fit(tr.layer(layer), tr.labels).predict(X_te))
        cells[f"layer {layer}"] = SentenceCounts.from_predictions(
            "accuracy", y, preds, te.sentence_index, n_sent, seeds
        )
    assert set(cells) == set(first.cells)
    return StoredCounts(first.unit, n_sent, cells)


def _tree_hits(kind: str, pred: np.ndarray, heads: np.ndarray, punct: np.ndarray) -> tuple:
    """(hits, total) of one sentence: UUAS edges or the root, as
    :func:`~probing.probes.structural.score_sentences` counts them (its Spearman, which
    the comparison does not use, is the slow part and is left out)."""
    from probing.probes.structural import gold_edges, mst_edges

    keep = ~np.asarray(punct, bool)
    if kind == "distance":
        gold = gold_edges(heads, keep)
        return len(gold & mst_edges(pred, keep)), len(gold)
    if not keep.any():
        return 0, 0
    root = int(np.flatnonzero(np.asarray(heads, dtype=int) == 0)[0])
    guess = np.flatnonzero(keep)[np.argmin(np.asarray(pred)[keep])]
    return float(guess == root), 1


def agreement(results: ProbeResults, counts: StoredCounts) -> dict[str, list[float]]:
    """Per layer: [re-applied score, committed score] of the headline metric."""
    rows = results.layer_scores()
    out = {}
    for _, row in rows.iterrows():
        name = f"layer {int(row['layer'])}"
        if name in counts.cells:
            out[name] = [float(counts.cells[name].points.mean()), float(row["value"])]
    return out


def layer_comparisons(
    results: ProbeResults, counts: StoredCounts, engine: Engine, note: str = ""
) -> dict:
    """The adjacent-layer and best-vs-each table of a run (JSON form)."""
    reps = counts.layers(engine)
    best = (results.meta.best_layer or {}).get("layer")
    if best is None:
        best = results.meta.get("best_layer_dev")
    table = layer_table(reps, None if best is None else int(best), seed=engine.seed)
    return table_dict(table, results.metric, note)


def save_counts(counts: StoredCounts, path: str | Path, source: str) -> Path:
    """Write ``counts`` as safetensors (int32 counts; metadata JSON)."""
    from safetensors.numpy import save_file

    from probing.io import atomic_write

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tensors, cells = {}, {}
    for i, (name, c) in enumerate(counts.cells.items()):
        key = f"c{i}"
        tensors[key] = np.ascontiguousarray(np.rint(c.counts).astype(np.int32))
        cells[name] = {"tensor": key, "kind": c.kind, "seeds": list(c.seeds)}
    meta = {
        "unit": counts.unit,
        "n_sentences": counts.n_sentences,
        "source": source,
        "cells": cells,
        **counts.info,
    }
    atomic_write(
        path,
        lambda tmp: save_file(tensors, str(tmp), metadata={"info": json.dumps(meta)}),
        suffix=".safetensors",
    )
    return path


def load_counts(path: str | Path) -> StoredCounts:
    """Read what :func:`save_counts` wrote; DataFormatError if unusable."""
    from safetensors import safe_open

    try:
        with safe_open(str(path), "numpy") as f:
            meta = json.loads(f.metadata()["info"])
            cells = {
                name: SentenceCounts(c["kind"], f.get_tensor(c["tensor"]), tuple(c["seeds"]))
                for name, c in meta["cells"].items()
            }
    except (OSError, KeyError, ValueError, TypeError) as exc:
        raise DataFormatError(f"Cannot read the sentence scores {path}: {exc}") from exc
    info = {k: v for k, v in meta.items() if k not in ("unit", "n_sentences", "cells")}
    return StoredCounts(meta["unit"], int(meta["n_sentences"]), cells, info)
