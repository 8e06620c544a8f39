"""Train ELMo-mini: a small bidirectional LM with ELMo's architecture, on the offline corpus.

Model: the char-CNN token encoder and 2-layer biLSTM of :mod:`probing.encoders.elmo`
(char embedding 16, filters [[1,32],[2,32],[3,64],[4,128],[5,256]], 2 highways, LSTM cell
512, projection 128, cell/projection clip 3, skip connection), plus one adaptive softmax
shared by both directions (as in the ELMo paper, which ties the softmax across directions).
Loss: the mean of the forward LM's and the backward LM's per-token negative log-likelihood,
each sentence read on its own as ``<S> w1 … wn </S>`` from zero state (matching the
stateless encoder). The LM vocabulary (``--vocab-size`` most frequent words, plus ``<S>``,
``</S>``, ``<UNK>``) only shapes the softmax; the encoder reads characters and needs none.

Text: :func:`probing.training.corpus.training_sentences` (Brown minus SemCor dev/test,
UD-EWT train, WordNet glosses; ~2.7M words). Held-out perplexity, forward and backward, on
the first ``--eval-tokens`` words of UD-EWT dev (``heldout_sentences``); rare words count as
``<UNK>``.

It checkpoints atomically to ``--checkpoint-dir`` every ``--checkpoint-minutes`` and resumes
from there automatically; without a checkpoint it warm-starts the encoder from an earlier
export. Every ``--export-minutes`` it measures held-out perplexity and exports the encoder
in the original bilm-tf/AllenNLP format to ``--export-dir`` (``options.json``,
``weights.hdf5``) with ``vocab.txt``, ``training_log.json`` and the model card
``README.md``.

Run it in the background with one thread, and tell OpenMP not to spin (busy-waiting
threads steal the shared CPUs from everything else)::

    OMP_WAIT_POLICY=PASSIVE nohup python -m probing.training.elmo_lm \\
        --data-dir /work/shared/data > ~/.cache/contextlens/train/elmo-mini/train.log 2>&1 &
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import shlex
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from probing.config import cache_dir
from probing.config import data_dir as config_data_dir
from probing.encoders.elmo import (
    ElmoConfig,
    load_bilm,
    save_elmo,
)
from probing.io import atomic_write, atomic_write_json, atomic_write_text
from probing.training import corpus as training_corpus
from probing.training.cards import (
    elmo_card_values,
    elmo_softmax_values,
    read_card_inputs,
    render_card,
)
from probing.training.cards import reproducing_command as reproducing_command  # re-export
from probing.training.cli_args import (
    DEFAULT_EXPORT_DIR,
    add_train_elmo_arguments,
    refuse_shipped_outputs,
)
from probing.training.elmo_bilm import (
    MINI_CONFIG,
    BiLanguageModel,
    TypeTable,
    build_corpus,
    build_vocab,
    epoch_batches,
    evaluate,
    make_batch,
)
from probing.training.loop import TrainingLoop

LOG_NAME = "training_log.json"
CHECKPOINT_NAME = "checkpoint.pt"


def default_checkpoint_dir() -> Path:
    return cache_dir() / "train" / "elmo-mini"


# -- checkpoint, export, model card -------------------------------------------------------


def _rng_state() -> dict[str, Any]:
    """RNG states as tensors and plain Python values, so the checkpoint loads with
    ``torch.load(weights_only=True)`` (no pickled objects)."""
    name, keys, pos, has_gauss, cached = np.random.get_state()
    return {
        "torch": torch.get_rng_state(),
        "python": random.getstate(),
        "numpy": [
            name,
            torch.from_numpy(keys.astype(np.int64)),
            int(pos),
            int(has_gauss),
            float(cached),
        ],
    }


def _set_rng_state(state: dict[str, Any]) -> None:
    torch.set_rng_state(state["torch"])
    version, internal, gauss = state["python"]
    random.setstate((version, tuple(internal), gauss))
    name, keys, pos, has_gauss, cached = state["numpy"]
    np.random.set_state(
        (name, np.asarray(keys, dtype=np.int64).astype(np.uint32), pos, has_gauss, cached)
    )


def export_model(
    model: BiLanguageModel, vocab: list[str], log: dict[str, Any], folder: Path
) -> None:
    """Write the encoder (original format), vocab.txt, training_log.json and README.md."""
    save_elmo(model.bilm, folder)
    atomic_write_text(folder / "vocab.txt", "\n".join(vocab) + "\n")
    atomic_write_json(folder / LOG_NAME, log)
    write_model_card(folder)


def write_model_card(folder: str | os.PathLike[str] = DEFAULT_EXPORT_DIR) -> Path:
    """(Re)write ``folder/README.md`` from ``folder/training_log.json``."""
    folder = Path(folder)
    log = read_card_inputs(folder, LOG_NAME, "options.json", "weights.hdf5")
    cfg = ElmoConfig.from_json(folder / "options.json")
    options = {**vars(cfg), "n_filters": cfg.n_filters, "output_dim": cfg.output_dim}
    size_mb = (folder / "weights.hdf5").stat().st_size / 1e6
    card_folder = "models/elmo-mini" if folder.resolve() == DEFAULT_EXPORT_DIR.resolve() else folder
    values = elmo_card_values(log, options, size_mb, str(card_folder))
    slog_path = folder / "softmax_log.json"
    slog = json.loads(slog_path.read_text(encoding="utf-8")) if slog_path.is_file() else None
    last = (log.get("heldout") or [None])[-1]
    then = (last["ppl_forward"], last["ppl_backward"]) if last else None
    values.update(elmo_softmax_values(slog, then))
    text = render_card("elmo-mini", values)
    return atomic_write_text(folder / "README.md", text)


# -- training loop ------------------------------------------------------------------------


add_arguments = add_train_elmo_arguments  # the options live in a torch-free module


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m probing.training.elmo_lm", description="Train ELMo-mini (see module doc)."
    )
    return add_arguments(parser)


def _lr_at(tokens: int, args: argparse.Namespace) -> float:
    if tokens < args.warmup_tokens:
        return args.lr * max(tokens, 1) / args.warmup_tokens
    progress = min(
        1.0, (tokens - args.warmup_tokens) / max(1, args.max_tokens - args.warmup_tokens)
    )
    floor = args.min_lr_ratio
    return args.lr * (floor + (1 - floor) * 0.5 * (1 + math.cos(math.pi * progress)))


def _print(msg: str) -> None:
    print(time.strftime("%Y-%m-%d %H:%M:%S"), msg, flush=True)


def _load_checkpoint(path: Path) -> dict[str, Any] | None:
    """The checkpoint at ``path`` (tensors and plain values only), or None."""
    return torch.load(path, map_location="cpu", weights_only=True) if path.is_file() else None


def _has_export(export_dir: Path) -> bool:
    return all((export_dir / f).is_file() for f in ("weights.hdf5", LOG_NAME, "vocab.txt"))


def _vocabulary(
    sentences: list[list[str]], size: int, ckpt: dict[str, Any] | None, warm_from: Path | None
) -> list[str]:
    """A resumed or warm-started run keeps its vocabulary (the softmax rows depend on it),
    even if the corpus module changed since; a fresh run counts its own."""
    if ckpt is not None:
        return list(ckpt["vocab"])
    if warm_from is not None:
        return (warm_from / "vocab.txt").read_text(encoding="utf-8").split("\n")[:-1]
    return build_vocab(sentences, size)


def _plain_args(args: argparse.Namespace) -> dict[str, Any]:
    """``args`` with every value a plain number, bool, None or string (checkpoint-safe)."""
    return {
        k: v if isinstance(v, int | float | bool | None) else str(v) for k, v in vars(args).items()
    }


def _lr_for(state: dict[str, Any], args: argparse.Namespace) -> float:
    """The schedule's lr, ramped up again after a warm start (fresh softmax and Adam)."""
    lr = _lr_at(state["tokens_seen"], args)
    if state.get("rewarm_from") is not None:
        since = state["tokens_seen"] - state["rewarm_from"]
        lr *= min(1.0, max(since, 1) / args.warmup_tokens)
    return lr


