"""Scalar mixes against their members, on the same training words, with seeds (issue 27).

    PYTHONPATH=. python results/mix_members.py [--model minilm-l6 --model elmo-mini]
        [--task pos] [--train-sentences 2000] [--train-words 20000] [--dev-sentences 500]
        [--seeds 3] [--out results/mixes]

The committed runs train each single-layer probe on all training words but each scalar mix
on at most 50,000 (its layers are held in memory at once), so a mix below its best member
measured the training gap, not the layers. Here every member and every mix of a seed is
trained on **the same words**: seed s draws ``--train-words`` words from a fixed seeded
sample of ``--train-sentences`` training sentences; per layer a linear probe at the C the
committed run chose on dev (one per layer), and Tenney et al.'s cumulative mixes over layers
0..l (8 epochs, the best epoch on ``--dev-sentences`` dev sentences). Everything is scored
on the whole test split; per seed and test sentence the counts go to
``<out>/<model>__<dataset>__<task>.safetensors`` and the table to ``.json``:
each cumulative mix − its best member (the member with the best test accuracy: the
strictest comparison for the mix, not a choice that is reported), paired two-level bootstrap
over seeds and test sentences (:mod:`probing.probes.compare`), and Tenney's centre of
gravity from the mixes beside the running best of the members, with their paired
difference. Checkpoints per seed (``<out>/.<stem>.seed<s>.npz``): a killed run resumes.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from probing.features import extract_features
from probing.io import atomic_write_json
from probing.models.registry import load_encoder
from probing.probes.compare import (
    METHOD,
    Engine,
    SentenceCounts,
    centre_of_gravity_replicates,
    compare,
    mix_vs_best_member,
)
from probing.probes.linear import LinearProbe
from probing.probes.mix import ScalarMixProbe, layer_stats
from probing.probes.reapply import StoredCounts, save_counts, unit_of
from probing.probes.tasks import get_task

if TYPE_CHECKING:
    from probing.features import Features
    from probing.probes.compare import Replicates

ROOT = Path(__file__).resolve().parent.parent


def committed_c(model: str, dataset: str, task: str) -> dict[int, float]:
    """Per layer, the C the committed run chose on dev."""
    meta = json.loads((ROOT / "results" / f"{model}__{dataset}__{task}.json").read_text())["meta"]
    return {int(k): float(v) for k, v in meta["C"].items()}


def one_seed(
    train: Features, dev: Features, test: Features, seed: int, words: int, Cs: dict[int, float]
) -> dict:
    """Test predictions of every member and every cumulative mix for one seed, and the
    mixes' weights."""
    tr = train.subsample(words, seed=seed)
    layers = list(test.layer_ids)
    out: dict[str, np.ndarray] = {}
    for layer in layers:
        probe = LinearProbe(C=Cs[layer], max_train_words=None, random_state=seed)
        probe.fit(np.asarray(tr.layer(layer), np.float32), tr.labels)
        out[f"layer {layer}"] = probe.predict(test.layer(layer))
    X = tr.layers
    mean, std = layer_stats(X)
    for k in range(1, len(layers) + 1):
        # The members' penalty (module doc of probing.probes.mix); their one C in practice.
        C = float(np.median([Cs[la] for la in layers[:k]]))
        mix = ScalarMixProbe(max_train_words=None, C=C, random_state=seed)
        mix.fit(
            X[:k],
            tr.labels,
            dev.layers[:k],
            dev.labels,
            layers=layers[:k],
            stats=(mean[:k], std[:k]),
        )
        out[f"mix 0..{layers[k - 1]}"] = mix.predict(test.layers[:k])
        out[f"weights 0..{layers[k - 1]}"] = np.asarray(mix.weights_)
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
    layers = list(test.layer_ids)
    args.out.mkdir(parents=True, exist_ok=True)
    preds = []
    for seed in range(args.seeds):
        ckpt = args.out / f".{stem}.seed{seed}.npz"
        if ckpt.is_file():
            with np.load(ckpt, allow_pickle=False) as z:
                preds.append({k: z[k] for k in z.files})
            continue
        preds.append(one_seed(train, dev, test, seed, args.train_words, Cs))
        np.savez(ckpt, **preds[-1])
        print(f"{stem}: seed {seed} done ({time.process_time() - t_cpu:.0f} CPU-s)", flush=True)
    seeds = tuple(range(args.seeds))
    sentence, n_sent = test.sentence_index, len(test.sent_ids)
    names = [f"layer {la}" for la in layers] + [f"mix 0..{la}" for la in layers]
    cells = {
        n: SentenceCounts.from_predictions(
            "accuracy", test.labels, [p[n] for p in preds], sentence, n_sent, seeds
        )
        for n in names
    }
    unit = unit_of(dataset)
    counts = StoredCounts(unit, n_sent, cells, {"train_words": args.train_words})
    save_counts(
        counts,
        args.out / f"{stem}.safetensors",
        f"results/mix_members.py: {args.train_words} training words per seed",
    )
    engine = Engine(n_boot=1000, seed=0)
    reps = {n: engine.replicates(n, c, unit) for n, c in cells.items()}
    members = {la: reps[f"layer {la}"] for la in layers}
    mixes = {la: reps[f"mix 0..{la}"] for la in layers}
    rows = []
    for i, la in enumerate(layers):
        d = mix_vs_best_member(mixes[la], {m: members[m] for m in layers[: i + 1]})
        rows.append(
            {
                "layers": layers[: i + 1],
                **d.as_dict(),
                "below_beyond_noise": bool(d.called and d.value < 0),
            }
        )
    cog_best = centre_of_gravity_replicates("CoG running best", members)
    cog_mix = centre_of_gravity_replicates("CoG cumulative mixes", mixes, cumulative=False)
    cog_diff = compare(cog_mix, cog_best)

    def summary(r: Replicates) -> dict:  # two-level interval of one score
        idx = np.random.default_rng(0).integers(0, len(r.points), (r.draws.shape[1], len(r.points)))
        two = np.nanmean(r.draws[idx, np.arange(r.draws.shape[1])[:, None]], axis=1)
        lo, hi = np.quantile(two, [0.025, 0.975])
        return {
            "value": r.value,
            "ci_low": float(lo),
            "ci_high": float(hi),
            "per_seed": [float(x) for x in r.points],
        }

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
            "mix": "ScalarMixProbe with the members' C (L2 on the classifier, gamma held at "
            "1): 8 epochs or 2,000 steps, whichever is more, batch 256, best dev epoch",
        },
        "method": METHOD + "; mix vs best member: called without Holm (the strict reading)",
        "scores": {n: summary(r) for n, r in reps.items()},
        "mix_vs_best_member": rows,
        "cog": {
            "running_best": summary(cog_best),
            "cumulative_mixes": summary(cog_mix),
            "mixes_minus_running_best": cog_diff.as_dict(),
        },
        "weights": {
            f"seed {s}": {k: [float(w) for w in v] for k, v in p.items() if k.startswith("weights")}
            for s, p in enumerate(preds)
        },
        "cost": {
            "cpu_s": round(time.process_time() - t_cpu, 1),
            "wall_s": round(time.time() - t_wall, 1),
            "load_average_end": list(os.getloadavg()),
        },
        "command": "PYTHONPATH=. python results/mix_members.py --model "
        + model
        + f" --task {task} --train-sentences {args.train_sentences} --train-words "
        f"{args.train_words} --dev-sentences {args.dev_sentences} --seeds {args.seeds}",
    }
    atomic_write_json(args.out / f"{stem}.json", data, indent=1)
    for r in rows:
        print(
            f"  mix 0..{r['layers'][-1]} − best member ({r['b']}): {r['diff'] * 100:+.2f} "
            f"[{r['ci_low'] * 100:+.2f}, {r['ci_high'] * 100:+.2f}] points, p {r['p']:.3f}"
            + ("  BELOW" if r["below_beyond_noise"] else "")
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
    ap.add_argument("--out", type=Path, default=ROOT / "results" / "mixes")
    args = ap.parse_args(argv)
    for model in args.model or ["minilm-l6", "elmo-mini"]:
        run(model, args.task, args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
