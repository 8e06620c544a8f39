"""Selectivity at two probe capacities: the linear probe and an MLP-1 (issue 27).

    PYTHONPATH=. python results/capacity.py [--model minilm-l6 --model elmo-mini]
        [--task pos] [--train-sentences 2000] [--train-words 20000] [--dev-sentences 500]
        [--seeds 3] [--out results/capacity]

Hewitt & Liang (2019) found that a probe with more capacity memorises more of the control
task, so its selectivity (task − control accuracy) is lower. Here, per layer and seed, the
linear probe (at the C the committed run chose on dev) and Hewitt & Liang's MLP-1
(:class:`probing.probes.mlp.MLPProbe`: 1,000 hidden ReLU units, Adam, the epoch with the
lowest loss on ``--dev-sentences`` dev sentences) are trained on **the same words** — seed s
draws ``--train-words`` words from a fixed seeded sample of ``--train-sentences`` training
sentences — each on the task and on seed s's control labelling (types keyed as the model
sees them, as in the probe runs). Everything is scored on the whole test split; per seed
and test sentence the counts go to ``<out>/<model>__<dataset>__<task>.safetensors`` and the
table to ``.json``: per layer and family accuracy, control accuracy and selectivity, and the
drop ``selectivity(linear) − selectivity(MLP)``, each a paired two-level bootstrap over seeds
and test sentences (:mod:`probing.probes.compare`), with Holm's correction over the layers
for the drops. Checkpoints per seed (``<out>/.<stem>.seed<s>.npz``): a killed run resumes.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

# The same dev-chosen C per layer as the mix study (this script runs from results/).
from mix_members import committed_c

from probing.features import extract_features
from probing.io import atomic_write_json
from probing.models.registry import load_encoder
from probing.probes.compare import METHOD, Difference, SentenceCounts, with_holm
from probing.probes.control import ControlTask, model_type_keys
from probing.probes.linear import LinearProbe
from probing.probes.mlp import MLPProbe, selectivity_by_capacity
from probing.probes.reapply import StoredCounts, save_counts, unit_of
from probing.probes.tasks import get_task

if TYPE_CHECKING:
    from probing.features import Features
    from probing.probes.control import TypeKeys

ROOT = Path(__file__).resolve().parent.parent
FAMILIES = ("linear", "mlp")
KINDS = ("task", "control")


def one_seed(
    train: Features,
    dev: Features,
    test: Features,
    seed: int,
    words: int,
    Cs: dict[int, float],
    type_keys: TypeKeys,
) -> dict:
    """Per layer, family and kind, the (n_test,) right-or-wrong of one seed's probes."""
    tr = train.subsample(words, seed=seed)
    control = ControlTask(seed=seed, type_keys=type_keys).fit(tr.words, tr.labels)
    c_tr, c_dev, c_te = (control.transform(f.words) for f in (tr, dev, test))
    gold = {"task": (tr.labels, dev.labels, test.labels), "control": (c_tr, c_dev, c_te)}
    out: dict[str, np.ndarray] = {}
    for layer in test.layer_ids:
        X, X_dev, X_te = (np.asarray(f.layer(layer), np.float32) for f in (tr, dev, test))
        for kind, (y, y_dev, y_te) in gold.items():
            lin = LinearProbe(C=Cs[layer], max_train_words=None, random_state=seed).fit(X, y)
            out[f"layer {layer} linear {kind}"] = lin.predict(X_te) == np.asarray(y_te)
            mlp = MLPProbe(random_state=seed).fit(X, y, X_dev, y_dev)
            out[f"layer {layer} mlp {kind}"] = mlp.predict(X_te) == np.asarray(y_te)
            out[f"layer {layer} mlp {kind} epochs"] = np.asarray(mlp.epochs_)
    return out


