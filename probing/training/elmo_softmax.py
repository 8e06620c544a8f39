"""Fit ELMo-mini's LM softmax on the frozen, exported encoder (issue 29).

ELMo-mini was exported without the adaptive softmax it was trained with, and the training
checkpoint is gone. This fits a new one after the fact: the same module as in training
(:class:`probing.training.elmo_bilm.BiLanguageModel`'s ``softmax``: one adaptive softmax over
``vocab.txt``, cutoffs 2,000 / 10,000, div value 4, shared by both directions), on the same
corpus (:func:`probing.training.corpus.training_sentences`, every ``--every``-th sentence)
with the same targets: the forward LM predicts word ``t+1`` from its top layer at ``t``, the
backward LM word ``t-1`` from its top layer at ``t``, each sentence ``<S> w1 … wn </S>`` from
zero state. The encoder is frozen, so its top-layer states are computed once, without
gradients, into shards under ``--work-dir`` (a killed run keeps the finished shards), then
the softmax is trained on them for ``--epochs`` passes (Adam, cosine decay), checkpointed to
safetensors every ``--checkpoint-minutes`` and at each epoch's end (resumed automatically).

Held-out perplexity, forward and backward, is measured exactly as in training
(:func:`probing.training.elmo_bilm.evaluate`, the first ``--eval-tokens`` words of UD-EWT
dev) with the exported fp16 weights, next to a unigram model's (add-one counts of the
training words read). Export: ``softmax.safetensors`` (fp16) and ``softmax_log.json`` into
``--export-dir``, and the model card is rewritten.

Run::

    OMP_WAIT_POLICY=PASSIVE nice -n 10 python -m probing train-elmo-softmax --threads 1
"""

from __future__ import annotations

import argparse
import json
import math
import shlex
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from probing.config import cache_dir
from probing.config import data_dir as config_data_dir
from probing.encoders.elmo import load_bilm
from probing.encoders.elmo_softmax import SOFTMAX_FILE, load_softmax, save_softmax
from probing.io import atomic_write, atomic_write_json
from probing.training import corpus as training_corpus
from probing.training.elmo_bilm import (
    MINI_CONFIG,
    BiLanguageModel,
    Corpus,
    TypeTable,
    build_corpus,
    default_cutoffs,
    epoch_batches,
    evaluate,
    make_batch,
)
from probing.training.elmo_lm import _heldout_words

LOG_NAME = "softmax_log.json"
DIV_VALUE = 4.0  # BiLanguageModel's default, as in training


def _print(msg: str) -> None:
    print(time.strftime("%Y-%m-%d %H:%M:%S"), msg, flush=True)


def _check_export(folder: Path) -> None:
    """Raises NotACheckpointError unless ``folder`` holds an ELMo-mini export (the encoder the
    softmax is fitted on, and its vocabulary)."""
    from probing.errors import NotACheckpointError

    missing = [f for f in ("vocab.txt", "options.json") if not (folder / f).is_file()]
    if missing or not any(folder.glob("*.hdf5")):
        raise NotACheckpointError(
            f"{folder} holds no ELMo-mini export (vocab.txt, options.json and the weights "
            "*.hdf5): copy models/elmo-mini to a folder of your own and pass --export-dir "
            "FOLDER."
        )


def _read_vocab(folder: Path) -> list[str]:
    return (folder / "vocab.txt").read_text(encoding="utf-8").split("\n")[:-1]


def build_model(folder: Path, vocab_size: int) -> BiLanguageModel:
    """The exported encoder (frozen) with a fresh softmax, as in training."""
    model = BiLanguageModel(MINI_CONFIG, vocab_size, dropout=0.0, div_value=DIV_VALUE)
    model.bilm.load_state_dict(load_bilm(folder).state_dict())
    for p in model.bilm.parameters():
        p.requires_grad_(False)
    return model.eval()


# -- top-layer states, once -----------------------------------------------------------------


