"""The probe lens: every saved probe applied to one sentence, at every layer.

Given an :class:`~probing.encoding.Encoding` and the probes saved with a model's results
(:mod:`probing.probes.saved`), :func:`apply_lens` gives, per task, word and layer, what the
probe predicts and how sure it is, and the first layer from which the prediction stays the
top layer's answer. Structural probes give a tree per layer (the minimum spanning tree of
the predicted distances; the root = the word of least predicted depth). With a gold UD
sentence, each answer is marked right or wrong, and ``deprel`` is probed on the gold arcs
(an edge probe needs a head for every word; a typed sentence has none).

Vectors are rounded to float16 before probing, as the feature cache stores them for
training, so a sentence from the data set gets exactly the vectors its probe saw.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from probing.probes.edge import base_relation
from probing.probes.saved import SavedProbes, probe_dir
from probing.probes.structural import gold_edges, mst_edges

LENS_TASKS = ("pos", "xpos", "deprel", "supersense", "dep-distance", "dep-depth")
GOLD_FIELDS = {"pos": "upos", "xpos": "xpos", "deprel": "deprel"}


def saved_probes(results_dir: str | Path, model: str) -> dict[str, SavedProbes]:
    """The probes saved for ``model`` in ``results_dir/probes`` (task -> probes)."""
    from probing.probes.store import output_stem

    found = {}
    folder = probe_dir(results_dir)
    for task in LENS_TASKS:
        for dataset in ("ud-ewt", "semcor"):
            stem = folder / output_stem(model, dataset, task)
            if Path(str(stem) + ".json").is_file():
                found[task] = SavedProbes.load(stem)
                break
    return found


@dataclass
class LensResult:
    """What the probes say about one sentence.

    Attributes:
        words: the sentence's words.
        labels: tidy DataFrame, one row per (task, word, layer) of a labelling probe:
            task, word_index, word, layer, label, confidence, final, first_layer, gold,
            correct (gold/correct empty without gold).
        trees: task -> layer -> undirected edges (i, j) of the predicted tree
            (``dep-distance``), and ``"root"`` -> layer -> predicted root index
            (``dep-depth``).
        gold_edges: the gold tree's edges (None without gold).
        missing: lens tasks with no saved probe.
    """

    words: list[str]
    labels: pd.DataFrame
    trees: dict[str, dict[int, object]] = field(default_factory=dict)
    gold_edges: set | None = None
    gold_root: int | None = None
    missing: list[str] = field(default_factory=list)


def apply_lens(
    encoding,  # noqa: ANN001 - probing.encoding.Encoding
    probes: dict[str, SavedProbes],
    gold: dict[str, list[str]] | None = None,
) -> LensResult:
    """Apply every probe in ``probes`` to every layer of ``encoding``.

    Args:
        encoding: the sentence through the probes' model (same pooling as their training).
        probes: task -> :class:`SavedProbes` (see :func:`saved_probes`).
        gold: UD labels of the sentence (``upos``, ``xpos``, ``head``, ``deprel``), or None.
    """
    layers = np.asarray(encoding.layers, dtype=np.float16).astype(np.float32)
    words = list(encoding.words)
    frames, trees = [], {}
    heads = [int(h) for h in gold["head"]] if gold and "head" in gold else None
    for task, probe in probes.items():
        if probe.kind == "linear":
            if task == "deprel":
                if heads is None:
                    continue
                frames.append(_deprel(probe, layers, words, heads, gold))
            else:
                truth = gold.get(GOLD_FIELDS.get(task, "")) if gold else None
                frames.append(_labels(task, probe, layers, words, list(range(len(words))), truth))
        elif probe.kind == "structural-distance":
            trees["dep-distance"] = {
                la: mst_edges(probe.predict(la, layers[la])) for la in probe.layers
            }
        else:
            trees["dep-depth"] = {
                la: int(np.argmin(probe.predict(la, layers[la]))) for la in probe.layers
            }
    table = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    return LensResult(
        words=words,
        labels=table,
        trees=trees,
        gold_edges=None if heads is None else gold_edges(heads),
        gold_root=None if heads is None else heads.index(0),
        missing=[t for t in LENS_TASKS if t not in probes],
    )


def _labels(task, probe, layers, words, rows, truth, shown=None) -> pd.DataFrame:  # noqa: ANN001
    """Per layer predictions of a linear probe for the instances ``rows``."""
    out = []
    per_layer = {}
    for la in probe.layers:
        X = layers[la][rows] if not callable(rows) else rows(la)
        proba = probe.predict_proba(la, X)
        per_layer[la] = (probe.classes[proba.argmax(1)], proba.max(1))
    top = max(per_layer)
    final = per_layer[top][0]
    first = _first_stable(per_layer, final)
    idx = shown if shown is not None else rows
    for la, (pred, conf) in per_layer.items():
        for k, i in enumerate(idx):
            g = None if truth is None else truth[k]
            out.append(
                {
                    "task": task, "word_index": int(i), "word": words[i], "layer": la,
                    "label": str(pred[k]), "confidence": float(conf[k]),
                    "final": str(final[k]), "first_layer": int(first[k]),
                    "gold": g, "correct": None if g is None else bool(pred[k] == g),
                }
            )  # fmt: skip
    return pd.DataFrame(out)


def _deprel(probe, layers, words, heads, gold) -> pd.DataFrame:  # noqa: ANN001
    deps = [i for i, h in enumerate(heads) if h > 0]
    hd = [heads[i] - 1 for i in deps]
    truth = [base_relation(gold["deprel"][i]) for i in deps] if "deprel" in gold else None
    pair = lambda la: np.concatenate([layers[la][hd], layers[la][deps]], axis=1)  # noqa: E731
    return _labels("deprel", probe, layers, words, pair, truth, shown=deps)


def _first_stable(per_layer: dict[int, tuple], final: np.ndarray) -> np.ndarray:
    """Per instance, the lowest layer from which every higher layer predicts ``final``."""
    order = sorted(per_layer)
    first = np.full(len(final), order[-1])
    for la in reversed(order):
        same = per_layer[la][0] == final
        still = same & (first == _next(order, la))
        first[still] = la
    return first


def _next(order: list[int], la: int) -> int:
    i = order.index(la)
    return order[i + 1] if i + 1 < len(order) else order[-1]
