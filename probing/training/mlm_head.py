"""Train the masked-LM head of the embedded minilm-l6 (and retrain its top encoder layers).

all-MiniLM-L6-v2 was tuned for sentence embeddings; its last layers no longer carry word
identity well, so a head on the frozen encoder plateaus low (~9 % top-1). This script trains
BERT-style MLM on the offline corpus (``probing.training.corpus``) with the top ``N`` layers
unfrozen, and exports only what changed as a delta (``probing.models.mlm_delta``) to
``models/minilm-l6-mlm/`` along with ``training_log.json`` and a model card.

Recipe: 15 % of word pieces selected (80 % -> [MASK], 10 % -> random piece, 10 % kept);
sequences packed from consecutive sentences (``[CLS] s1 [SEP] s2 [SEP] ...``, at most
``--seq-len`` pieces); decoder tied to the frozen input embeddings; output bias initialised to
the log unigram prior; AdamW, linear warmup then linear/cosine decay over ``--max-tokens``;
fp32. It checkpoints atomically every few minutes and resumes automatically; with no
checkpoint it warm-starts from the exported delta. Held-out metric: top-1/top-5 on a fixed,
seeded sample of masked EWT-dev word pieces, next to the unigram (most-frequent-piece) guess.

Run: ``python -m probing.training.mlm_head --data-dir DATA`` (``--help`` for the knobs).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shlex
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from probing.config import cache_dir
from probing.io import atomic_write, atomic_write_json, atomic_write_text
from probing.models.mlm_delta import apply_delta, load_minilm_tokenizer, read_manifest, save_delta
from probing.training import corpus as training_corpus
from probing.training.cards import mlm_card_values, read_card_inputs, render_card
from probing.training.cli_args import add_train_mlm_head_arguments, refuse_shipped_outputs
from probing.training.loop import TrainingLoop
from probing.training.mlm_data import (  # noqa: F401 - re-exported for callers of this module
    EVAL_MASKS,
    EVAL_SEED,
    FIRST_REAL_PIECE,
    MLM_PROB,
    MaskedSample,
    PackedCorpus,
    cached_pack,
    evaluate_mlm,
    evaluate_sample,
    mask_batch,
    masked_sample,
    pack_corpus,
    sample_unigram,
    tokenize_sentences,
    unigram_baseline,
    unigram_guess,
)
from probing.training.mlm_model import (  # re-exported for callers of this module
    build_model,
    lr_factor,
    make_optimizer,
    set_train_mode,
    trainable_state,
)

LOG_NAME = "training_log.json"
CHECKPOINT_NAME = "checkpoint.pt"


def default_checkpoint_dir() -> Path:
    return cache_dir() / "train" / "minilm-l6-mlm"


# -- checkpoint / export --------------------------------------------------------------------


def save_checkpoint(path: Path, model, optimizer, state: dict[str, Any]) -> None:
    """Trainable params + optimizer + JSON state (step, tokens, wall time, RNG, schedule...)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = {
        "trainable": trainable_state(model),
        "optimizer": optimizer.state_dict(),
        "torch_rng": torch.get_rng_state(),
        "state_json": json.dumps(state),
    }
    atomic_write(path, lambda tmp: torch.save(payload, tmp))


def load_checkpoint(path: Path) -> dict[str, Any]:
    ckpt = torch.load(path, map_location="cpu", weights_only=True)
    ckpt["state"] = json.loads(ckpt.pop("state_json"))
    return ckpt


def write_model_card(export_dir: Path, log: dict[str, Any]) -> None:
    """Regenerate ``README.md`` from the training log (what, on what, how long, how good)."""
    atomic_write_text(
        export_dir / "README.md", render_card("minilm-l6-mlm", mlm_card_values(log, EVAL_SEED))
    )


# -- the loop -------------------------------------------------------------------------------


add_arguments = add_train_mlm_head_arguments  # the options live in a torch-free module


def _log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def _eval_points(eval_every: int) -> list[int]:
    """0, then 250k, 500k, ... doubling up to ``eval_every``, then every ``eval_every``."""
    points, t = [0], 250_000
    while t < eval_every:
        points.append(t)
        t *= 2
    return points


