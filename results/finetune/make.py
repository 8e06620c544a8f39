"""Re-make ``results/finetune/``: what fine-tuning minilm-l6 changes, per layer.

Command (the committed run; wall times in ``card.json``)::

    python results/finetune/make.py --train --jobs 2 --out results/finetune \\
        --docs docs/course_objectives.md --overwrite

``--train`` first runs ``python -m probing train-finetune`` for UPOS and genre with seeds
0, 1, 2 (:data:`TRAIN_ARGS`: 1,000 training sentences, 2 epochs of batch 16; ``--jobs``
runs at once; resumable; the fine-tuned weights stay in the cache, not in git). Then, per
seed: the layer shift (linear CKA and cosine distance, before vs after, on the UD-EWT test
words of :data:`SHIFT_WORDS`), the other task's probe per layer (UPOS on the genre-tuned
model, genre on the UPOS-tuned one) and the fine-tuned model's own test predictions; once:
the pre-trained minilm-l6's probes and the scalar mixes (the ELMo way) of minilm-l6 and
elmo-mini. Every piece is kept in ``--work`` (safetensors counts or JSON) and reused by a
rerun. Written: ``sentence-scores/{upos,genre}.safetensors`` (per test sentence / document
counts), ``layers.json`` (per layer, per seed), ``comparisons.json`` (the engine's tables),
``card.json`` (settings, sizes, seeds, hashes, wall times), and the generated block of
``--docs``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

SEEDS = (0, 1, 2)
TASKS = ("upos", "genre")
# The fine-tuning size: 1,000 sentences x 2 epochs = 126 steps of 16 a run, about 2 s of CPU a
# step, so the six runs take about 25 min of CPU (the committed ones: 34 min wall, six at once
# at nice 10 on two cores shared with other jobs; each run's step time is in card.json).
TRAIN_ARGS = (
    "--train-sentences", "1000",
    "--genre-per-doc", "3",  # Brown train has 400 documents: 3 each to sample 1,000 from
    "--epochs", "2",
    "--batch-size", "16",
    "--eval-every", "21",  # three dev evaluations an epoch
    "--patience", "2",
)  # fmt: skip
PROBE_SIZES = {"upos_train": 240, "upos_dev": 60, "genre_train": 240, "genre_dev_per_doc": 1}
SHIFT_WORDS = 400
MARK = "finetune"


def save_piece(work: Path, name: str, value, wall: float) -> None:
    """Keep a piece: counts (one cell or a dict of cells) as safetensors, the rest as JSON."""
    from probing.io import atomic_write_json
    from probing.probes.compare import SentenceCounts
    from probing.probes.reapply import StoredCounts, save_counts

    work.mkdir(parents=True, exist_ok=True)
    if isinstance(value, SentenceCounts):
        cells, kind = {"": value}, "cell"
    elif (
        isinstance(value, dict)
        and value
        and all(isinstance(v, SentenceCounts) for v in value.values())
    ):
        cells, kind = value, "cells"
    else:
        atomic_write_json(work / f"{name}.json", {"value": value, "wall_s": wall})
        return
    n = next(iter(cells.values())).counts.shape[1]
    info = {"piece": kind, "wall_s": wall}
    save_counts(StoredCounts("piece", n, cells, info), work / f"{name}.safetensors", __file__)


def load_piece(work: Path, name: str):
    """A kept piece and its wall time, or None when it is not there."""
    from probing.probes.reapply import load_counts

    counts, plain = work / f"{name}.safetensors", work / f"{name}.json"
    if counts.is_file():
        stored = load_counts(counts)
        cells = stored.cells[""] if stored.info["piece"] == "cell" else stored.cells
        return cells, float(stored.info["wall_s"])
    if plain.is_file():
        kept = json.loads(plain.read_text(encoding="utf-8"))
        return kept["value"], float(kept["wall_s"])
    return None


def memo(work: Path, name: str, fn):
    """``(fn(), wall)`` once: kept in ``work`` (a checkpoint per piece) and read back after."""
    kept = load_piece(work, name)
    if kept is not None:
        return kept
    t0 = time.perf_counter()
    value = fn()
    wall = time.perf_counter() - t0
    save_piece(work, name, value, wall)
    print(f"{name}: {wall:.0f} s", flush=True)
    return load_piece(work, name)  # what a rerun reads (lists for tuples, float counts)


def train(seeds, threads: int, jobs: int = 1) -> dict:
    """Run (or resume) every fine-tuning, ``jobs`` at a time; returns each command's wall time."""
    todo = [(task, seed) for task in TASKS for seed in seeds]
    running: list[tuple[str, subprocess.Popen, float]] = []
    times = {}

    def finish(key, proc, t0):
        if proc.wait() != 0:
            raise SystemExit(f"train-finetune {key} failed (exit {proc.returncode})")
        times[key] = round(time.perf_counter() - t0, 1)

    while todo or running:
        while todo and len(running) < max(1, jobs):
            task, seed = todo.pop(0)
            cmd = [sys.executable, "-m", "probing", "train-finetune", "--task", task]
            cmd += ["--seed", str(seed), "--threads", str(threads), *TRAIN_ARGS]
            running.append(
                (f"{task}-s{seed}", subprocess.Popen(cmd, cwd=ROOT), time.perf_counter())
            )
        done = [r for r in running if r[1].poll() is not None]
        for r in done:
            running.remove(r)
            finish(*r)
        if not done:
            time.sleep(2)
    return times


