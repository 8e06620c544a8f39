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
import signal
import sys
import time
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor, nn

from probing.config import MODELS_DIR, cache_dir
from probing.config import data_dir as config_data_dir
from probing.encoders.elmo import (
    BOS_TOKEN,
    EOS_TOKEN,
    ElmoBiLm,
    ElmoConfig,
    char_ids,
    load_bilm,
    save_elmo,
)
from probing.io import atomic_write_text
from probing.training.cards import elmo_card_values, render_card

UNK_TOKEN = "<UNK>"
SPECIALS = (BOS_TOKEN, EOS_TOKEN, UNK_TOKEN)  # vocab ids 0, 1, 2
LOG_NAME = "training_log.json"
CHECKPOINT_NAME = "checkpoint.pt"
DEFAULT_EXPORT_DIR = MODELS_DIR / "elmo-mini"

MINI_CONFIG = ElmoConfig(
    char_embed_dim=16,
    filters=((1, 32), (2, 32), (3, 64), (4, 128), (5, 256)),
    n_highway=2,
    activation="relu",
    n_characters=262,
    max_characters_per_token=50,
    lstm_dim=512,
    projection_dim=128,
    n_layers=2,
    cell_clip=3.0,
    proj_clip=3.0,
    use_skip_connections=True,
)


def default_checkpoint_dir() -> Path:
    return cache_dir() / "train" / "elmo-mini"


# -- data ---------------------------------------------------------------------------------


@dataclass
class Corpus:
    """Sentences as word-type ids: sentence ``i`` is ``types[offsets[i]:offsets[i + 1]]``.

    ``type_chars[t]`` are the char ids of type ``t`` (types 0 and 1 are ``<S>``/``</S>``);
    ``type_vocab[t]`` is its LM vocabulary id (``<UNK>`` = 2 for rare words).
    """

    types: np.ndarray  # (n tokens,) int32
    offsets: np.ndarray  # (n sentences + 1,) int64
    type_chars: np.ndarray  # (n types, 50) int16
    type_vocab: np.ndarray  # (n types,) int64

    @property
    def n_sentences(self) -> int:
        return len(self.offsets) - 1

    @property
    def n_words(self) -> int:
        return len(self.types)

    def lengths(self) -> np.ndarray:
        return np.diff(self.offsets)


class TypeTable:
    """Word strings -> type ids, growing as new words are seen."""

    def __init__(self) -> None:
        self.ids: dict[str, int] = {BOS_TOKEN: 0, EOS_TOKEN: 1}
        self.words: list[str] = [BOS_TOKEN, EOS_TOKEN]

    def id(self, word: str) -> int:
        i = self.ids.get(word)
        if i is None:
            i = self.ids[word] = len(self.words)
            self.words.append(word)
        return i


def _chunks(words: list[str], max_len: int) -> Iterator[list[str]]:
    """Over-long sentences are cut into pieces of at most ``max_len`` words."""
    for start in range(0, len(words), max_len):
        yield words[start : start + max_len]


def build_corpus(
    sentences: Iterable[list[str]], table: TypeTable, max_len: int, vocab: dict[str, int]
) -> Corpus:
    """Index ``sentences`` with ``table`` and map types into the LM ``vocab``."""
    types: list[int] = []
    offsets = [0]
    for words in sentences:
        for piece in _chunks(words, max_len):
            types.extend(table.id(w) for w in piece)
            offsets.append(len(types))
    type_chars = np.array([char_ids(w) for w in table.words], dtype=np.int16)
    unk = vocab[UNK_TOKEN]
    type_vocab = np.array([vocab.get(w, unk) for w in table.words], dtype=np.int64)
    return Corpus(
        np.array(types, dtype=np.int32), np.array(offsets, dtype=np.int64), type_chars, type_vocab
    )


def build_vocab(sentences: Iterable[list[str]], size: int) -> list[str]:
    """``<S>``, ``</S>``, ``<UNK>``, then the ``size`` most frequent words (ties by string)."""
    counts = Counter(w for words in sentences for w in words)
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    return list(SPECIALS) + [w for w, _ in ranked[:size] if w not in SPECIALS]


