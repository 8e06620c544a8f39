"""ELMo's two one-way language models, taken apart; BERT's fused context beside them.

ELMo's layer ℓ ≥ 1 is the concatenation ``[forward_ℓ ; backward_ℓ]`` of a left-to-right and
a right-to-left LSTM (:class:`probing.encoders.elmo.BiLmOutput`, dim 2P): the forward half
at word i has read only words 0..i, the backward half only words i..n-1. Layer 0 is the
context-free token vector duplicated, ``[x ; x]``, so its halves are equal. BERT has no such
split: every layer attends to both sides.

- :func:`direction_slice` / :func:`direction_vectors` take one half (or both) of an ELMo
  layer array.
- :func:`occurrence_similarity` compares a typed word in two sentences layer by layer: for
  ELMo per direction, for a BERT-family model per layer. With the disambiguating word on one
  side only ("I sat on the bank of the river" vs "The river bank was muddy"), the forward
  half cannot see a "river" that comes after the target.
- :func:`wsd_by_direction` is the measurable version: SemCor WSD by 1-NN to sense centroids
  (:mod:`probing.probes.wsd`, the method of the ELMo paper §5.3) per layer on the forward
  half, the backward half and both.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from probing.errors import TargetNotFoundError

if TYPE_CHECKING:
    from probing.encoders.base import Encoder
    from probing.encoding import ModelInfo
    from probing.features import Features

DIRECTIONS: tuple[str, ...] = ("forward", "backward", "both")


def _check_elmo(info: ModelInfo) -> None:
    if info.direction_blocks != 2:
        raise ValueError(
            f"{info.name} is not an ELMo model: only ELMo's layers are [forward; backward]."
        )


def direction_slice(dim: int, direction: str) -> slice:
    """Columns of an ELMo layer (width ``dim`` = 2P) holding ``direction``'s half."""
    if direction not in DIRECTIONS:
        raise ValueError(f"direction must be one of {DIRECTIONS}, not {direction!r}")
    if dim % 2:
        raise ValueError(f"an ELMo layer has an even width [forward; backward], not {dim}")
    half = dim // 2
    return {"forward": slice(0, half), "backward": slice(half, dim), "both": slice(0, dim)}[
        direction
    ]


def direction_vectors(layers: np.ndarray, direction: str) -> np.ndarray:
    """(..., 2P) ELMo states -> (..., P) forward or backward half, or all 2P for ``both``."""
    return layers[..., direction_slice(layers.shape[-1], direction)]


def _find(words: Sequence[str], target: str) -> int:
    low = target.lower()
    for i, w in enumerate(words):
        if w.lower() == low:
            return i
    raise TargetNotFoundError(f"{target!r} is not a word of: {' '.join(words)}")


def _cos(a: np.ndarray, b: np.ndarray) -> float:
    a, b = a.astype(np.float64), b.astype(np.float64)
    return float(a @ b / max(np.linalg.norm(a) * np.linalg.norm(b), 1e-12))


def occurrence_similarity(
    encoder: Encoder, target: str, sentence_a: str, sentence_b: str
) -> pd.DataFrame:
    """Cosine similarity of ``target`` in two sentences, per layer (and per ELMo direction).

    Returns:
        One row per (layer, view): ``model``, ``layer``, ``layer_name``, ``view``
        (``forward``/``backward``/``both`` for ELMo, ``fused`` for the BERT family),
        ``similarity``, and ``sees`` (which context the view has read at the target).

    Raises:
        TargetNotFoundError: the word is not in one of the sentences.
    """
    ea, eb = encoder.encode([sentence_a, sentence_b])
    ia, ib = _find(ea.words, target), _find(eb.words, target)
    info = encoder.info
    names = info.layer_names or tuple(str(i) for i in range(ea.n_layer_arrays))
    rows = []
    views = DIRECTIONS if info.direction_blocks == 2 else ("fused",)
    sees = {
        "forward": "left context",
        "backward": "right context",
        "both": "both sides",
        "fused": "both sides",
    }
    for layer in range(ea.n_layer_arrays):
        for view in views:
            va, vb = ea.layers[layer, ia], eb.layers[layer, ib]
            if view != "fused":
                va, vb = direction_vectors(va, view), direction_vectors(vb, view)
            rows.append(
                {
                    "model": info.name,
                    "layer": layer,
                    "layer_name": names[layer],
                    "view": view,
                    "similarity": _cos(va, vb),
                    "sees": "no context" if layer == 0 else sees[view],
                }
            )
    return pd.DataFrame(rows)