def measure(work: Path, seeds, base_only: bool = False, only: set[str] | None = None) -> dict:
    """Every measurement (cached per piece in ``work``). ``only``: just the pieces of these
    fine-tuned runs (``upos-s0`` …), none of the pre-trained ones (for parallel workers)."""
    from probing.analyses import finetune_effects as fe
    from probing.analyses.cka import sample_words
    from probing.models.registry import load_encoder
    from probing.training.finetune_data import (
        DATA_SEED,
        UPOS_TEST,
        Sizes,
        genre_sentences,
        pick,
        upos_test_examples,
    )
    from probing.training.finetune_run import default_export_dir

    p = PROBE_SIZES
    upos_kw = dict(max_train=p["upos_train"], max_dev=p["upos_dev"], max_test=UPOS_TEST)
    g_train = genre_sentences("train", 1)
    g_train = [g_train[i] for i in pick(len(g_train), p["genre_train"], DATA_SEED)]
    g_dev = genre_sentences("dev", p["genre_dev_per_doc"])
    g_test = genre_sentences("test", Sizes().genre_test_per_doc)
    g_labels = {k: _labels(v) for k, v in (("train", g_train), ("dev", g_dev), ("test", g_test))}
    g_docs = [s.doc_id for s in g_test]
    group, n_docs = fe.doc_groups(g_docs)

    def genre_cells(name: str, mix_seeds=()):
        enc = load_encoder(name)
        x = {
            k: fe.genre_vectors(enc, v)
            for k, v in (("train", g_train), ("dev", g_dev), ("test", g_test))
        }
        return fe.genre_probe_counts(
            (x["train"], g_labels["train"]),
            (x["dev"], g_labels["dev"]),
            (x["test"], g_labels["test"], g_docs),
            mix_seeds=mix_seeds,
        )

    out: dict = {"wall_s": {}}

    def piece(name, fn):
        value, wall = memo(work, name, fn)
        out["wall_s"][name] = round(wall, 1)
        return value

    if only is None:
        base_pieces(piece, fe, load_encoder, upos_kw, genre_cells, seeds, out)
    shift_sents, _ = sample_words("ud-ewt", "test", SHIFT_WORDS)
    upos_test, _ = upos_test_examples()
    out["tuned"] = {}
    if base_only:
        return out
    runs = [(t, s) for t in TASKS for s in seeds if only is None or f"{t}-s{s}" in only]
    for task, seed in runs:
        folder = default_export_dir(task, seed)
        key = f"{task}-s{seed}"

        def shift(folder=folder):
            return fe.layer_shift(load_encoder("minilm-l6"), load_encoder(str(folder)), shift_sents)

        def own(folder=folder, task=task):
            if task == "upos":
                return fe.finetuned_counts(folder, upos_test)
            return fe.finetuned_counts(folder, [fe_example(x) for x in g_test], group)

        def other(folder=folder, task=task):
            if task == "genre":  # UPOS on the genre-tuned model
                return fe.upos_probe_counts(load_encoder(str(folder)), mix=False, **upos_kw)[0]
            return genre_cells(str(folder))

        out["tuned"][key] = {
            "shift": piece(f"shift-{key}", shift),
            "own": piece(f"own-{key}", own),
            "other": piece(f"other-{key}", other),
            "info": json.loads((folder / "finetune.json").read_text(encoding="utf-8")),
        }
    return out