def next_eval_after(tokens: int, eval_every: int) -> int:
    for p in _eval_points(eval_every):
        if p > tokens:
            return p
    return (tokens // eval_every + 1) * eval_every


def train(args: argparse.Namespace, command: str) -> int:
    """Train (or, with ``--write-card``, only rewrite the card); returns an exit code."""
    if args.write_card is not None:
        log = read_card_inputs(args.write_card, LOG_NAME)
        write_model_card(args.write_card, log)
        print(args.write_card / "README.md")
        return 0
    return _train(args, command)


def _resume(ckpt_path: Path, model, optimizer, state: dict[str, Any], rng, args) -> None:
    """Trainable weights, optimizer, RNGs and state from the checkpoint at ``ckpt_path``."""
    ckpt = load_checkpoint(ckpt_path)
    saved = ckpt["state"]
    if saved["unfreeze_top"] != args.unfreeze_top or saved["seq_len"] != args.seq_len:
        raise SystemExit(
            f"{ckpt_path} was trained with --unfreeze-top {saved['unfreeze_top']} "
            f"--seq-len {saved['seq_len']}; pass those or another --checkpoint-dir."
        )
    params = dict(model.named_parameters())
    with torch.no_grad():
        for name, tensor in ckpt["trainable"].items():
            params[name].copy_(tensor)
    optimizer.load_state_dict(ckpt["optimizer"])
    torch.set_rng_state(ckpt["torch_rng"])
    state.update(saved)
    rng.bit_generator.state = saved["np_rng"]
    random.setstate(_py_state_from_json(saved["py_rng"]))
    _log(f"resumed from {ckpt_path}: step {state['step']}, {state['tokens_seen']:,} tokens")
    if state["schedule"][-1]["max_tokens"] != args.max_tokens:
        state["schedule"].append(
            {
                "from_step": state["step"],
                "from_tokens": state["tokens_seen"],
                "max_tokens": args.max_tokens,
            }
        )
        _log(f"lr schedule now decays to 0 at {args.max_tokens:,} tokens")


def _warm_start(export_dir: Path, model, state: dict[str, Any], base_sha: str) -> None:
    """The exported delta's weights, and its step, tokens, time and evaluations."""
    manifest = read_manifest(export_dir)
    apply_delta(model, export_dir, base_sha256=base_sha)
    info = manifest.get("training", {})
    state["tokens_seen"] = state["restart_tokens"] = int(info.get("tokens_seen", 0))
    state["wall_time_s"] = float(info.get("wall_time_s", 0.0))
    state["step"] = int(info.get("step", 0))
    log_path = export_dir / LOG_NAME
    if log_path.is_file():
        old = json.loads(log_path.read_text(encoding="utf-8"))
        state["evals"] = old.get("evals", [])
        state["exported"] = old.get("exported")
        state["best_top5"] = (old.get("exported") or {}).get("eval", {}).get("top5", -1.0)
    _log(f"warm start from exported delta {export_dir} ({state['tokens_seen']:,} tokens)")


def _restore(ckpt_path: Path, model, optimizer, state, rng, args, base_sha: str) -> None:
    """Resume from the checkpoint, else warm-start from the exported delta (unless
    ``--fresh``); a fresh run keeps the initial state."""
    if args.fresh:
        return
    if ckpt_path.is_file():
        _resume(ckpt_path, model, optimizer, state, rng, args)
    elif (args.export_dir / "delta.json").is_file():
        _warm_start(args.export_dir, model, state, base_sha)


def _json_args(args: argparse.Namespace) -> dict[str, Any]:
    return {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()}


def _is_best(res: dict[str, float], state: dict[str, Any]) -> bool:
    """True when ``res`` beats every earlier evaluation's top-5 (and training has begun)."""
    return res["top5"] > state["best_top5"] and state["tokens_seen"] > 0


def _advance_epoch(state: dict[str, Any], pos: int, n_seq: int) -> None:
    """Move to sequence ``pos`` of the epoch's order, or to the next epoch past its end."""
    state["epoch_pos"] = pos
    if pos >= n_seq:
        state["epoch"] += 1
        state["epoch_pos"] = 0


def _last_eval_is_stale(state: dict[str, Any]) -> bool:
    """True when training went on since the last evaluation."""
    return bool(state["evals"]) and state["evals"][-1]["tokens_seen"] != state["tokens_seen"]


def _evaluation(
    model,
    sample,
    uni: dict[str, float],
    state: dict[str, Any],
    args,
    base_state,
    base_sha: str,
    log_payload: Callable[[], dict[str, Any]],
) -> Callable[[], None]:
    """``do_eval()``: evaluate on the held-out sample, export the delta when it is the best
    so far, and rewrite the training log and the card."""
    export_dir: Path = args.export_dir

    def do_eval() -> None:
        te = time.time()
        res = evaluate_sample(model, sample)
        entry = {
            "tokens_seen": state["tokens_seen"],
            "step": state["step"],
            "wall_time_s": round(state["wall_time_s"], 1),
            **res,
        }
        state["evals"].append(entry)
        _log(
            f"EVAL tokens {state['tokens_seen']:,}: top1 {res['top1']:.4f} top5 {res['top5']:.4f} "
            f"(unigram {uni['top1']:.4f}/{uni['top5']:.4f}, n={res['n']}, {time.time() - te:.0f}s)"
        )
        if _is_best(res, state):
            state["best_top5"] = res["top5"]
            training = {
                "tokens_seen": state["tokens_seen"],
                "step": state["step"],
                "wall_time_s": round(state["wall_time_s"], 1),
                "unfreeze_top": args.unfreeze_top,
                "eval": res,
                "unigram_baseline": uni,
            }
            manifest = save_delta(
                model, base_state, export_dir, {"base_sha256": base_sha, "training": training}
            )
            state["exported"] = {**training, "delta_bytes": manifest["delta_bytes"]}
            _log(f"exported delta to {export_dir} ({manifest['delta_bytes'] / 1e6:.1f} MB)")
        atomic_write_json(export_dir / LOG_NAME, log_payload())
        if state["exported"] is not None:
            write_model_card(export_dir, log_payload())

    return do_eval


def _train(args: argparse.Namespace, command: str) -> int:
    torch.set_num_threads(args.threads)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    ckpt_dir: Path = args.checkpoint_dir or default_checkpoint_dir()
    ckpt_dir.mkdir(parents=True, exist_ok=True)
    ckpt_path = ckpt_dir / CHECKPOINT_NAME
    export_dir: Path = args.export_dir
    data_dir = args.data_dir

    t0 = time.time()
    tokenizer = load_minilm_tokenizer()
    text = training_corpus.training_sentences(data_dir)
    corpus = cached_pack(tokenizer, text, args.seq_len, ckpt_dir)
    guess = unigram_guess(corpus.counts)
    heldout = training_corpus.heldout_sentences(data_dir)
    sample = masked_sample(tokenizer, heldout, args.eval_masks, args.eval_seed)
    uni = sample_unigram(sample, guess)
    corpus_info = {
        "sentences": corpus.n_sentences,
        "words": corpus.n_words,
        "pieces": corpus.n_pieces,
        "sequences": corpus.n_sequences,
        "packed_pieces": len(corpus.ids),
    }
    _log(
        f"corpus {corpus_info} packed in {time.time() - t0:.0f}s; eval sample {sample.n} masks; "
        f"unigram top1 {uni['top1']:.3f} top5 {uni['top5']:.3f}"
    )

    model, base_state, base_sha = build_model(args.unfreeze_top, corpus.counts, args.seed)
    optimizer = make_optimizer(model, args)
    state: dict[str, Any] = {
        "step": 0,
        "tokens_seen": 0,
        "wall_time_s": 0.0,
        "epoch": 0,
        "epoch_pos": 0,
        "restart_tokens": 0,
        "evals": [],
        "best_top5": -1.0,
        "exported": None,
        "unfreeze_top": args.unfreeze_top,
        "seq_len": args.seq_len,
        "np_rng": None,
        "py_rng": None,
        # Each (re)start that changed --max-tokens: the lr schedule's decay end from then on.
        "schedule": [{"from_step": 0, "from_tokens": 0, "max_tokens": args.max_tokens}],
    }
    rng = np.random.default_rng(args.seed)
    _restore(ckpt_path, model, optimizer, state, rng, args, base_sha)

    vocab_size = model.config.vocab_size
    mask_id = tokenizer.mask_token_id

    def log_payload() -> dict[str, Any]:
        return {
            "model": "minilm-l6-mlm",
            "command": command,
            "args": _json_args(args),
            "base_sha256": base_sha,
            "corpus": corpus_info,
            "unigram_baseline": uni,
            "unigram_top5_ids": guess,
            "unigram_top5_pieces": tokenizer.convert_ids_to_tokens(guess),
            "tokens_seen": state["tokens_seen"],
            "step": state["step"],
            "wall_time_s": round(state["wall_time_s"], 1),
            "evals": state["evals"],
            "exported": state["exported"],
            "schedule": state["schedule"],
        }

    do_eval = _evaluation(model, sample, uni, state, args, base_state, base_sha, log_payload)

    def checkpoint() -> None:
        state["np_rng"] = rng.bit_generator.state
        state["py_rng"] = _py_state_to_json(random.getstate())
        save_checkpoint(ckpt_path, model, optimizer, state)

    export_dir.mkdir(parents=True, exist_ok=True)
    if state["tokens_seen"] == 0 and not state["evals"]:
        do_eval()  # the untrained head (log-prior bias): the curve's starting point
    next_eval = next_eval_after(state["tokens_seen"], args.eval_every)
    loop = TrainingLoop.from_args(state, args, wall_time="steps")
    set_train_mode(model, args.unfreeze_top)
    trainable = [p for p in model.parameters() if p.requires_grad]
    window = {"t": time.time(), "tokens": 0, "loss": 0.0, "n": 0, "factor": 0.0}
    n_seq = corpus.n_sequences

    def step() -> int:
        perm = np.random.default_rng([args.seed, state["epoch"]]).permutation(n_seq)
        pos = state["epoch_pos"]
        idx = perm[pos : pos + args.batch_size]
        seqs = [corpus.ids[corpus.offsets[i] : corpus.offsets[i + 1]] for i in idx]
        input_ids, att, selected, targets = mask_batch(seqs, rng, vocab_size, mask_id)
        n_tokens = int(att.sum())

        factor = lr_factor(state["tokens_seen"], args, state["restart_tokens"])
        for group in optimizer.param_groups:
            group["lr"] = group["base_lr"] * factor
        hidden = model.bert(input_ids=input_ids, attention_mask=att)[0]
        logits = model.cls(hidden[selected])  # (n selected, vocab)
        loss = torch.nn.functional.cross_entropy(logits, targets)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(trainable, 1.0)
        optimizer.step()

        _advance_epoch(state, pos + args.batch_size, n_seq)
        window["tokens"] += n_tokens
        window["loss"] += loss.item()
        window["n"] += 1
        window["factor"] = factor
        return n_tokens

    def log_progress() -> None:
        now = time.time()
        _log(
            f"step {state['step']} tokens {state['tokens_seen']:,} epoch {state['epoch']} "
            f"loss {window['loss'] / window['n']:.3f} lr x{window['factor']:.3f} "
            f"{window['tokens'] / max(now - window['t'], 1e-9):.0f} tok/s"
        )
        window.update(t=now, tokens=0, loss=0.0, n=0)

    def eval_due() -> bool:
        return state["tokens_seen"] >= next_eval

    def scheduled_eval() -> None:
        nonlocal next_eval
        do_eval()
        set_train_mode(model, args.unfreeze_top)  # eval left every module in train mode
        next_eval = next_eval_after(state["tokens_seen"], args.eval_every)
        window.update(t=time.time(), tokens=0)  # keep eval time out of the tok/s figure

    def final_eval() -> None:
        if loop.finished and _last_eval_is_stale(state):
            do_eval()  # the final state is evaluated too (and exported if it is the best)

    loop.set_callback("log", log_progress)
    loop.set_callback("eval", scheduled_eval)
    loop.set_callback("checkpoint", checkpoint)
    loop.set_callback("end", final_eval)
    loop.set_callback(
        "signal",
        lambda signum: _log(f"signal {signum}: checkpointing and stopping after this step"),
    )
    loop.run(step, eval_due=eval_due)
    _log(
        f"stopped at step {state['step']}, {state['tokens_seen']:,} tokens; checkpoint {ckpt_path}"
    )
    return 0


def _py_state_to_json(st: tuple) -> list:
    return [st[0], list(st[1]), st[2]]


def _py_state_from_json(st: list | None) -> tuple:
    if st is None:
        return random.getstate()
    return (st[0], tuple(st[1]), st[2])


def run(args: argparse.Namespace) -> int:
    """``python -m probing train-mlm-head …``: the CLI dispatcher's entry point."""
    command = "python -m probing train-mlm-head " + shlex.join(sys.argv[2:])
    return train(args, command.strip())


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: ``python -m probing.training.mlm_head [flags]``; returns the exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(
        prog="python -m probing.training.mlm_head", description=__doc__.split("\n\n")[0]
    )
    add_arguments(parser)
    args = parser.parse_args(argv)
    refuse_shipped_outputs("train-mlm-head", args)
    command = "python -m probing.training.mlm_head " + shlex.join(argv)
    return train(args, command.strip())


if __name__ == "__main__":
    sys.exit(main())