def wsd_by_direction(
    encoder_or_name: Encoder | str,  # an ELMo one or its registry name
    *,
    max_train_sentences: int | None = None,
    max_test_sentences: int | None = None,
    seed: int = 0,
    n_boot: int = 1000,
    progress: Callable[[str, int, int], None] | None = None,
) -> pd.DataFrame:
    """SemCor WSD F1 (1-NN to sense centroids, WordNet first-sense backoff) per layer and
    ELMo direction, as :func:`probing.probes.run.probe_layers` scores ``wsd``.

    Features are the cached SemCor word vectors (:func:`probing.features.extract_features`);
    each direction is a column slice of the same vectors. Intervals: bootstrap over test
    sentences (as the word-level WSD results).

    Returns:
        Columns ``model, layer, direction, metric, value, ci_low, ci_high, n``; metrics
        ``f1``, ``precision``, ``recall``.
    """
    from probing.features import extract_features
    from probing.models.registry import load_encoder
    from probing.probes.metrics import bootstrap_ci
    from probing.probes.wsd import NearestSenseClassifier, first_sense_backoff, lemma_key

    encoder = load_encoder(encoder_or_name) if isinstance(encoder_or_name, str) else encoder_or_name
    _check_elmo(encoder.info)
    report = progress or (lambda stage, done, total: None)
    caps = {"train": max_train_sentences, "test": max_test_sentences}
    feats = {}
    for split in ("train", "test"):
        f = extract_features(
            encoder,
            "semcor",
            split,
            "sense",
            max_sentences=caps[split],
            progress=lambda d, t, split=split: report(f"extract {split}", d, t),
        )
        # One instance per multi-word expression (its first word), as in probe_layers.
        feats[split] = f.select(f.fields["mwe"] != "I") if "mwe" in f.fields else f
    train, test = feats["train"], feats["test"]
    k_tr = np.array([lemma_key(s) for s in train.labels])
    k_te = np.array([lemma_key(s) for s in test.labels])
    backoff = first_sense_backoff()
    rows = []
    preds: dict[tuple[int, str], np.ndarray] = {}
    steps = len(test.layer_ids) * len(DIRECTIONS)
    for li, layer in enumerate(test.layer_ids):
        X_tr, X_te = train.layer(layer), test.layer(layer)
        for di, direction in enumerate(DIRECTIONS):
            sl = direction_slice(X_tr.shape[1], direction)
            clf = NearestSenseClassifier(backoff).fit(X_tr[:, sl], train.labels, k_tr)
            pred = preds[(int(layer), direction)] = clf.predict(X_te[:, sl], k_te)
            for metric in ("f1", "precision", "recall"):
                est = bootstrap_ci(
                    test.labels, pred, metric, n_boot=n_boot, seed=seed, groups=test.sentence_index
                )
                rows.append(
                    {
                        "model": encoder.info.name,
                        "layer": int(layer),
                        "direction": direction,
                        "metric": metric,
                        "value": est.value,
                        "ci_low": est.ci_low,
                        "ci_high": est.ci_high,
                        "n": est.n,
                    }
                )
            report("fit", li * len(DIRECTIONS) + di + 1, steps)
    table = pd.DataFrame(rows)
    table.attrs["paired"] = _paired(preds, test, seed, n_boot)
    return table


