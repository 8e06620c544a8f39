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
import math
import os
import random
import shlex
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from probing.config import cache_dir
from probing.io import atomic_write, atomic_write_json, atomic_write_text
from probing.models.embedded import MINILM_MLM_DELTA
from probing.training.cards import mlm_card_values, render_card
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

LOG_NAME = "training_log.json"
CHECKPOINT_NAME = "checkpoint.pt"


def default_checkpoint_dir() -> Path:
    return cache_dir() / "train" / "minilm-l6-mlm"


# -- model --------------------------------------------------------------------------------


def build_model(unfreeze_top: int, counts: np.ndarray | None, seed: int):
    """BertForMaskedLM = pretrained minilm + fresh head; only the head and top layers train.

    The head's transform is BERT-initialised; the output bias starts at the log unigram prior
    so that step 0 already guesses frequent pieces. Returns (model, base_state, base_sha256).
    """
    from transformers import BertForMaskedLM

    from probing.models.embedded import minilm_dir
    from probing.models.mlm_delta import (
        BASE_FILE,
        base_state_dict,
        file_sha256,
        load_base_into,
        minilm_mlm_config,
    )

    torch.manual_seed(seed)
    config = minilm_mlm_config()
    config._attn_implementation = "sdpa"  # fastest on CPU; no attention maps needed here
    model = BertForMaskedLM(config)
    base = base_state_dict()
    load_base_into(model, base)
    if counts is not None:
        with torch.no_grad():
            prior = np.log(np.asarray(counts, dtype=np.float64) + 1.0)
            prior -= prior.mean()
            model.cls.predictions.bias.copy_(torch.from_numpy(prior).float())
    n_layers = config.num_hidden_layers
    if not 0 <= unfreeze_top <= n_layers:
        raise ValueError(f"--unfreeze-top must be in 0..{n_layers}")
    for p in model.parameters():
        p.requires_grad_(False)
    for layer in model.bert.encoder.layer[n_layers - unfreeze_top :]:
        for p in layer.parameters():
            p.requires_grad_(True)
    for name, p in model.cls.named_parameters():
        if name != "predictions.decoder.weight":  # tied to the frozen input embeddings
            p.requires_grad_(True)
    return model, base, file_sha256(minilm_dir() / BASE_FILE)


def set_train_mode(model, unfreeze_top: int) -> None:
    """Dropout only where weights train: frozen layers behave exactly as pretrained."""
    model.train()
    model.bert.embeddings.eval()
    n_layers = len(model.bert.encoder.layer)
    for layer in model.bert.encoder.layer[: n_layers - unfreeze_top]:
        layer.eval()


def trainable_state(model) -> dict[str, torch.Tensor]:
    return {n: p.detach().clone() for n, p in model.named_parameters() if p.requires_grad}


def make_optimizer(model, args) -> torch.optim.AdamW:
    """AdamW: the head (new) at ``--lr-head``, retrained layers at ``--lr``; no decay on
    biases and LayerNorm weights."""
    groups: dict[tuple[float, float], list[torch.nn.Parameter]] = {}
    for name, p in model.named_parameters():
        if not p.requires_grad:
            continue
        lr = args.lr_head if name.startswith("cls.") else args.lr
        wd = 0.0 if (name.endswith("bias") or "LayerNorm" in name) else args.weight_decay
        groups.setdefault((lr, wd), []).append(p)
    return torch.optim.AdamW(
        [
            {"params": ps, "lr": lr, "base_lr": lr, "weight_decay": wd}
            for (lr, wd), ps in groups.items()
        ],
        betas=(0.9, 0.98),
        eps=1e-6,
    )