def base_pieces(piece, fe, load_encoder, upos_kw, genre_cells, seeds, out) -> None:
    """The pre-trained models' probes and scalar mixes (into ``out``)."""
    out["base_upos"] = piece(
        "base-upos-minilm-l6",
        lambda: fe.upos_probe_counts(load_encoder("minilm-l6"), mix=True, **upos_kw)[0],
    )
    out["elmo_upos"] = piece(
        "base-upos-elmo-mini",
        lambda: fe.upos_probe_counts(load_encoder("elmo-mini"), mix=True, **upos_kw)[0],
    )
    out["base_genre"] = piece("base-genre-minilm-l6", lambda: genre_cells("minilm-l6", seeds))
    out["elmo_genre"] = piece("base-genre-elmo-mini", lambda: genre_cells("elmo-mini", seeds))


def fe_example(sentence):
    from probing.training.finetune import Example

    return Example(list(sentence.words), str(sentence.meta["genre"]))


def _labels(sentences):
    import numpy as np

    return np.array([s.meta["genre"] for s in sentences], dtype=str)


def tables(m: dict, seeds) -> tuple[dict, dict, dict]:
    """Stored cells per unit, the engine's comparison families and the per-layer figures."""
    from probing.analyses.finetune_effects import GENRE_UNIT, UPOS_UNIT, stack_seeds
    from probing.probes.compare import Engine, table_dict, with_holm
    from probing.training.finetune_data import UPOS_TEST

    n_layers = sum(1 for k in m["base_upos"] if k.startswith("layer "))
    tuned = m["tuned"]
    cells = {"upos": {}, "genre": {}}
    for la in range(n_layers):
        cells["upos"][f"UPOS probe, pre-trained, layer {la}"] = m["base_upos"][f"layer {la}"]
        cells["upos"][f"UPOS probe, genre-tuned, layer {la}"] = stack_seeds(
            [tuned[f"genre-s{s}"]["other"][f"layer {la}"] for s in seeds], seeds
        )
        cells["genre"][f"genre probe, pre-trained, layer {la}"] = m["base_genre"][f"layer {la}"]
        cells["genre"][f"genre probe, UPOS-tuned, layer {la}"] = stack_seeds(
            [tuned[f"upos-s{s}"]["other"][f"layer {la}"] for s in seeds], seeds
        )
    cells["upos"]["UPOS fine-tuned"] = stack_seeds(
        [tuned[f"upos-s{s}"]["own"] for s in seeds], seeds
    )
    cells["upos"]["UPOS scalar mix, minilm-l6 frozen"] = m["base_upos"]["scalar_mix"]
    cells["upos"]["UPOS scalar mix, elmo-mini frozen"] = m["elmo_upos"]["scalar_mix"]
    cells["genre"]["genre fine-tuned"] = stack_seeds(
        [tuned[f"genre-s{s}"]["own"] for s in seeds], seeds
    )
    cells["genre"]["genre scalar mix, minilm-l6 frozen"] = m["base_genre"]["scalar_mix"]
    cells["genre"]["genre scalar mix, elmo-mini frozen"] = m["elmo_genre"]["scalar_mix"]

    for t, cs in cells.items():  # paired cells must count the same items per sentence
        totals = {k: tuple(c.counts[0].sum(axis=1)) for k, c in cs.items()}
        if len(set(totals.values())) != 1:
            raise SystemExit(f"{t}: cells count different items per test unit")
    engine = Engine(n_boot=1000, seed=0)
    units = {"upos": UPOS_UNIT, "genre": GENRE_UNIT}
    rep = {t: {k: engine.replicates(k, c, units[t]) for k, c in cells[t].items()} for t in cells}
    fams = {
        "upos_probe_after_genre_tuning": with_holm(
            [
                engine.compare(
                    rep["upos"][f"UPOS probe, genre-tuned, layer {la}"],
                    rep["upos"][f"UPOS probe, pre-trained, layer {la}"],
                )
                for la in range(n_layers)
            ]
        ),
        "genre_probe_after_upos_tuning": with_holm(
            [
                engine.compare(
                    rep["genre"][f"genre probe, UPOS-tuned, layer {la}"],
                    rep["genre"][f"genre probe, pre-trained, layer {la}"],
                )
                for la in range(n_layers)
            ]
        ),
        "fine_tuning_vs_scalar_mix": with_holm(
            [
                engine.compare(
                    rep[t][f"{name} fine-tuned"], rep[t][f"{name} scalar mix, {model} frozen"]
                )
                for t, name in (("upos", "UPOS"), ("genre", "genre"))
                for model in ("minilm-l6", "elmo-mini")
            ]
        ),
    }
    notes = {
        "upos_probe_after_genre_tuning": f"UPOS accuracy per layer, genre-tuned ({len(seeds)} seeds) − pre-trained; paired over {UPOS_TEST} UD-EWT test sentences",
        "genre_probe_after_upos_tuning": f"genre accuracy per layer, UPOS-tuned ({len(seeds)} seeds) − pre-trained; paired over Brown test documents",
        "fine_tuning_vs_scalar_mix": f"full fine-tuning ({len(seeds)} seeds) − frozen encoder with a learned scalar mix; paired over test sentences (UPOS) or documents (genre)",
    }
    comparisons = {k: table_dict(v, "accuracy", notes[k]) for k, v in fams.items()}
    figures = {
        "layers": list(range(n_layers)),
        "cka": {k: v["shift"][0] for k, v in tuned.items()},
        "distance": {k: v["shift"][1] for k, v in tuned.items()},
        "accuracy": {
            t: {name: [float(x) for x in c.points] for name, c in cells[t].items()} for t in cells
        },
    }
    return cells, comparisons, figures