def _paired(preds: dict, test: Features, seed: int, n_boot: int) -> list[dict]:
    """F1 differences both − forward, both − backward, forward − backward per contextual
    layer, by a paired bootstrap over test sentences (each sentence's items resampled
    together for both views)."""
    from probing.probes.metrics import bootstrap_ci, precision_recall_f1

    def f1(y: np.ndarray, p: np.ndarray) -> float:
        return float(precision_recall_f1(y, p)[2])

    out = []
    for layer in sorted({k[0] for k in preds} - {0}):
        for a, b in (("both", "forward"), ("both", "backward"), ("forward", "backward")):
            pair = np.stack([preds[(layer, a)], preds[(layer, b)]], axis=1)
            est = bootstrap_ci(
                test.labels,
                pair,
                lambda y, p: f1(y, p[:, 0]) - f1(y, p[:, 1]),
                n_boot=n_boot,
                seed=seed,
                groups=test.sentence_index,
            )
            out.append(
                {
                    "layer": layer,
                    "a": a,
                    "b": b,
                    "f1_difference": est.value,
                    "ci_low": est.ci_low,
                    "ci_high": est.ci_high,
                }
            )
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m probing.analyses.elmo_directions --model elmo-mini --out results/``:
    write ``<model>__semcor__wsd-direction.csv`` and ``.json``."""
    import argparse
    import json
    import shlex
    import sys
    import time
    from pathlib import Path

    from probing.shipped import add_overwrite_argument, output_folder, refuse_shipped

    p = argparse.ArgumentParser(prog="python -m probing.analyses.elmo_directions")
    p.add_argument("--model", default="elmo-mini")
    p.add_argument("--out", type=output_folder, default="results")
    p.add_argument("--max-train-sentences", type=int, default=None)
    p.add_argument("--max-test-sentences", type=int, default=None)
    p.add_argument("--n-boot", type=int, default=1000)
    p.add_argument("--seed", type=int, default=0)
    add_overwrite_argument(p)
    args = p.parse_args(argv)
    stem = Path(args.out) / f"{args.model}__semcor__wsd-direction"
    refuse_shipped([Path(f"{stem}.csv"), Path(f"{stem}.json")], args.overwrite)
    t0 = time.perf_counter()
    table = wsd_by_direction(
        args.model,
        max_train_sentences=args.max_train_sentences,
        max_test_sentences=args.max_test_sentences,
        seed=args.seed,
        n_boot=args.n_boot,
    )
    stem.parent.mkdir(parents=True, exist_ok=True)
    table.to_csv(f"{stem}.csv", index=False, float_format="%.6g")
    meta = {
        "command": "python -m probing.analyses.elmo_directions "
        + " ".join(shlex.quote(a) for a in (sys.argv[1:] if argv is None else argv)),
        "method": "1-NN to SemCor training sense centroids, WordNet first-sense backoff",
        "bootstrap_unit": "sentence",
        "n_boot": args.n_boot,
        "seed": args.seed,
        "eval_split": "test",
        "timing_s": round(time.perf_counter() - t0, 1),
        "paired_f1_differences": table.attrs.get("paired", []),
    }
    Path(f"{stem}.json").write_text(
        json.dumps({"meta": meta, "results": table.to_dict("records")}, indent=1) + "\n",
        encoding="utf-8",
    )
    f1 = table[table["metric"] == "f1"]
    for _, r in f1.iterrows():
        print(
            f"layer {r['layer']} {r['direction']:>8}  F1 {r['value']:.3f} "
            f"[{r['ci_low']:.3f}, {r['ci_high']:.3f}]"
        )
    for d in table.attrs.get("paired", []):
        print(
            f"layer {d['layer']} {d['a']} - {d['b']}: {d['f1_difference']:+.3f} "
            f"[{d['ci_low']:+.3f}, {d['ci_high']:+.3f}]"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