def lr_factor(tokens: int, args, restart_tokens: int = 0) -> float:
    """Warmup then linear/cosine decay to 0 over ``--max-tokens``; a warm start (fresh Adam
    moments at ``restart_tokens``) gets its own warmup."""
    warm = args.warmup_tokens
    progress = min(1.0, max(0.0, (tokens - warm) / max(1, args.max_tokens - warm)))
    decay = (
        1.0 - progress if args.schedule == "linear" else 0.5 * (1 + math.cos(math.pi * progress))
    )
    ramp = min(1.0, max(tokens - restart_tokens, 0) / max(1, warm)) if warm else 1.0
    return max(decay, 0.0) * ramp


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


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Flags of ``train-mlm-head`` (shared by the ``probing`` CLI and ``-m`` entry point)."""
    parser.add_argument("--data-dir", type=Path, default=None, help="data sets folder")
    parser.add_argument(
        "--max-tokens", type=int, default=30_000_000, help="word pieces to train on"
    )
    parser.add_argument(
        "--unfreeze-top", type=int, default=4, help="encoder layers (from the top) to retrain"
    )
    parser.add_argument("--seq-len", type=int, default=128, help="pieces per packed sequence")
    parser.add_argument("--batch-size", type=int, default=32, help="sequences per step")
    parser.add_argument("--lr", type=float, default=2e-4, help="peak lr of retrained layers")
    parser.add_argument("--lr-head", type=float, default=1e-3, help="peak lr of the new head")
    parser.add_argument("--weight-decay", type=float, default=0.01)
    parser.add_argument("--warmup-tokens", type=int, default=100_000)
    parser.add_argument("--schedule", choices=("linear", "cosine"), default="linear")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    parser.add_argument("--checkpoint-dir", type=Path, default=None)
    parser.add_argument("--checkpoint-minutes", type=float, default=5.0)
    parser.add_argument(
        "--export-dir", type=Path, default=MINILM_MLM_DELTA, help="where the delta goes"
    )
    parser.add_argument("--eval-every", type=int, default=1_000_000, help="tokens between evals")
    parser.add_argument("--eval-masks", type=int, default=EVAL_MASKS)
    parser.add_argument("--eval-seed", type=int, default=EVAL_SEED)
    parser.add_argument("--max-steps", type=int, default=None, help="stop after this many steps")
    parser.add_argument("--log-every", type=int, default=20, help="steps between log lines")
    parser.add_argument("--fresh", action="store_true", help="ignore checkpoint and delta")
    parser.add_argument(
        "--write-card", type=Path, default=None, metavar="FOLDER",
        help="only rewrite FOLDER/README.md from its training_log.json, then exit",
    )  # fmt: skip


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
    if args.write_card is not None:
        log = json.loads((args.write_card / LOG_NAME).read_text(encoding="utf-8"))
        write_model_card(args.write_card, log)
        print(args.write_card / "README.md")
        return 0
    from probing.models.mlm_delta import (
        apply_delta,
        load_minilm_tokenizer,
        read_manifest,
        save_delta,
    )
    from probing.training.corpus import heldout_sentences, training_sentences

    torch.set_num_threads(args.threads)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    ckpt_dir: Path = args.checkpoint_dir or default_checkpoint_dir()
    ckpt_dir.mkdir(parents=True, exist_ok=True)
    ckpt_path = ckpt_dir / CHECKPOINT_NAME
    export_dir: Path = args.export_dir
    data_dir = args.data_dir

    t0 = time.time()
    tokenizer = load_minilm_tokenizer()
    corpus = cached_pack(tokenizer, training_sentences(data_dir), args.seq_len, ckpt_dir)
    guess = unigram_guess(corpus.counts)
    sample = masked_sample(tokenizer, heldout_sentences(data_dir), args.eval_masks, args.eval_seed)
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
    if ckpt_path.is_file() and not args.fresh:
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
                {"from_step": state["step"], "from_tokens": state["tokens_seen"],
                 "max_tokens": args.max_tokens}
            )  # fmt: skip
            _log(f"lr schedule now decays to 0 at {args.max_tokens:,} tokens")
    elif (export_dir / "delta.json").is_file() and not args.fresh:
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

    vocab_size = model.config.vocab_size
    mask_id = tokenizer.mask_token_id

    def log_payload() -> dict[str, Any]:
        return {
            "model": "minilm-l6-mlm",
            "command": command,
            "args": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
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
        if res["top5"] > state["best_top5"] and state["tokens_seen"] > 0:
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

    def checkpoint() -> None:
        state["np_rng"] = rng.bit_generator.state
        state["py_rng"] = _py_state_to_json(random.getstate())
        save_checkpoint(ckpt_path, model, optimizer, state)

    export_dir.mkdir(parents=True, exist_ok=True)
    if state["tokens_seen"] == 0 and not state["evals"]:
        do_eval()  # the untrained head (log-prior bias): the curve's starting point
    next_eval = next_eval_after(state["tokens_seen"], args.eval_every)
    loop = TrainingLoop(
        state,
        max_tokens=args.max_tokens,
        max_steps=args.max_steps,
        log_every=args.log_every,
        checkpoint_minutes=args.checkpoint_minutes,
        wall_time="steps",
    )
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

        state["epoch_pos"] = pos + args.batch_size
        if state["epoch_pos"] >= n_seq:
            state["epoch"] += 1
            state["epoch_pos"] = 0
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
        if (
            loop.finished
            and state["evals"][-1:]
            and state["evals"][-1]["tokens_seen"] != state["tokens_seen"]
        ):
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
    command = "python -m probing.training.mlm_head " + shlex.join(argv)
    return train(args, command.strip())


if __name__ == "__main__":
    sys.exit(main())
