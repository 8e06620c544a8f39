"""Float16 feature storage, measured: the committed probes on float32 vs float16 vectors.

    PYTHONPATH=. python bench/float16_features.py [--model minilm-l6 --task pos] [--sentences N]
    PYTHONPATH=. python bench/float16_features.py --refit [--train-sentences 1000] [--layers 3,4,5,6]

The feature cache stores float16 (clipped to ±65504). For each layer this encodes the
test split in float32 (the encoder's own ``encode``), rounds a copy to float16 exactly as
the cache does (:func:`probing.encoding.to_float16`), re-applies the committed saved probe
to both, and reports the paired accuracy difference (float32 − float16) with its 95 %
interval over test sentences (:mod:`probing.probes.compare`), how many predictions
change, the largest rounding error and how many values reach float16's range (clipped).
Prints one JSON line per layer.

``--refit`` measures the storage end to end instead, for every embedded model (minilm-l6,
minilm-l6-mlm, elmo-mini): per layer, two linear probes at one fixed C (the committed
minilm-l6 / elmo-mini run's dev-chosen C; minilm-l6-mlm takes minilm-l6's), one fitted on the
first ``--train-sentences`` training sentences' float32 vectors and one on the same words
rounded to float16, each scored on the test split in its own precision; the paired
difference (float32 − float16) with its 95 % interval, and the float16-trained probe on
float32 test vectors (what re-scoring a cached run on float32 vectors gives).

``--floor-effect``: the committed minilm-l6 layer-6 probes (fitted before the scale floor)
with their near-constant dimension held at its mean vs as committed (:func:`floor_effect`).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from probing.datasets import read_sentences
from probing.encoding import to_float16
from probing.models.registry import load_encoder
from probing.probes.compare import Engine, SentenceCounts
from probing.probes.linear import LinearProbe
from probing.probes.saved import SavedProbes
from probing.probes.tasks import get_task

if TYPE_CHECKING:
    from probing.datasets import Sentence
    from probing.encoders.base import Encoder

FLOAT16_MAX = 65504.0


def float32_layers(
    encoder: Encoder, sentences: Sequence[Sentence], batch_size: int = 32
) -> list[np.ndarray]:
    """Per sentence, float32 (n_layers + 1, n_words, dim) word vectors (first piece)."""
    out = []
    for i in range(0, len(sentences), batch_size):
        batch = [list(s.words) for s in sentences[i : i + batch_size]]
        for enc in encoder.encode(batch, pooling="first", windowed=True, batch_size=len(batch)):
            out.append(np.asarray(enc.layers, dtype=np.float32))
    return out


def measure(model: str, task: str, n_sentences: int | None, results_dir: Path) -> list[dict]:
    spec = get_task(task)
    dataset = spec.default_dataset
    field = spec.field_for(dataset)
    saved = SavedProbes.load(results_dir / "probes" / f"{model}__{dataset}__{task}")
    sentences = list(read_sentences(dataset, "test"))[:n_sentences]
    encoder = load_encoder(model)
    layers32 = float32_layers(encoder, sentences)
    labels = [np.array(["" if v is None else str(v) for v in s.labels[field]]) for s in sentences]
    keep = [lab != "" for lab in labels]
    y = np.concatenate([lab[k] for lab, k in zip(labels, keep, strict=True)])
    sent = np.concatenate([np.full(int(k.sum()), i) for i, k in enumerate(keep)])
    engine = Engine(n_boot=1000, seed=0)
    rows = []
    for layer in saved.layers:
        x32 = np.concatenate([L[layer][k] for L, k in zip(layers32, keep, strict=True)])
        x16 = to_float16(x32).astype(np.float32)
        p32, p16 = saved.predict(layer, x32), saved.predict(layer, x16)
        c32, c16 = (
            SentenceCounts.from_predictions("accuracy", y, [p], sent, len(sentences))
            for p in (p32, p16)
        )
        d = engine.compare(
            engine.replicates("float32", c32, "t"), engine.replicates("float16", c16, "t")
        )
        rows.append(
            {
                "model": model,
                "task": task,
                "layer": layer,
                "n_words": len(y),
                "n_sentences": len(sentences),
                "acc_float32": float(c32.points[0]),
                "acc_float16": float(c16.points[0]),
                "diff": d.value,
                "ci_low": d.ci_low,
                "ci_high": d.ci_high,
                "p": d.p,
                "changed_predictions": int(np.sum(p32 != p16)),
                "max_abs_rounding": float(np.max(np.abs(x32 - x16))),
                "max_abs_value": float(np.max(np.abs(x32))),
                "clipped_values": int(np.sum(np.abs(x32) > FLOAT16_MAX)),
            }
        )
        print(json.dumps(rows[-1]), flush=True)
    return rows


def committed_c(model: str, task: str, results_dir: Path) -> dict[int, float]:
    """Per layer, the C the committed run chose on dev (minilm-l6-mlm: minilm-l6's run)."""
    name = "minilm-l6" if model == "minilm-l6-mlm" else model
    dataset = get_task(task).default_dataset
    data = json.loads((results_dir / f"{name}__{dataset}__{task}.json").read_text())
    return {int(k): float(v) for k, v in data["meta"]["C"].items()}


def measure_refit(
    model: str,
    task: str,
    n_train: int,
    n_test: int | None,
    results_dir: Path,
    layers: list[int] | None = None,
) -> list[dict]:
    """Float32 vs float16 storage end to end (see the module doc); ``layers``: only these
    (default every layer)."""
    spec = get_task(task)
    dataset = spec.default_dataset
    field = spec.field_for(dataset)
    encoder = load_encoder(model)
    Cs = committed_c(model, task, results_dir)

    def split(
        name: str, n: int | None
    ) -> tuple[list[np.ndarray], list[np.ndarray], np.ndarray, np.ndarray, int]:
        sents = list(read_sentences(dataset, name))[:n]
        layers = float32_layers(encoder, sents)
        labels = [np.array(["" if v is None else str(v) for v in s.labels[field]]) for s in sents]
        keep = [lab != "" for lab in labels]
        y = np.concatenate([lab[k] for lab, k in zip(labels, keep, strict=True)])
        sent = np.concatenate([np.full(int(k.sum()), i) for i, k in enumerate(keep)])
        return layers, keep, y, sent, len(sents)

    tr_layers, tr_keep, y_tr, _, _ = split("train", n_train)
    te_layers, te_keep, y_te, sent, n_sent = split("test", n_test)
    engine = Engine(n_boot=1000, seed=0)
    rows = []
    for layer in layers if layers is not None else range(tr_layers[0].shape[0]):
        x32_tr = np.concatenate([L[layer][k] for L, k in zip(tr_layers, tr_keep, strict=True)])
        x32_te = np.concatenate([L[layer][k] for L, k in zip(te_layers, te_keep, strict=True)])
        x16_tr, x16_te = (to_float16(x).astype(np.float32) for x in (x32_tr, x32_te))
        C = Cs[layer]
        p32 = LinearProbe(C=C, max_train_words=None).fit(x32_tr, y_tr)
        p16 = LinearProbe(C=C, max_train_words=None).fit(x16_tr, y_tr)
        preds = {
            "float32": p32.predict(x32_te),
            "float16": p16.predict(x16_te),
            "float16 probe on float32": p16.predict(x32_te),
        }
        reps = {
            k: engine.replicates(
                k, SentenceCounts.from_predictions("accuracy", y_te, [p], sent, n_sent), "t"
            )
            for k, p in preds.items()
        }
        d = engine.compare(reps["float32"], reps["float16"])
        x = engine.compare(reps["float16 probe on float32"], reps["float16"])
        rows.append(
            {
                "model": model,
                "task": task,
                "layer": layer,
                "C": C,
                "n_train_words": len(y_tr),
                "n_test_words": len(y_te),
                "n_test_sentences": n_sent,
                "acc_float32": reps["float32"].value,
                "acc_float16": reps["float16"].value,
                "diff": d.value,
                "ci_low": d.ci_low,
                "ci_high": d.ci_high,
                "p": d.p,
                "changed_predictions": int(np.sum(preds["float32"] != preds["float16"])),
                "f16_probe_on_f32_minus_f16": x.value,
                "f16_probe_ci": [x.ci_low, x.ci_high],
                "f16_probe_changed": int(
                    np.sum(preds["float16 probe on float32"] != preds["float16"])
                ),
                "near_constant_dims": int(np.sum(p16.scale_.cpu().numpy() == 1.0)),
                "max_abs_value": float(max(np.abs(x32_tr).max(), np.abs(x32_te).max())),
                "clipped_values": int(
                    np.sum(np.abs(x32_tr) > FLOAT16_MAX) + np.sum(np.abs(x32_te) > FLOAT16_MAX)
                ),
            }
        )
        print(json.dumps(rows[-1]), flush=True)
    return rows


def floor_effect(results_dir: Path) -> list[dict]:
    """The committed minilm-l6 layer-6 probes with their near-constant dimensions (scale
    below the floor, :data:`probing.probes.linear.NEAR_CONSTANT_SCALE`) held at the training
    mean, as a scale of 1 makes them, vs as committed; paired over test sentences."""
    from probing.features import extract_features
    from probing.probes.linear import NEAR_CONSTANT_SCALE

    encoder, engine, rows = load_encoder("minilm-l6"), Engine(n_boot=1000, seed=0), []
    for task in ("pos", "supersense", "ptb-pos"):
        spec = get_task(task)
        dataset = spec.default_dataset
        test = extract_features(encoder, dataset, "test", spec.field_for(dataset))
        if task == "supersense":  # one instance per multi-word expression, as the runs
            test = test.select(test.fields["mwe"] != "I")
        saved = SavedProbes.load(results_dir / "probes" / f"minilm-l6__{dataset}__{task}")
        mean, scale = (np.asarray(saved.tensors[f"6.{k}"]) for k in ("mean", "scale"))
        dims = np.flatnonzero(scale < NEAR_CONSTANT_SCALE)
        x = np.asarray(test.layer(6), np.float32)
        held = x.copy()
        held[:, dims] = mean[dims]
        a, b = saved.predict(6, x), saved.predict(6, held)
        n = len(test.sent_ids)
        reps = [
            engine.replicates(
                k,
                SentenceCounts.from_predictions(
                    "accuracy", test.labels, [p], test.sentence_index, n
                ),
                "t",
            )
            for k, p in (("held", b), ("committed", a))
        ]
        d = engine.compare(*reps)
        rows.append(
            {
                "task": task,
                "dims": dims.tolist(),
                "committed": reps[1].value,
                "held_at_mean": reps[0].value,
                "diff": d.value,
                "ci_low": d.ci_low,
                "ci_high": d.ci_high,
                "p": d.p,
                "changed": int(np.sum(a != b)),
            }
        )
        print(json.dumps(rows[-1]), flush=True)
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", action="append", help="default: minilm-l6 and elmo-mini")
    ap.add_argument("--task", default="pos")
    ap.add_argument("--sentences", type=int, default=None, help="test sentences (default all)")
    ap.add_argument("--results", type=Path, default=Path("results"))
    ap.add_argument("--refit", action="store_true", help="float32 vs float16 end to end")
    ap.add_argument("--train-sentences", type=int, default=1000, help="with --refit")
    ap.add_argument(
        "--layers",
        type=lambda t: [int(x) for x in t.split(",") if x],
        default=None,
        help="with --refit: only these layers, e.g. 3,4,5,6 (default all)",
    )
    ap.add_argument(
        "--floor-effect",
        action="store_true",
        help="the scale floor's effect on the committed layer-6 probes",
    )
    args = ap.parse_args(argv)
    if args.floor_effect:
        floor_effect(args.results)
        return 0
    if args.refit:
        for model in args.model or ["minilm-l6", "minilm-l6-mlm", "elmo-mini"]:
            measure_refit(
                model, args.task, args.train_sentences, args.sentences, args.results, args.layers
            )
        return 0
    for model in args.model or ["minilm-l6", "elmo-mini"]:
        measure(model, args.task, args.sentences, args.results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
