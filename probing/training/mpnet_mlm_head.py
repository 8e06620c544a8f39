"""Train mpnet-base-mlm's masked-LM head on the frozen all-mpnet-base-v2.

The head is ``MPNetForMaskedLM``'s: dense 768→768, GELU, LayerNorm, then a decoder tied to
the encoder's (frozen) input word embeddings plus an output bias, which starts at the log
unigram prior. The encoder is never changed, so its last-layer states at the masked positions
are computed once (:mod:`probing.training.mpnet_features`) and the head trains on them for a
few epochs. Data and masking are the minilm-l6-mlm recipe's (:mod:`probing.training.mlm_data`):
packed sequences of the offline corpus (``probing.training.corpus``), 15 % of real pieces
selected (80 % ``<mask>``, 10 % random, 10 % kept). AdamW, linear warm-up then linear decay,
fp32, one CPU thread by default; checkpoints every few minutes and resumes. Held-out metric:
top-1/top-5 on a fixed seeded sample of masked UD-EWT dev pieces, next to the unigram guess;
the head with the best held-out top-5 is exported to ``models/mpnet-base-mlm/``.

Run: ``python -m probing.training.mpnet_mlm_head --data-dir DATA`` (``--help`` for the knobs).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from probing.config import cache_dir
from probing.io import atomic_write, atomic_write_json, atomic_write_text
from probing.models import mpnet_mlm
from probing.models.pypi_parts import MPNET_BASE
from probing.shipped import add_overwrite_argument
from probing.training import corpus as training_corpus
from probing.training.cards import read_card_inputs, render_card, reproducing_command
from probing.training.cli_args import EVAL_SEED, refuse_shipped_outputs
from probing.training.loop import TrainingLoop
from probing.training.mlm_data import (
    PackedCorpus,
    cached_pack,
    first_real_piece,
    masked_sample,
    sample_unigram,
    unigram_guess,
)
from probing.training.mpnet_features import MaskedStates, heldout_states, training_states

LOG_NAME = "training_log.json"
CHECKPOINT_NAME = "checkpoint.pt"


def add_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """The trainer's options (sizes default to what fits ~40 min on one shared core)."""
    a = parser.add_argument
    a("--data-dir", type=Path, default=None, help="data sets folder")
    a("--export-dir", type=Path, default=mpnet_mlm.MPNET_MLM_DIR, help="where the head goes")
    a("--work-dir", type=Path, default=None, help="states and checkpoint (default: the cache)")
    a("--state-pieces", type=int, default=400_000, help="training pieces run through the encoder")
    a("--shard-sequences", type=int, default=64, help="packed sequences per states shard")
    a("--encode-batch", type=int, default=16, help="sequences per encoder batch")
    a("--seq-len", type=int, default=128, help="pieces per packed sequence")
    a("--epochs", type=float, default=4.0, help="passes over the stored states")
    a("--batch-size", type=int, default=256, help="masked positions per head step")
    a("--lr", type=float, default=2e-3, help="AdamW peak lr")
    a("--weight-decay", type=float, default=0.01)
    a("--warmup-frac", type=float, default=0.05, help="share of the steps spent warming up")
    a("--seed", type=int, default=0)
    a("--threads", type=int, default=1, help="torch CPU threads")
    a("--eval-masks", type=int, default=10_000, help="masked EWT-dev pieces scored")
    a("--eval-seed", type=int, default=EVAL_SEED)
    a("--eval-every", type=int, default=50_000, help="trained positions between evaluations")
    a("--checkpoint-minutes", type=float, default=3.0)
    a("--log-every", type=int, default=50, help="steps between log lines")
    a("--max-steps", type=int, default=None, help="stop after this many steps (this run)")
    a("--write-card", type=Path, default=None, metavar="FOLDER", help="only rewrite the card")
    add_overwrite_argument(parser)
    return parser


def _log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