def card(m: dict, seeds, train_times: dict | None) -> dict:
    from probing.models.embedded import minilm_dir
    from probing.training.finetune import weights_sha256
    from probing.training.finetune_data import UPOS_TEST

    runs = {}
    for key, t in m["tuned"].items():
        info = t["info"]
        runs[key] = {
            "settings": info["settings"],
            "n_train": info["n_train"],
            "n_dev": info["n_dev"],
            "n_train_words": info.get("n_train_words"),
            "data_sha256": info.get("data_sha256"),
            "steps": info["state"]["step"],
            "steps_per_epoch": info["steps_per_epoch"],
            "stopped_early": info["state"]["stopped_early"],
            "best_step": info["state"]["best_step"],
            "best_dev_accuracy": info["state"]["best_dev"],
            "train_step_wall_s": round(info["state"]["wall_time_s"], 1),
            "dev_history": info["history"],
            "labels": info["labels"],
        }
    sizes = {json.dumps(t["info"].get("sizes"), sort_keys=True) for t in m["tuned"].values()}
    if len(sizes) != 1:
        raise SystemExit(f"the runs were trained on different data sizes: {sorted(sizes)}")
    return {
        "what": "minilm-l6 (all-MiniLM-L6-v2) fine-tuned end to end on UD-EWT UPOS (linear head on "
        "each word's first piece, last layer) and Brown genre (linear head on the mean of the "
        "pieces, last layer); the weights are not committed (re-made by the command)",
        "start_model_sha256": weights_sha256(minilm_dir()),
        "seeds": list(seeds),
        "data_sizes": {**json.loads(sizes.pop()), "upos_test_sentences": UPOS_TEST},
        "train_args": list(TRAIN_ARGS),
        "probe_sizes": PROBE_SIZES,
        "shift_words": SHIFT_WORDS,
        "runs": runs,
        "train_command_wall_s": train_times or {},
        "measure_wall_s": m["wall_s"],
        "command": "python results/finetune/make.py --train --jobs 2 --out results/finetune --docs docs/course_objectives.md --overwrite",
    }