def run(model: str, task: str, args: argparse.Namespace) -> dict:
    spec = get_task(task)
    dataset = spec.default_dataset
    field = spec.field_for(dataset)
    stem = f"{model}__{dataset}__{task}"
    t_cpu, t_wall = time.process_time(), time.time()
    encoder = load_encoder(model)
    train = extract_features(encoder, dataset, "train", field, max_sentences=args.train_sentences)
    dev = extract_features(encoder, dataset, "dev", field, max_sentences=args.dev_sentences)
    test = extract_features(encoder, dataset, "test", field)
    Cs = committed_c(model, dataset, task)
    type_keys = model_type_keys(encoder)
    layers = list(test.layer_ids)
    args.out.mkdir(parents=True, exist_ok=True)
    per_seed, resumed = [], []
    for seed in range(args.seeds):
        ckpt = args.out / f".{stem}.seed{seed}.npz"
        if ckpt.is_file():
            with np.load(ckpt, allow_pickle=False) as z:
                per_seed.append({k: z[k] for k in z.files})
            resumed.append(seed)
            continue
        per_seed.append(one_seed(train, dev, test, seed, args.train_words, Cs, type_keys))
        np.savez(ckpt, **per_seed[-1])
        print(f"{stem}: seed {seed} done ({time.process_time() - t_cpu:.0f} CPU-s)", flush=True)
    seeds = tuple(range(args.seeds))
    sentence, n_sent = test.sentence_index, len(test.sent_ids)
    ones = np.ones(int(test.n_words), dtype=int)
    cells = {
        f"layer {la} {fam} {kind}": SentenceCounts.from_predictions(
            "accuracy",
            ones,
            [p[f"layer {la} {fam} {kind}"].astype(int) for p in per_seed],
            sentence,
            n_sent,
            seeds,
        )
        for la in layers
        for fam in FAMILIES
        for kind in KINDS
    }
    unit = unit_of(dataset)
    save_counts(
        StoredCounts(unit, n_sent, cells, {"train_words": args.train_words}),
        args.out / f"{stem}.safetensors",
        f"results/capacity.py: {args.train_words} training words per seed",
    )
    rows = []
    for la in layers:
        correct = {
            fam: {kind: [p[f"layer {la} {fam} {kind}"] for p in per_seed] for kind in KINDS}
            for fam in FAMILIES
        }
        table = selectivity_by_capacity(correct, sentence, n_sent, seeds, unit=unit)
        epochs = [[int(p[f"layer {la} mlp {k} epochs"]) for p in per_seed] for k in KINDS]
        rows.append({"layer": la, **table, "mlp_epochs": dict(zip(KINDS, epochs, strict=True))})
    drops = with_holm([Difference.from_dict(r["selectivity_drop"]) for r in rows])
    for r, d in zip(rows, drops, strict=True):
        r["selectivity_drop"] = d.as_dict()
    data = {
        "model": model,
        "task": task,
        "dataset": dataset,
        "settings": {
            "train_sentences": args.train_sentences,
            "train_words": args.train_words,
            "dev_sentences": args.dev_sentences,
            "test_sentences": n_sent,
            "test_words": int(test.n_words),
            "seeds": list(seeds),
            "C": {str(k): v for k, v in Cs.items()},
            "mlp": {k: v for k, v in MLPProbe().get_params().items() if k != "random_state"},
        },
        "method": METHOD + "; drops Holm-corrected over the layers",
        "layers": rows,
        "cost": {
            "cpu_s": round(time.process_time() - t_cpu, 1),
            "wall_s": round(time.time() - t_wall, 1),
            "load_average_end": list(os.getloadavg()),
            "seeds_read_from_checkpoints": resumed,
            "note": "this process's cost; seeds read from checkpoints were fitted (and "
            "cost) in an earlier one",
        },
        "command": f"PYTHONPATH=. python results/capacity.py --model {model} --task {task} "
        f"--train-sentences {args.train_sentences} --train-words {args.train_words} "
        f"--dev-sentences {args.dev_sentences} --seeds {args.seeds}",
    }
    atomic_write_json(args.out / f"{stem}.json", data, indent=1)
    for r in rows:
        d = r["selectivity_drop"]
        print(
            f"  layer {r['layer']}: selectivity linear {r['linear']['selectivity']['diff']:.3f}"
            f" mlp {r['mlp']['selectivity']['diff']:.3f}; drop {d['diff'] * 100:+.2f} "
            f"[{d['ci_low'] * 100:+.2f}, {d['ci_high'] * 100:+.2f}] points, p_Holm "
            f"{d['p_holm']:.3f}" + ("  called" if d["called"] else "")
        )
    return data


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", action="append")
    ap.add_argument("--task", default="pos")
    ap.add_argument("--train-sentences", type=int, default=2000)
    ap.add_argument("--train-words", type=int, default=20000)
    ap.add_argument("--dev-sentences", type=int, default=500)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--out", type=Path, default=ROOT / "results" / "capacity")
    args = ap.parse_args(argv)
    for model in args.model or ["minilm-l6", "elmo-mini"]:
        run(model, args.task, args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