# -- the head on stored states -------------------------------------------------------------


def head_logits(model, states: torch.Tensor) -> torch.Tensor:
    """(N, D) last-layer states -> (N, vocab) logits through the model's head."""
    return model.lm_head(states)


@torch.inference_mode()
def score(model, data: MaskedStates, batch: int = 1024) -> dict[str, float]:
    """Top-1/top-5 accuracy of the head on stored held-out states."""
    hit1 = hit5 = 0
    for s in range(0, data.n, batch):
        x = torch.from_numpy(data.states[s : s + batch]).float()
        gold = torch.from_numpy(data.targets[s : s + batch]).long()
        top5 = head_logits(model, x).topk(5, dim=-1).indices
        hit1 += int((top5[:, 0] == gold).sum())
        hit5 += int((top5 == gold[:, None]).any(dim=-1).sum())
    return {"top1": hit1 / max(data.n, 1), "top5": hit5 / max(data.n, 1), "n": data.n}


def prepare_head(model, counts: np.ndarray, seed: int) -> list[torch.nn.Parameter]:
    """Freeze everything but the head's own tensors; re-initialise them (seeded) with the
    output bias at the log unigram prior. Returns the trainable parameters."""
    torch.manual_seed(seed)
    for p in model.parameters():
        p.requires_grad_(False)
    head = model.lm_head
    with torch.no_grad():
        head.dense.weight.normal_(0.0, model.config.initializer_range)
        head.dense.bias.zero_()
        head.layer_norm.weight.fill_(1.0)
        head.layer_norm.bias.zero_()
        prior = np.log(np.asarray(counts, dtype=np.float64) + 1.0)
        head.bias.copy_(torch.from_numpy(prior - prior.mean()).float())
    params = [head.dense.weight, head.dense.bias, head.layer_norm.weight, head.layer_norm.bias]
    params.append(head.bias)
    for p in params:
        p.requires_grad_(True)
    return params


def make_optimizer(params: list[torch.nn.Parameter], args) -> torch.optim.AdamW:
    """AdamW; weight decay on the dense matrix only (not biases, LayerNorm or the prior)."""
    decay = [params[0]]
    rest = params[1:]
    return torch.optim.AdamW(
        [
            {"params": decay, "weight_decay": args.weight_decay},
            {"params": rest, "weight_decay": 0.0},
        ],
        lr=args.lr,
        betas=(0.9, 0.98),
        eps=1e-6,
    )


def lr_factor(step: int, total: int, warmup_frac: float) -> float:
    warm = max(1, int(total * warmup_frac))
    if step < warm:
        return (step + 1) / warm
    return max(0.0, 1.0 - (step - warm) / max(1, total - warm))


# -- the run -------------------------------------------------------------------------------


def default_work_dir() -> Path:
    return cache_dir() / "train" / "mpnet-base-mlm"


@dataclass
class Prepared:
    """Everything the head trains and is scored on (see :func:`prepare`)."""

    base_sha: str
    tokenizer: Any
    model: Any
    corpus: PackedCorpus
    guess: list[int]
    uni: dict[str, float]
    held: MaskedStates
    data: MaskedStates
    info: dict[str, Any]