def _heldout_words(data_dir: Path, n_words: int) -> list[list[str]]:
    """The first held-out sentences, until ``n_words`` words are reached."""
    heldout: list[list[str]] = []
    n_eval = 0
    for words in training_corpus.heldout_sentences(data_dir):
        if n_eval >= n_words:
            break
        heldout.append(words)
        n_eval += len(words)
    return heldout


def _resume(
    model: BiLanguageModel, optimizer: torch.optim.Optimizer, ckpt: dict[str, Any]
) -> dict[str, Any]:
    """Model, optimizer and RNGs as checkpointed; returns the checkpointed state."""
    model.load_state_dict(ckpt["model"])
    optimizer.load_state_dict(ckpt["optimizer"])
    _set_rng_state(ckpt["rng"])
    return ckpt["state"]


def _warm_start(model: BiLanguageModel, state: dict[str, Any], export_dir: Path) -> None:
    """The exported encoder, a new softmax and optimizer, the old history."""
    model.bilm.load_state_dict(load_bilm(export_dir).state_dict())
    old = json.loads((export_dir / LOG_NAME).read_text(encoding="utf-8"))
    for key in ("tokens_seen", "wall_time_s", "heldout"):
        state[key] = old.get(key, state[key])
    state["rewarm_from"] = state["tokens_seen"]  # fresh softmax + Adam: warm up again
    _print(f"warm start from {export_dir} ({state['tokens_seen']:,} tokens seen before)")