@torch.inference_mode()
def states_of(model: BiLanguageModel, chars: torch.Tensor, targets: torch.Tensor) -> dict:
    """Forward and backward predictions of one batch: fp16 states (n, P) and int64 targets,
    the same pairs :meth:`BiLanguageModel.forward` scores."""
    out = model.bilm(chars)
    top_f, top_b = out.forward[-1], out.backward[-1]
    pred = out.mask[:, 1:]
    return {
        "f": top_f[:, :-1][pred].half().numpy(),
        "tf": targets[:, 1:][pred].numpy(),
        "b": top_b[:, 1:][pred].half().numpy(),
        "tb": targets[:, :-1][pred].numpy(),
    }


def precompute(
    model: BiLanguageModel, corpus: Corpus, work: Path, batch_tokens: int, shard_batches: int
) -> list[Path]:
    """Shards ``states_NNNN.npz`` of every prediction in ``corpus`` (existing ones kept)."""
    batches = epoch_batches(corpus, batch_tokens, seed=0, epoch=0)
    shards = []
    n_shards = math.ceil(len(batches) / shard_batches)
    t0 = time.time()
    for s in range(n_shards):
        path = work / f"states_{s:04d}.npz"
        shards.append(path)
        if path.is_file():
            continue
        parts = [
            states_of(model, *make_batch(corpus, b))
            for b in batches[s * shard_batches : (s + 1) * shard_batches]
        ]
        arrays = {k: np.concatenate([p[k] for p in parts]) for k in ("f", "tf", "b", "tb")}
        atomic_write(path, lambda tmp, a=arrays: np.savez(tmp, **a), suffix=".npz")
        _print(f"states: shard {s + 1}/{n_shards} ({time.time() - t0:.0f}s)")
    return shards


def load_states(shards: list[Path]) -> tuple[torch.Tensor, torch.Tensor]:
    """All predictions of both directions: fp16 states (n, P) and targets (n,)."""
    xs, ys = [], []
    for path in shards:
        with np.load(path, allow_pickle=False) as z:
            xs += [z["f"], z["b"]]
            ys += [z["tf"], z["tb"]]
    return torch.from_numpy(np.concatenate(xs)), torch.from_numpy(np.concatenate(ys))


# -- checkpoint ------------------------------------------------------------------------------


def _save_checkpoint(
    path: Path, softmax: torch.nn.Module, opt: torch.optim.Adam, state: dict
) -> None:
    """Softmax weights and Adam's moments in safetensors; the position in its metadata."""
    from safetensors.torch import save_file

    tensors = {f"w.{k}": v.contiguous() for k, v in softmax.state_dict().items()}
    for i, p in enumerate(softmax.parameters()):
        st = opt.state.get(p)
        if st:
            tensors[f"m.{i}"] = st["exp_avg"].contiguous()
            tensors[f"v.{i}"] = st["exp_avg_sq"].contiguous()
            tensors[f"s.{i}"] = torch.as_tensor(st["step"], dtype=torch.float64).reshape(1)
    meta = {"state": json.dumps(state)}
    atomic_write(
        path, lambda tmp: save_file(tensors, str(tmp), metadata=meta), suffix=".safetensors"
    )


def _load_checkpoint(path: Path, softmax: torch.nn.Module, opt: torch.optim.Adam) -> dict | None:
    from safetensors import safe_open

    if not path.is_file():
        return None
    with safe_open(str(path), framework="pt") as f:
        t = {k: f.get_tensor(k) for k in f.keys()}  # noqa: SIM118
        state = json.loads(f.metadata()["state"])
    softmax.load_state_dict({k[2:]: v for k, v in t.items() if k.startswith("w.")})
    for i, p in enumerate(softmax.parameters()):
        if f"m.{i}" in t:
            opt.state[p] = {
                "step": t[f"s.{i}"].reshape(()),
                "exp_avg": t[f"m.{i}"],
                "exp_avg_sq": t[f"v.{i}"],
            }
    return state


# -- training -------------------------------------------------------------------------------