def prepare(args: argparse.Namespace, work: Path) -> Prepared:
    """The hash-checked encoder with a fresh head, the packed corpus, and the stored
    held-out and training states (computed now where they are not stored yet)."""
    from transformers import AutoTokenizer

    folder = mpnet_mlm.mpnet_base_folder()
    base_sha = mpnet_mlm.check_base(folder, MPNET_BASE.sha256)
    tokenizer = AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
    first_real, mask_id, pad_id = (
        first_real_piece(tokenizer),
        tokenizer.mask_token_id,
        tokenizer.pad_token_id,
    )
    t0 = time.time()
    corpus = cached_pack(
        tokenizer, training_corpus.training_sentences(args.data_dir), args.seq_len, work
    )
    guess = unigram_guess(corpus.counts)
    sample = masked_sample(
        tokenizer,
        training_corpus.heldout_sentences(args.data_dir),
        args.eval_masks,
        args.eval_seed,
        first_real,
    )
    uni = sample_unigram(sample, guess)
    _log(f"corpus packed ({corpus.n_sequences} sequences) in {time.time() - t0:.0f}s")

    model = mpnet_mlm.build_model(folder)
    model.eval()  # no dropout: the states are the frozen encoder's
    t1 = time.time()
    held = heldout_states(
        model.mpnet, sample, work / f"heldout-{args.eval_seed}-{sample.n}.npz", pad_id
    )
    _log(f"held-out states: {held.n} masks in {time.time() - t1:.0f}s")
    t2 = time.time()
    data, state_pieces = training_states(
        model.mpnet,
        corpus,
        work / "states",
        n_pieces=args.state_pieces,
        per_shard=args.shard_sequences,
        batch_size=args.encode_batch,
        seed=args.seed,
        vocab_size=mask_id,  # <mask> is the last id: random replacements stay below it
        mask_id=mask_id,
        first_real=first_real,
        pad_id=pad_id,
        log=_log,
    )
    states_s = time.time() - t2
    _log(f"training states: {data.n} masks over {state_pieces:,} pieces ({states_s:.0f}s)")
    info = {
        "sentences": corpus.n_sentences,
        "words": corpus.n_words,
        "pieces": corpus.n_pieces,
        "sequences": corpus.n_sequences,
        "state_pieces": state_pieces,
        "state_masks": data.n,
        "states_wall_s": round(states_s, 1),
    }
    return Prepared(base_sha, tokenizer, model, corpus, guess, uni, held, data, info)


def _resume(ckpt: Path, params, optimizer, state: dict[str, Any]) -> None:
    """The head, the optimizer and the run's state from ``ckpt``, when it is there."""
    if not ckpt.is_file():
        return
    saved = torch.load(ckpt, map_location="cpu", weights_only=True)
    with torch.no_grad():
        for p, t in zip(params, saved["params"], strict=True):
            p.copy_(t)
    optimizer.load_state_dict(saved["optimizer"])
    state.update(json.loads(saved["state_json"]))
    _log(f"resumed from {ckpt} at step {state['step']}")


def train(args: argparse.Namespace, command: str) -> int:
    """Train (or, with ``--write-card``, only rewrite the card); returns an exit code."""
    if args.write_card is not None:
        log = read_card_inputs(args.write_card, LOG_NAME)
        write_card(args.write_card, log)
        print(args.write_card / "README.md")
        return 0
    torch.set_num_threads(args.threads)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    work: Path = args.work_dir or default_work_dir()
    work.mkdir(parents=True, exist_ok=True)
    prep = prepare(args, work)
    return _train_head(args, command, work, prep)


def _payload(
    args: argparse.Namespace, command: str, prep: Prepared, state: dict, total_steps: int
) -> dict[str, Any]:
    """The training log: what ran, on what, and every evaluation."""
    return {
        "model": "mpnet-base-mlm",
        "command": command,
        "args": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
        "base_sha256": prep.base_sha,
        "corpus": prep.info,
        "unigram_baseline": prep.uni,
        "unigram_top5_pieces": prep.tokenizer.convert_ids_to_tokens(prep.guess),
        "total_steps": total_steps,
        "step": state["step"],
        "tokens_seen": state["tokens_seen"],
        "wall_time_s": round(state["wall_time_s"], 1),
        "evals": state["evals"],
        "exported": state["exported"],
    }