def epoch_batches(corpus: Corpus, batch_tokens: int, seed: int, epoch: int) -> list[np.ndarray]:
    """Sentence-index batches for one epoch, deterministic in (seed, epoch).

    Sentences are shuffled, then sorted by length within pools of ~100 batches so a batch
    holds similar lengths (little padding), then the batches are shuffled.
    """
    rng = np.random.default_rng([seed, epoch])
    order = rng.permutation(corpus.n_sentences)
    lengths = corpus.lengths() + 2  # with <S> and </S>
    pool_size = max(1, 100 * batch_tokens // max(1, int(lengths.mean())))
    batches: list[np.ndarray] = []
    for start in range(0, len(order), pool_size):
        pool = order[start : start + pool_size]
        pool = pool[np.argsort(lengths[pool], kind="stable")]
        batch: list[int] = []
        longest = 0
        for i in pool:
            longest = max(longest, int(lengths[i]))
            if batch and longest * (len(batch) + 1) > batch_tokens:
                batches.append(np.array(batch))
                batch, longest = [], int(lengths[i])
            batch.append(int(i))
        if batch:
            batches.append(np.array(batch))
    rng.shuffle(batches)
    return batches


def make_batch(corpus: Corpus, sentence_ids: np.ndarray) -> tuple[Tensor, Tensor]:
    """Char ids int64 (B, T, 50) with <S>/</S>, and vocab targets int64 (B, T) (-1 = pad)."""
    rows = [corpus.types[corpus.offsets[i] : corpus.offsets[i + 1]] for i in sentence_ids]
    T = max(len(r) for r in rows) + 2
    type_ids = np.full((len(rows), T), -1, dtype=np.int64)
    for b, r in enumerate(rows):
        type_ids[b, : len(r) + 2] = np.concatenate([[0], r, [1]])
    pad = type_ids < 0
    safe = np.where(pad, 0, type_ids)
    chars = corpus.type_chars[safe].astype(np.int64)
    chars[pad] = 0
    targets = np.where(pad, -1, corpus.type_vocab[safe])
    return torch.from_numpy(chars), torch.from_numpy(targets)


# -- model --------------------------------------------------------------------------------


def default_cutoffs(vocab_size: int) -> list[int]:
    """Adaptive-softmax clusters: 2k frequent words, the next 8k, the rest."""
    return [c for c in (2000, 10000) if c < vocab_size - 1] or [max(1, vocab_size // 2)]


class BiLanguageModel(nn.Module):
    """ELMo biLM + one adaptive softmax over the LM vocabulary, shared by both directions."""

    def __init__(
        self, config: ElmoConfig, vocab_size: int, dropout: float = 0.1, div_value: float = 4.0
    ) -> None:
        super().__init__()
        self.bilm = ElmoBiLm(config, dropout=dropout)
        self.dropout = dropout
        self.softmax = nn.AdaptiveLogSoftmaxWithLoss(
            config.projection_dim, vocab_size, default_cutoffs(vocab_size), div_value=div_value
        )

    def forward(self, chars: Tensor, targets: Tensor) -> tuple[Tensor, Tensor, int]:
        """Summed NLL of the forward and the backward LM, and the number of predictions each.

        chars: (B, T, 50) with <S>/</S>; targets: (B, T) vocab ids. The forward LM predicts
        token t+1 from its top layer at t; the backward LM token t-1 from its top layer at t.
        """
        out = self.bilm(chars)
        top_f, top_b = out.forward[-1], out.backward[-1]
        if self.training and self.dropout > 0:
            top_f, top_b = F.dropout(top_f, self.dropout), F.dropout(top_b, self.dropout)
        pred = out.mask[:, 1:]  # (B, T-1): positions t+1 (fwd target) / t (bwd source) exist
        nll_f = -self.softmax(top_f[:, :-1][pred], targets[:, 1:][pred]).output.sum()
        nll_b = -self.softmax(top_b[:, 1:][pred], targets[:, :-1][pred]).output.sum()
        return nll_f, nll_b, int(pred.sum())


@torch.no_grad()
def evaluate(model: BiLanguageModel, corpus: Corpus, batch_tokens: int) -> dict[str, float]:
    """Held-out perplexity of each direction over every prediction in ``corpus``."""
    was_training = model.training
    model.eval()
    nll_f = nll_b = 0.0
    n = 0
    for ids in epoch_batches(corpus, batch_tokens, seed=0, epoch=0):
        chars, targets = make_batch(corpus, ids)
        f, b, k = model(chars, targets)
        nll_f, nll_b, n = nll_f + float(f), nll_b + float(b), n + k
    model.train(was_training)
    return {
        "ppl_forward": math.exp(nll_f / n),
        "ppl_backward": math.exp(nll_b / n),
        "predictions": n,
    }


# -- checkpoint, export, model card -------------------------------------------------------


def _atomic_json(path: Path, data: Any) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, path)


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
    tmp = folder / ".vocab.txt.tmp"
    tmp.write_text("\n".join(vocab) + "\n", encoding="utf-8")
    os.replace(tmp, folder / "vocab.txt")
    _atomic_json(folder / LOG_NAME, log)
    write_model_card(folder)


def write_model_card(folder: str | os.PathLike[str] = DEFAULT_EXPORT_DIR) -> Path:
    """(Re)write ``folder/README.md`` from ``folder/training_log.json``."""
    folder = Path(folder)
    log = json.loads((folder / LOG_NAME).read_text(encoding="utf-8"))
    cfg = ElmoConfig.from_json(folder / "options.json")
    options = {**vars(cfg), "n_filters": cfg.n_filters, "output_dim": cfg.output_dim}
    size_mb = (folder / "weights.hdf5").stat().st_size / 1e6
    card_folder = "models/elmo-mini" if folder.resolve() == DEFAULT_EXPORT_DIR.resolve() else folder
    text = render_card("elmo-mini", elmo_card_values(log, options, size_mb, str(card_folder)))
    return atomic_write_text(folder / "README.md", text)


# -- training loop ------------------------------------------------------------------------


def add_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Add the train-elmo options to ``parser`` (used by ``python -m probing train-elmo``)."""
    a = parser.add_argument
    # SUPPRESS: under ``python -m probing --data-dir X train-elmo`` a default here would
    # overwrite the top-level option's value.
    a(
        "--data-dir",
        type=Path,
        default=argparse.SUPPRESS,
        help="data sets folder (default: CONTEXTLENS_DATA_DIR)",
    )
    a(
        "--checkpoint-dir",
        type=Path,
        default=None,
        help="default ~/.cache/contextlens/train/elmo-mini",
    )
    a("--export-dir", type=Path, default=DEFAULT_EXPORT_DIR, help="where the model is exported")
    a("--fresh", action="store_true", help="ignore existing checkpoint and export; start over")
    a("--vocab-size", type=int, default=50_000, help="LM softmax vocabulary (most frequent words)")
    a("--max-len", type=int, default=60, help="longer sentences are cut into pieces")
    a("--batch-tokens", type=int, default=2048, help="padded tokens per batch")
    a("--lr", type=float, default=2e-3)
    a("--warmup-tokens", type=int, default=500_000)
    a("--max-tokens", type=int, default=20_000_000, help="stop after this many tokens (cosine end)")
    a("--min-lr-ratio", type=float, default=0.05, help="final lr as a fraction of --lr")
    a("--clip", type=float, default=1.0, help="gradient norm clip")
    a("--dropout", type=float, default=0.1)
    a("--seed", type=int, default=0)
    a(
        "--threads",
        type=int,
        default=1,
        help="torch threads (default 1; set OMP_WAIT_POLICY=PASSIVE)",
    )
    a("--checkpoint-minutes", type=float, default=5.0)
    a("--export-minutes", type=float, default=10.0, help="evaluate + export this often")
    a("--eval-tokens", type=int, default=10_000, help="held-out words of EWT dev to score")
    a("--log-every", type=int, default=50, help="print progress every N steps")
    a("--max-steps", type=int, default=None, help="stop after N steps this run (smoke tests)")
    a(
        "--max-sentences",
        type=int,
        default=None,
        help="use only the first N sentences (smoke tests)",
    )
    a(
        "--write-card",
        type=Path,
        default=None,
        metavar="FOLDER",
        help="only regenerate FOLDER/README.md from its training_log.json, then exit",
    )
    return parser


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


def run(args: argparse.Namespace, command: str = "") -> int:
    """Train with parsed ``args``; returns a process exit code."""
    if args.write_card is not None:
        print(write_model_card(args.write_card))
        return 0
    torch.set_num_threads(args.threads)
    from probing.training.corpus import heldout_sentences, training_sentences

    data_dir = Path(getattr(args, "data_dir", None) or config_data_dir())  # CONTEXTLENS_DATA_DIR
    # Through ``python -m probing train-elmo`` no command is passed: record the real one.
    command = command or "OMP_WAIT_POLICY=PASSIVE python -m probing " + shlex.join(sys.argv[1:])
    ckpt_dir = args.checkpoint_dir or default_checkpoint_dir()
    ckpt_dir.mkdir(parents=True, exist_ok=True)
    export_dir: Path = args.export_dir
    ckpt_path = ckpt_dir / CHECKPOINT_NAME

    t0 = time.time()
    sentences = list(training_sentences(data_dir))
    if args.max_sentences:
        sentences = sentences[: args.max_sentences]
    ckpt = None
    if not args.fresh and ckpt_path.is_file():
        ckpt = torch.load(ckpt_path, map_location="cpu", weights_only=True)
    warm = (
        ckpt is None
        and not args.fresh
        and all((export_dir / f).is_file() for f in ("weights.hdf5", LOG_NAME, "vocab.txt"))
    )
    # A resumed or warm-started run keeps its vocabulary (the softmax rows depend on it),
    # even if the corpus module changed since.
    if ckpt is not None:
        vocab = list(ckpt["vocab"])
    elif warm:
        vocab = (export_dir / "vocab.txt").read_text(encoding="utf-8").split("\n")[:-1]
    else:
        vocab = build_vocab(sentences, args.vocab_size)
    vocab_ids = {w: i for i, w in enumerate(vocab)}
    table = TypeTable()
    corpus = build_corpus(sentences, table, args.max_len, vocab_ids)
    heldout: list[list[str]] = []
    n_eval = 0
    for words in heldout_sentences(data_dir):
        if n_eval >= args.eval_tokens:
            break
        heldout.append(words)
        n_eval += len(words)
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
        model.load_state_dict(ckpt["model"])
        optimizer.load_state_dict(ckpt["optimizer"])
        _set_rng_state(ckpt["rng"])
        state = ckpt["state"]
        ckpt = None  # free it
        _print(f"resumed from {ckpt_path} at step {state['step']}, {state['tokens_seen']:,} tokens")
    elif warm:
        # Warm start: the exported encoder, a new softmax and optimizer, the old history.
        model.bilm.load_state_dict(load_bilm(export_dir).state_dict())
        old = json.loads((export_dir / LOG_NAME).read_text(encoding="utf-8"))
        for key in ("tokens_seen", "wall_time_s", "heldout"):
            state[key] = old.get(key, state[key])
        state["rewarm_from"] = state["tokens_seen"]  # fresh softmax + Adam: warm up again
        _print(f"warm start from {export_dir} ({state['tokens_seen']:,} tokens seen before)")
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
        tmp = ckpt_dir / f".{CHECKPOINT_NAME}.tmp"
        torch.save(
            {
                "model": model.state_dict(),
                "optimizer": optimizer.state_dict(),
                "rng": _rng_state(),
                "state": state,
                "vocab": vocab,
                "args": {
                    k: v if isinstance(v, int | float | bool | None) else str(v)
                    for k, v in vars(args).items()
                },
            },
            tmp,
        )
        os.replace(tmp, ckpt_path)

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

    stop = {"now": False}

    def on_signal(signum: int, _frame: Any) -> None:
        stop["now"] = True  # finish the step, checkpoint, exit

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)

    run_start = last_ckpt = last_export = time.time()
    wall_before = state["wall_time_s"]  # wall time of earlier runs (resume, warm start)
    window_t, window_tokens, window_nll, window_n = time.time(), 0, [0.0, 0.0], 0
    steps_this_run = 0
    batches = epoch_batches(corpus, args.batch_tokens, args.seed, state["epoch"])
    while state["tokens_seen"] < args.max_tokens and not stop["now"]:
        if args.max_steps is not None and steps_this_run >= args.max_steps:
            break
        if state["batch_in_epoch"] >= len(batches):
            state["epoch"] += 1
            state["batch_in_epoch"] = 0
            batches = epoch_batches(corpus, args.batch_tokens, args.seed, state["epoch"])
        chars, targets = make_batch(corpus, batches[state["batch_in_epoch"]])
        lr = _lr_at(state["tokens_seen"], args)
        if state.get("rewarm_from") is not None:
            since = state["tokens_seen"] - state["rewarm_from"]
            lr *= min(1.0, max(since, 1) / args.warmup_tokens)
        for group in optimizer.param_groups:
            group["lr"] = lr
        nll_f, nll_b, n = model(chars, targets)
        loss = (nll_f + nll_b) / (2 * n)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip)
        optimizer.step()

        words = int((targets >= 0).sum()) - 2 * len(targets)  # real words, boundaries excluded
        state["step"] += 1
        state["batch_in_epoch"] += 1
        state["tokens_seen"] += words
        state["wall_time_s"] = wall_before + time.time() - run_start
        steps_this_run += 1
        window_tokens += words
        window_nll[0] += nll_f.item()
        window_nll[1] += nll_b.item()
        window_n += n
        if state["step"] % args.log_every == 0:
            dt = time.time() - window_t
            _print(
                f"step {state['step']} epoch {state['epoch']} tokens {state['tokens_seen']:,} "
                f"| {window_tokens / dt:.0f} tok/s | train ppl fwd "
                f"{math.exp(window_nll[0] / window_n):.1f} bwd {math.exp(window_nll[1] / window_n):.1f} "
                f"| lr {lr:.2e}"
            )
            window_t, window_tokens, window_nll, window_n = time.time(), 0, [0.0, 0.0], 0
        now = time.time()
        if now - last_export >= 60 * args.export_minutes:
            eval_and_export()
            last_export = now = time.time()
        if now - last_ckpt >= 60 * args.checkpoint_minutes:
            save_checkpoint()
            last_ckpt = time.time()

    eval_and_export()
    save_checkpoint()
    _print(
        f"stopped at step {state['step']}, {state['tokens_seen']:,} tokens; checkpoint {ckpt_path}"
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point: ``python -m probing.training.elmo_lm [options]``."""
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(argv)
    command = "OMP_WAIT_POLICY=PASSIVE python -m probing.training.elmo_lm " + shlex.join(argv)
    return run(args, command=command.strip())


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