def _lr(step: int, total: int, args: argparse.Namespace) -> float:
    warm = max(1, total // 50)
    if step < warm:
        return args.lr * (step + 1) / warm
    progress = min(1.0, (step - warm) / max(1, total - warm))
    return args.lr * (0.05 + 0.95 * 0.5 * (1 + math.cos(math.pi * progress)))


def unigram_ppl(train: Corpus, heldout: Corpus, vocab_size: int) -> float:
    """Perplexity of add-one unigram counts of ``train``'s targets on ``heldout``'s
    predictions (its words and ``</S>``, as the forward LM predicts them)."""
    counts = np.bincount(train.type_vocab[train.types], minlength=vocab_size).astype(float)
    counts[1] += train.n_sentences  # </S>
    logp = np.log((counts + 1) / (counts.sum() + vocab_size))
    targets = np.concatenate([heldout.type_vocab[heldout.types], np.ones(heldout.n_sentences, int)])
    return float(np.exp(-logp[targets].mean()))


def train(args: argparse.Namespace, command: str = "") -> int:
    """Fit, evaluate and export (module doc); returns a process exit code."""
    torch.set_num_threads(args.threads)
    data_dir = Path(getattr(args, "data_dir", None) or config_data_dir())
    command = command or "OMP_WAIT_POLICY=PASSIVE python -m probing " + shlex.join(sys.argv[1:])
    folder: Path = args.export_dir
    _check_export(folder)  # before the work folder is made or the corpus read
    work: Path = args.work_dir or cache_dir() / "train" / "elmo-mini-softmax"
    work = work / f"every{args.every}"
    work.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    vocab = _read_vocab(folder)
    ids = {w: i for i, w in enumerate(vocab)}
    sentences = list(training_corpus.training_sentences(data_dir))[:: args.every]
    table = TypeTable()
    corpus = build_corpus(sentences, table, args.max_len, ids)
    heldout = build_corpus(_heldout_words(data_dir, args.eval_tokens), table, args.max_len, ids)
    del sentences
    _print(
        f"corpus: {corpus.n_sentences:,} sentences, {corpus.n_words:,} words (every "
        f"{args.every}th); vocab {len(vocab):,}; read in {time.time() - t0:.0f}s"
    )
    model = build_model(folder, len(vocab))
    t_states = time.time()
    cpu_states = time.process_time()
    shards = precompute(model, corpus, work, args.batch_tokens, args.shard_batches)
    states_s, states_cpu = time.time() - t_states, time.process_time() - cpu_states
    # The states' cost is the run's that computed them (a rerun or resume reads them back).
    timing = work / "states_time.json"
    if states_s > 60 or not timing.is_file():
        atomic_write_json(timing, {"wall_s": states_s, "cpu_s": states_cpu})
    spent = json.loads(timing.read_text(encoding="utf-8"))
    states_s, states_cpu = spent["wall_s"], spent.get("cpu_s")
    X, Y = load_states(shards)
    _print(f"{len(Y):,} predictions (both directions) in memory")

    softmax = model.softmax
    softmax.train()
    opt = torch.optim.Adam(softmax.parameters(), lr=args.lr)
    ckpt = work / "checkpoint.safetensors"
    state = _load_checkpoint(ckpt, softmax, opt) or {
        "epoch": 0,
        "batch": 0,
        "step": 0,
        "train_s": 0.0,
        "history": [],
    }
    per_epoch = math.ceil(len(Y) / args.batch_size)
    total = per_epoch * args.epochs
    last_ckpt = time.time()
    t_train, cpu_train = time.time(), time.process_time()
    while state["epoch"] < args.epochs:
        order = torch.from_numpy(
            np.random.default_rng([args.seed, state["epoch"]]).permutation(len(Y))
        )
        window, n = 0.0, 0
        for b in range(state["batch"], per_epoch):
            idx = order[b * args.batch_size : (b + 1) * args.batch_size]
            x = X[idx].float()
            if args.dropout > 0:
                x = torch.nn.functional.dropout(x, args.dropout)
            for g in opt.param_groups:
                g["lr"] = _lr(state["step"], total, args)
            loss = softmax(x, Y[idx]).loss
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            state["step"] += 1
            state["batch"] = b + 1
            window += loss.item() * len(idx)
            n += len(idx)
            if state["step"] % args.log_every == 0:
                _print(
                    f"epoch {state['epoch']} batch {b + 1}/{per_epoch} train ppl "
                    f"{math.exp(window / n):.1f}"
                )
                window, n = 0.0, 0
            if time.time() - last_ckpt > 60 * args.checkpoint_minutes:
                _save_checkpoint(ckpt, softmax, opt, state)
                last_ckpt = time.time()
        state["epoch"] += 1
        state["batch"] = 0
        softmax.eval()
        result = evaluate(model, heldout, args.batch_tokens)
        softmax.train()
        state["history"].append({"epoch": state["epoch"], **result})
        _print(
            f"epoch {state['epoch']}: held-out ppl fwd {result['ppl_forward']:.1f} "
            f"bwd {result['ppl_backward']:.1f}"
        )
        _save_checkpoint(ckpt, softmax, opt, state)
        last_ckpt = time.time()
    state["train_s"] += time.time() - t_train
    softmax.eval()
    meta = {
        "dim": MINI_CONFIG.projection_dim,
        "vocab_size": len(vocab),
        "cutoffs": default_cutoffs(len(vocab)),
        "div_value": DIV_VALUE,
    }
    save_softmax(softmax, folder, meta)
    # Score what ships: the fp16 weights, read back the way the encoder reads them.
    shipped = load_softmax(folder, MINI_CONFIG.projection_dim)
    model.softmax.load_state_dict(shipped.module.state_dict())
    final = evaluate(model, heldout, args.batch_tokens)
    log: dict[str, Any] = {
        "what": "adaptive softmax fitted after the fact on the frozen exported encoder",
        "command": command,
        "corpus_sentences": corpus.n_sentences,
        "corpus_words": corpus.n_words,
        "every": args.every,
        "predictions": int(len(Y)),
        "epochs": args.epochs,
        "tokens_seen": int(len(Y)) * args.epochs,
        "batch_size": args.batch_size,
        "lr": args.lr,
        "dropout": args.dropout,
        "seed": args.seed,
        "threads": args.threads,
        "states_wall_s": round(states_s, 1),
        "states_cpu_s": None if states_cpu is None else round(states_cpu, 1),
        "train_wall_s": round(time.time() - t_train, 1),
        "train_cpu_s": round(time.process_time() - cpu_train, 1),
        "eval_words": heldout.n_words,
        "heldout": final,
        "history": state["history"],
        "unigram_ppl": unigram_ppl(corpus, heldout, len(vocab)),
        "size_bytes": (folder / SOFTMAX_FILE).stat().st_size,
        "layout": meta,
    }
    atomic_write_json(folder / LOG_NAME, log)
    from probing.training.elmo_lm import write_model_card

    write_model_card(folder)
    _print(
        f"exported {folder / SOFTMAX_FILE} ({log['size_bytes'] / 1e6:.2f} MB): held-out ppl "
        f"fwd {final['ppl_forward']:.1f} bwd {final['ppl_backward']:.1f}, unigram "
        f"{log['unigram_ppl']:.1f}"
    )
    return 0


def run(args: argparse.Namespace, command: str = "") -> int:
    return train(args, command)


def main(argv: list[str] | None = None) -> int:
    """``python -m probing.training.elmo_softmax [options]``."""
    from probing.training.cli_args import (
        add_train_elmo_softmax_arguments,
        refuse_shipped_outputs,
    )

    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(prog="python -m probing.training.elmo_softmax")
    args = add_train_elmo_softmax_arguments(parser).parse_args(argv)
    refuse_shipped_outputs("train-elmo-softmax", args)
    command = "OMP_WAIT_POLICY=PASSIVE python -m probing.training.elmo_softmax " + shlex.join(argv)
    return run(args, command.strip())


if __name__ == "__main__":
    sys.exit(main())