def _evaluate(
    args: argparse.Namespace, prep: Prepared, state: dict, payload: Callable[[], dict]
) -> None:
    """Score the head on the held-out states; export it when its top-5 is the best so far;
    rewrite the training log and the card."""
    res, uni = score(prep.model, prep.held), prep.uni
    state["evals"].append({"step": state["step"], "tokens_seen": state["tokens_seen"], **res})
    _log(
        f"EVAL step {state['step']}: top1 {res['top1']:.4f} top5 {res['top5']:.4f} "
        f"(unigram {uni['top1']:.4f}/{uni['top5']:.4f}, n={res['n']})"
    )
    if res["top5"] > state["best_top5"] and state["step"] > 0:
        state["best_top5"] = res["top5"]
        training = {
            "step": state["step"],
            # pieces the training states came from (what the registry's summary reports);
            # the masked positions the head trained on, epochs counted, are the next field
            "tokens_seen": prep.info["state_pieces"],
            "positions_trained": state["tokens_seen"],
            "eval": res,
            "unigram_baseline": uni,
            "wall_time_s": round(state["wall_time_s"], 1),
        }
        man = mpnet_mlm.save_head(
            prep.model, args.export_dir, {"base_sha256": prep.base_sha, "training": training}
        )
        state["exported"] = {**training, "head_bytes": man["head_bytes"]}
    atomic_write_json(args.export_dir / LOG_NAME, payload())
    if state["exported"] is not None:
        write_card(args.export_dir, payload())