def write_docs(path: Path, comparisons: dict) -> None:
    """Replace the generated block of ``path`` (between the finetune markers)."""
    from probing.analyses.finetune_effects import claim_sentences
    from probing.io import atomic_write_text
    from probing.probes.compare import METHOD, Difference

    lines = []
    for table in comparisons.values():
        lines.append(f"**{table['note']}** (Holm over {len(table['rows'])} rows):")
        lines.append("")
        lines += [
            f"- {s}" for s in claim_sentences([Difference.from_dict(r) for r in table["rows"]])
        ]
        lines.append("")
    lines.append(f"_Method of every interval: {METHOD}._")
    begin, end = f"<!-- generated:{MARK}:begin -->", f"<!-- generated:{MARK}:end -->"
    text = path.read_text(encoding="utf-8")
    if begin not in text or end not in text:
        raise SystemExit(f"{path} has no {begin} … {end} block")
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    atomic_write_text(path, head + begin + "\n" + "\n".join(lines) + "\n" + end + tail)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--work", type=Path, default=None, help="per-piece cache (default: cache)")
    ap.add_argument("--train", action="store_true", help="run the fine-tuning first")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=1, help="fine-tuning runs at once (--train)")
    ap.add_argument("--docs", type=Path, default=None, help="a doc whose finetune block to rewrite")
    ap.add_argument("--overwrite", action="store_true")
    ap.add_argument("--base-only", action="store_true", help="only the pre-trained pieces")
    ap.add_argument("--seeds", default="0,1,2", help="fine-tuning seeds (comma-separated)")
    ap.add_argument("--only", default=None, help="only these runs' pieces (upos-s0,genre-s1)")
    args = ap.parse_args(argv)
    from probing.errors import ShippedFilesError
    from probing.shipped import refuse_shipped

    try:
        refuse_shipped(
            [args.docs] if args.docs else [],
            args.overwrite,
            folders=[args.out],
            hint="write somewhere else with --out DIR",
        )
    except ShippedFilesError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    import torch

    from probing.config import cache_dir
    from probing.io import atomic_write_json
    from probing.probes.reapply import StoredCounts, save_counts

    torch.set_num_threads(args.threads)
    seeds = tuple(int(x) for x in args.seeds.split(","))
    train_times = train(seeds, args.threads, args.jobs) if args.train else None
    work = args.work or cache_dir() / "finetune" / "make"
    only = set(args.only.split(",")) if args.only else None
    m = measure(work, seeds, args.base_only, only)
    if args.base_only or only is not None:
        return 0
    cells, comparisons, figures = tables(m, seeds)
    args.out.mkdir(parents=True, exist_ok=True)
    from probing.analyses.finetune_effects import GENRE_UNIT, UPOS_UNIT

    for t, unit in (("upos", UPOS_UNIT), ("genre", GENRE_UNIT)):
        n = next(iter(cells[t].values())).counts.shape[1]
        save_counts(
            StoredCounts(unit, n, cells[t]),
            args.out / "sentence-scores" / f"{t}.safetensors",
            "results/finetune/make.py",
        )
    atomic_write_json(args.out / "comparisons.json", comparisons)
    atomic_write_json(args.out / "layers.json", figures)
    atomic_write_json(args.out / "card.json", card(m, seeds, train_times))
    if args.docs:
        write_docs(args.docs, comparisons)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