def run(args: argparse.Namespace, command: str = "") -> int:
    """Train with parsed ``args`` (or only rewrite a card); returns a process exit code."""
    if args.write_card is not None:
        print(write_model_card(args.write_card))
        return 0
    return train(args, command)


def train(args: argparse.Namespace, command: str = "") -> int:
    """Train (resuming or warm-starting when it can) until the budget, a step limit or a
    signal; returns a process exit code."""
    torch.set_num_threads(args.threads)
    data_dir = Path(getattr(args, "data_dir", None) or config_data_dir())  # CONTEXTLENS_DATA_DIR
    # Through ``python -m probing train-elmo`` no command is passed: record the real one.
    command = command or "OMP_WAIT_POLICY=PASSIVE python -m probing " + shlex.join(sys.argv[1:])
    ckpt_dir = args.checkpoint_dir or default_checkpoint_dir()
    ckpt_dir.mkdir(parents=True, exist_ok=True)
    export_dir: Path = args.export_dir
    ckpt_path = ckpt_dir / CHECKPOINT_NAME

    t0 = time.time()
    sentences = list(training_corpus.training_sentences(data_dir))[: args.max_sentences or None]
    ckpt = _load_checkpoint(ckpt_path) if not args.fresh else None
    warm = ckpt is None and not args.fresh and _has_export(export_dir)
    vocab = _vocabulary(sentences, args.vocab_size, ckpt, export_dir if warm else None)
    vocab_ids = {w: i for i, w in enumerate(vocab)}
    table = TypeTable()
    corpus = build_corpus(sentences, table, args.max_len, vocab_ids)
    heldout = _heldout_words(data_dir, args.eval_tokens)
    eval_corpus = build_corpus(heldout, table, args.max_len, vocab_ids)
    del sentences
    _print(
        f"corpus: {corpus.n_sentences:,} sentences, {corpus.n_words:,} words, "
        f"{len(table.words):,} types, vocab {len(vocab):,}; held-out {eval_corpus.n_words:,} "
        f"words; loaded in {time.time() - t0:.0f}s"
    )

    torch.manual_seed(args.seed)
    random.seed(args.seed)
    np.random.seed(args.seed)
    model = BiLanguageModel(MINI_CONFIG, len(vocab), dropout=args.dropout)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    state: dict[str, Any] = {
        "step": 0,
        "epoch": 0,
        "batch_in_epoch": 0,
        "tokens_seen": 0,
        "wall_time_s": 0.0,
        "heldout": [],
    }
    if ckpt is not None:
        state = _resume(model, optimizer, ckpt)
        ckpt = None  # free it
        _print(f"resumed from {ckpt_path} at step {state['step']}, {state['tokens_seen']:,} tokens")
    elif warm:
        _warm_start(model, state, export_dir)
    model.train()

    def log_dict() -> dict[str, Any]:
        return {
            "model": "elmo-mini",
            "command": command,
            "sources": ["brown (train split)", "ud-ewt train", "wordnet-3.0 glosses"],
            "corpus_sentences": corpus.n_sentences,
            "corpus_words": corpus.n_words,
            "vocab_size": len(vocab),
            "eval_words": eval_corpus.n_words,
            "tokens_seen": state["tokens_seen"],
            "wall_time_s": round(state["wall_time_s"], 1),
            "steps": state["step"],
            "threads": args.threads,
            "lr": args.lr,
            "clip": args.clip,
            "dropout": args.dropout,
            "batch_tokens": args.batch_tokens,
            "max_tokens": args.max_tokens,
            "heldout": state["heldout"],
            "options": MINI_CONFIG.to_options(),
        }

    def save_checkpoint() -> None:
        payload = {
            "model": model.state_dict(),
            "optimizer": optimizer.state_dict(),
            "rng": _rng_state(),
            "state": state,
            "vocab": vocab,
            "args": _plain_args(args),
        }
        atomic_write(ckpt_path, lambda tmp: torch.save(payload, tmp))

    def eval_and_export() -> None:
        t = time.time()
        result = evaluate(model, eval_corpus, args.batch_tokens)
        result.update(
            tokens_seen=state["tokens_seen"],
            wall_time_s=round(state["wall_time_s"], 1),
            step=state["step"],
        )
        state["heldout"].append(result)
        export_model(model, vocab, log_dict(), export_dir)
        _print(
            f"held-out ppl fwd {result['ppl_forward']:.1f} bwd {result['ppl_backward']:.1f} "
            f"({time.time() - t:.0f}s); exported to {export_dir}"
        )

    loop = TrainingLoop.from_args(state, args, wall_time="run")
    window = {"t": time.time(), "tokens": 0, "nll_f": 0.0, "nll_b": 0.0, "n": 0, "lr": 0.0}
    batches = epoch_batches(corpus, args.batch_tokens, args.seed, state["epoch"])

    def step() -> int:
        nonlocal batches
        if state["batch_in_epoch"] >= len(batches):
            state["epoch"] += 1
            state["batch_in_epoch"] = 0
            batches = epoch_batches(corpus, args.batch_tokens, args.seed, state["epoch"])
        chars, targets = make_batch(corpus, batches[state["batch_in_epoch"]])
        lr = _lr_for(state, args)
        for group in optimizer.param_groups:
            group["lr"] = lr
        nll_f, nll_b, n = model(chars, targets)
        loss = (nll_f + nll_b) / (2 * n)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip)
        optimizer.step()
        words = int((targets >= 0).sum()) - 2 * len(targets)  # real words, boundaries excluded
        state["batch_in_epoch"] += 1
        window["tokens"] += words
        window["nll_f"] += nll_f.item()
        window["nll_b"] += nll_b.item()
        window["n"] += n
        window["lr"] = lr
        return words

    def log_progress() -> None:
        dt = time.time() - window["t"]
        _print(
            f"step {state['step']} epoch {state['epoch']} tokens {state['tokens_seen']:,} "
            f"| {window['tokens'] / dt:.0f} tok/s | train ppl fwd "
            f"{math.exp(window['nll_f'] / window['n']):.1f} "
            f"bwd {math.exp(window['nll_b'] / window['n']):.1f} | lr {window['lr']:.2e}"
        )
        window.update(t=time.time(), tokens=0, nll_f=0.0, nll_b=0.0, n=0)

    last_export = time.time()

    def export_due() -> bool:
        return time.time() - last_export >= 60 * args.export_minutes

    def export() -> None:
        nonlocal last_export
        eval_and_export()
        last_export = time.time()

    loop.set_callback("log", log_progress)
    loop.set_callback("eval", export)
    loop.set_callback("checkpoint", save_checkpoint)
    loop.set_callback("end", eval_and_export)
    loop.run(step, eval_due=export_due)
    _print(
        f"stopped at step {state['step']}, {state['tokens_seen']:,} tokens; checkpoint {ckpt_path}"
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point: ``python -m probing.training.elmo_lm [options]``."""
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    refuse_shipped_outputs("train-elmo", args)
    command = "OMP_WAIT_POLICY=PASSIVE python -m probing.training.elmo_lm " + shlex.join(argv)
    return run(args, command=command.strip())


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