def _train_head(args: argparse.Namespace, command: str, work: Path, prep: Prepared) -> int:
    """Train the head on the stored states (resuming from the checkpoint), evaluating and
    exporting the best head as it goes."""
    model, data = prep.model, prep.data
    params = prepare_head(model, prep.corpus.counts, args.seed)
    optimizer = make_optimizer(params, args)
    steps_per_epoch = max(1, data.n // args.batch_size)  # full batches: each trains batch_size
    total_steps = int(round(args.epochs * steps_per_epoch))
    state: dict[str, Any] = {
        "step": 0,
        "tokens_seen": 0,
        "wall_time_s": 0.0,
        "evals": [],
        "best_top5": -1.0,
        "exported": None,
    }
    ckpt = work / CHECKPOINT_NAME
    _resume(ckpt, params, optimizer, state)

    def payload() -> dict[str, Any]:
        return _payload(args, command, prep, state, total_steps)

    def do_eval() -> None:
        _evaluate(args, prep, state, payload)

    def checkpoint() -> None:
        blob = {
            "params": [p.detach().clone() for p in params],
            "optimizer": optimizer.state_dict(),
            "state_json": json.dumps(state),
        }
        atomic_write(ckpt, lambda tmp: torch.save(blob, tmp))

    args.export_dir.mkdir(parents=True, exist_ok=True)
    if not state["evals"]:
        do_eval()  # the untrained head (log-prior bias): the curve's start
    loop = TrainingLoop(
        state,
        max_tokens=total_steps * args.batch_size,
        max_steps=args.max_steps,
        log_every=args.log_every,
        checkpoint_minutes=args.checkpoint_minutes,
    )
    window = {"loss": 0.0, "n": 0}
    next_eval = [(state["tokens_seen"] // args.eval_every + 1) * args.eval_every]

    def step() -> int:
        s = state["step"]
        epoch, pos = divmod(s, steps_per_epoch)
        perm = np.random.default_rng([args.seed, epoch]).permutation(data.n)
        idx = np.sort(perm[pos * args.batch_size : (pos + 1) * args.batch_size])
        x = torch.from_numpy(data.states[idx]).float()
        y = torch.from_numpy(data.targets[idx]).long()
        for g in optimizer.param_groups:
            g["lr"] = args.lr * lr_factor(s, total_steps, args.warmup_frac)
        loss = torch.nn.functional.cross_entropy(head_logits(model, x), y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        optimizer.step()
        window["loss"] += loss.item()
        window["n"] += 1
        return len(idx)

    def log_progress() -> None:
        _log(f"step {state['step']}/{total_steps} loss {window['loss'] / max(window['n'], 1):.3f}")
        window.update(loss=0.0, n=0)

    def scheduled_eval() -> None:
        do_eval()
        next_eval[0] = (state["tokens_seen"] // args.eval_every + 1) * args.eval_every

    def final_eval() -> None:
        if state["evals"][-1]["step"] != state["step"]:
            do_eval()

    loop.set_callback("log", log_progress)
    loop.set_callback("eval", scheduled_eval)
    loop.set_callback("checkpoint", checkpoint)
    loop.set_callback("end", final_eval)
    loop.run(step, eval_due=lambda: state["tokens_seen"] >= next_eval[0])
    _log(f"stopped at step {state['step']}/{total_steps}; best top-5 {state['best_top5']:.4f}")
    return 0


# -- the card ------------------------------------------------------------------------------


def _pct(x: float) -> str:
    return f"{100 * x:.1f} %"


def card_values(log: dict[str, Any]) -> dict[str, Any]:
    """The ``${…}`` fields of ``card_templates/mpnet-base-mlm.md`` from a training log."""
    ex, uni, c, a = log["exported"], log["unigram_baseline"], log["corpus"], log["args"]
    curve = "\n".join(
        f"| {e['step']:,} | {e['tokens_seen']:,} | {_pct(e['top1'])} | {_pct(e['top5'])} |"
        for e in log["evals"]
    )
    cloze = log.get("cloze") or {}
    cloze_text = (
        f"Top-1 {_pct(cloze['top1'])}, top-5 {_pct(cloze['top5'])} on {cloze['n_masks']:,} "
        f"masked one-piece words of {cloze['n_sentences']} UD-EWT {cloze['split']} sentences "
        f"(the report's cloze part, `{cloze['command']}`)."
        if cloze
        else "Not measured yet."
    )
    return {
        "base_sha256": log["base_sha256"],
        "sentences": f"{c['sentences']:,}",
        "words": f"{c['words']:,}",
        "pieces": f"{c['pieces']:,}",
        "sequences": f"{c['sequences']:,}",
        "state_pieces": f"{c['state_pieces']:,}",
        "state_masks": f"{c['state_masks']:,}",
        "states_min": f"{c['states_wall_s'] / 60:.0f}",
        "epochs": a["epochs"],
        "batch_size": a["batch_size"],
        "lr": a["lr"],
        "weight_decay": a["weight_decay"],
        "warmup_pct": f"{100 * a['warmup_frac']:.0f}",
        "step": f"{ex['step']:,}",
        "total_steps": f"{log['total_steps']:,}",
        "train_min": f"{log['wall_time_s'] / 60:.1f}",
        "head_kb": f"{ex['head_bytes'] / 1024:.0f}",
        "eval_masks": f"{ex['eval']['n']:,}",
        "eval_seed": a["eval_seed"],
        "uni_pieces": ", ".join(f"`{p}`" for p in log["unigram_top5_pieces"]),
        "uni_top1": _pct(uni["top1"]),
        "uni_top5": _pct(uni["top5"]),
        "top1": _pct(ex["eval"]["top1"]),
        "top5": _pct(ex["eval"]["top5"]),
        "curve": curve,
        "cloze": cloze_text,
        "command": reproducing_command(log["command"]),
    }


def write_card(export_dir: Path, log: dict[str, Any]) -> None:
    atomic_write_text(export_dir / "README.md", render_card("mpnet-base-mlm", card_values(log)))


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m probing.training.mpnet_mlm_head [flags]``; returns the exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(
        prog="python -m probing.training.mpnet_mlm_head", description=__doc__.split("\n\n")[0]
    )
    add_arguments(parser)
    args = parser.parse_args(argv)
    refuse_shipped_outputs("train-mlm-head", args)
    return train(args, ("python -m probing.training.mpnet_mlm_head " + shlex.join(argv)).strip())


if __name__ == "__main__":
    sys.exit(main())
