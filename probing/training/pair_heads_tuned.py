"""A pair head trained together with minilm-l6's top layers
(``python -m probing train-pair-heads --tasks sop --tune-top-layers 2``).

With the encoder frozen, the SOP head stays at chance: the frozen ``[CLS]`` state of this
sentence-embedding model gives a linear head no order signal. Here the top ``k`` encoder
layers are trained with the head (BERT's pooler + ``cls.seq_relationship``), the rest of the
encoder (embeddings and the lower layers) stays as shipped and runs in eval mode. Each step
runs the whole model on a batch of raw pairs; gradients reach only the tuned layers and the
head, because nothing below them requires one.

Settings are the course note's fine-tuning checklist: AdamW, weight decay 0.01, linear
warm-up over the first 10 % of steps then linear decay, gradient clipping at 1.0; the head
(newly initialised) gets its own, larger learning rate. The dev accuracy is measured every
``--eval-every`` steps and the best state is kept. A checkpoint
(``<work>/<name>-checkpoint.pt``: the tuned tensors, the optimiser, the schedule and the best
state, all tensors and plain data, loaded with ``weights_only=True``) is written every
``--checkpoint-minutes`` and at each evaluation, so a killed run resumes.

The export (:func:`probing.models.pair_heads.save_pair_head`) holds only the tuned layers and
the head; :func:`~probing.models.pair_heads.load_pair_head` puts them into the hash-checked
embedded minilm-l6.
"""

from __future__ import annotations

import argparse
import hashlib
import math
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch
from safetensors.torch import load_file, save_file

from probing.io import atomic_write
from probing.models.pair_heads import PairHead, tuned_parameter_names
from probing.training.loop import TrainingLoop
from probing.training.pair_features import MAX_PIECES
from probing.training.sentence_pairs import Pair

HEAD_PREFIXES = ("bert.pooler.", "cls.seq_relationship.")


def tuned_name(task: str, k: int) -> str:
    """The exported model's name: ``minilm-l6-sop-top2``."""
    return f"minilm-l6-{task}-top{k}"


def prepare(model, k: int, seed: int) -> list[str]:
    """Freeze everything but the top ``k`` layers and the NSP head of ``model`` (a
    ``BertForPreTraining``), initialise the head as :class:`PairHead` does (BERT's init,
    seeded) and return the names of the trained tensors."""
    n_layers = model.config.num_hidden_layers
    if not 1 <= k <= n_layers:
        from probing.errors import InvalidArgumentError

        raise InvalidArgumentError(
            f"--tune-top-layers must be from 1 to the encoder's {n_layers} layers, not {k}."
        )
    names = tuned_parameter_names(list(range(n_layers - k, n_layers)), model.state_dict())
    torch.manual_seed(seed)
    fresh = PairHead(model.config.hidden_size)
    with torch.no_grad():
        model.bert.pooler.dense.weight.copy_(fresh.pooler.weight)
        model.bert.pooler.dense.bias.copy_(fresh.pooler.bias)
        model.cls.seq_relationship.weight.copy_(fresh.classifier.weight)
        model.cls.seq_relationship.bias.copy_(fresh.classifier.bias)
    for name, p in model.named_parameters():
        p.requires_grad_(name in names)
    return names


def set_train_mode(model, k: int, training: bool) -> None:
    """Dropout on in the tuned layers only while training; the frozen rest always in eval
    mode, so it computes exactly what the shipped encoder computes."""
    model.eval()
    if training:
        for layer in model.bert.encoder.layer[-k:]:
            layer.train()
        model.bert.pooler.train()


def pair_logits(model, tokenizer, pairs: Sequence[Pair]) -> torch.Tensor:
    """(N, 2) ``seq_relationship`` logits of ``[CLS] a [SEP] b [SEP]`` for each pair."""
    enc = tokenizer(
        [p.a for p in pairs],
        [p.b for p in pairs],
        padding=True,
        truncation="longest_first",
        max_length=MAX_PIECES,
        return_tensors="pt",
    )
    return model(
        input_ids=enc["input_ids"],
        attention_mask=enc["attention_mask"],
        token_type_ids=enc["token_type_ids"],
    ).seq_relationship_logits.float()


@torch.inference_mode()
def predict(model, tokenizer, pairs: Sequence[Pair], batch: int = 64) -> np.ndarray:
    """(N, 2) softmax probabilities of ``pairs`` (batched by length, in the order given)."""
    order = sorted(range(len(pairs)), key=lambda i: len(pairs[i].a) + len(pairs[i].b))
    out = np.empty((len(pairs), 2), dtype=np.float64)
    for s in range(0, len(order), batch):
        idx = order[s : s + batch]
        logits = pair_logits(model, tokenizer, [pairs[i] for i in idx])
        out[idx] = torch.softmax(logits, -1).double().numpy()
    return out


def epoch_batches(lengths: Sequence[int], batch_size: int, seed: int) -> list[list[int]]:
    """One epoch's batches of indices: shuffled, then sorted by length within windows of 50
    batches (less padding: each step costs about half), the batches in shuffled order. Every
    index is in exactly one batch."""
    gen = torch.Generator().manual_seed(seed)
    perm = torch.randperm(len(lengths), generator=gen).tolist()
    window = 50 * batch_size
    out = []
    for w in range(0, len(perm), window):
        part = sorted(perm[w : w + window], key=lambda i: lengths[i])
        out += [part[b : b + batch_size] for b in range(0, len(part), batch_size)]
    return [out[i] for i in torch.randperm(len(out), generator=gen).tolist()]


def weights_digest(model, names: Sequence[str]) -> str:
    """sha256 (16 hex) over the ``names`` tensors of ``model``, in that order: the same for a
    trained model in memory and for its export loaded back (fp32, bit for bit)."""
    h = hashlib.sha256()
    sd = model.state_dict()
    for n in names:
        h.update(n.encode() + b"\0" + sd[n].detach().float().contiguous().numpy().tobytes())
    return h.hexdigest()[:16]


def cached_predictions(
    model, tokenizer, names: Sequence[str], pairs: Sequence[Pair], work: Path
) -> np.ndarray:
    """:func:`predict` of ``pairs``, saved in ``work/predictions`` under the digest of the
    trained tensors and of the pairs: the trainer scores the test pairs for the card, and
    ``results/nsp_sop.py`` reads the same scores instead of running the model again."""
    pair_hash = hashlib.sha256("\n".join(f"{p.a}\0{p.b}" for p in pairs).encode()).hexdigest()[:12]
    path = Path(work) / "predictions" / f"{weights_digest(model, names)}-{pair_hash}.safetensors"
    if path.is_file():
        return load_file(str(path))["probs"].numpy()
    probs = predict(model, tokenizer, pairs)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, lambda tmp: save_file({"probs": torch.from_numpy(probs)}, str(tmp)))
    return probs


def _lr_factor(step: int, total: int, warmup: float = 0.1) -> float:
    """Linear warm-up over ``warmup`` of the steps, then linear decay to 0."""
    w = max(1, math.ceil(warmup * total))
    return (step + 1) / w if step < w else max(0.0, (total - step) / max(1, total - w))


def train_tuned(
    model,
    tokenizer,
    task: str,
    train: Sequence[Pair],
    dev: Sequence[Pair],
    args: argparse.Namespace,
    work: Path,
) -> dict:
    """Train the top ``args.tune_top_layers`` layers and the head of ``model`` on ``train``
    (in place); the state with the best dev accuracy is loaded back at the end. Returns the
    training state (history, best evaluation, wall time)."""
    k = args.tune_top_layers
    names = prepare(model, k, args.seed)
    params = dict(model.named_parameters())
    groups = [
        {"params": [params[n] for n in names if not n.startswith(HEAD_PREFIXES)],
         "lr": args.layer_lr},
        {"params": [params[n] for n in names if n.startswith(HEAD_PREFIXES)], "lr": args.lr},
    ]  # fmt: skip
    opt = torch.optim.AdamW(groups, weight_decay=args.weight_decay)
    base_lrs = [g["lr"] for g in groups]
    steps_per_epoch = -(-len(train) // args.batch_size)
    total = args.epochs * steps_per_epoch
    state = {"step": 0, "tokens_seen": 0, "wall_time_s": 0.0, "history": [], "best": None}
    tuned = lambda: {n: params[n].detach().clone() for n in names}  # noqa: E731
    best = tuned()
    ckpt = work / f"{tuned_name(task, k)}-checkpoint.pt"
    if ckpt.is_file() and not args.fresh:
        saved = torch.load(ckpt, map_location="cpu", weights_only=True)  # tensors, plain data
        with torch.no_grad():
            for n in names:
                params[n].copy_(saved["tuned"][n])
        opt.load_state_dict(saved["opt"])
        state, best = saved["state"], saved["best"]
        print(f"{tuned_name(task, k)}: resumed at step {state['step']}")
    y_dev = np.array([p.label for p in dev])
    lengths = [len(p.a) + len(p.b) for p in train]
    batches: list[list[int]] = []

    def step() -> int:
        s = state["step"] % steps_per_epoch
        if s == 0 or not batches:  # the epoch's batches, seeded by the epoch: resumable
            epoch = state["step"] // steps_per_epoch
            batches[:] = epoch_batches(lengths, args.batch_size, args.seed * 100_003 + epoch)
        batch = [train[i] for i in batches[s]]
        for g, lr in zip(opt.param_groups, base_lrs, strict=True):
            g["lr"] = lr * _lr_factor(state["step"], total)
        torch.manual_seed(args.seed * 7_919 + state["step"])  # dropout, resumable
        set_train_mode(model, k, True)
        loss = torch.nn.functional.cross_entropy(
            pair_logits(model, tokenizer, batch), torch.tensor([p.label for p in batch])
        )
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_([params[n] for n in names], 1.0)
        opt.step()
        state.setdefault("losses", []).append(round(float(loss.detach()), 4))
        return len(batch)

    def evaluate() -> None:
        set_train_mode(model, k, False)
        dev_acc = float((predict(model, tokenizer, dev).argmax(-1) == y_dev).mean())
        recent = state.get("losses", [])[-args.eval_every :]
        row = {"step": state["step"], "train_loss": float(np.mean(recent)) if recent else None,
               "dev": dev_acc}  # fmt: skip
        state["history"].append(row)
        if state["best"] is None or dev_acc > state["best"]["dev"]:
            state["best"] = row
            best.update(tuned())
        print(
            f"{tuned_name(task, k)}: step {row['step']} loss {row['train_loss']} dev {dev_acc:.3f}"
        )

    def checkpoint() -> None:
        blob = {"tuned": tuned(), "opt": opt.state_dict(), "state": state, "best": best}
        work.mkdir(parents=True, exist_ok=True)
        atomic_write(ckpt, lambda tmp: torch.save(blob, tmp))

    def log() -> None:
        recent = state["losses"][-args.log_every :]
        print(f"step {state['step']}/{total} loss {np.mean(recent):.4f} "
              f"({state['wall_time_s']:.0f} s)", flush=True)  # fmt: skip

    loop = TrainingLoop(
        state,
        max_tokens=args.epochs * len(train),  # pairs
        max_steps=args.max_steps,
        log_every=args.log_every,
        checkpoint_minutes=args.checkpoint_minutes,
    )
    loop.set_callback("log", log)
    loop.set_callback("eval", evaluate)
    loop.set_callback("eval", checkpoint)
    loop.set_callback("checkpoint", checkpoint)
    due = lambda: state["step"] % args.eval_every == 0 or state["step"] >= total  # noqa: E731
    t0 = time.time()
    loop.run(step, eval_due=due)
    state["run_seconds"] = round(time.time() - t0, 1)
    state["interrupted"] = loop.stopped_by_signal  # checkpointed: run again to resume
    with torch.no_grad():
        for n in names:
            params[n].copy_(best[n])
    set_train_mode(model, k, False)
    state["steps_total"] = total
    state["tuned"] = names
    return state


def run_tuned(args: argparse.Namespace) -> int:
    """Train and export ``minilm-l6-<task>-top<k>`` for each of ``--tasks``, with its card."""
    from probing.analyses.nsp_sop import OWN_SET, accuracies, cell_replicates
    from probing.models.pair_heads import base_pretraining_model, description, save_pair_head
    from probing.probes.compare import Engine
    from probing.training.pair_head_card import write_pair_head_card
    from probing.training.sentence_pairs import KINDS, pair_heads_work_dir, split_pairs

    torch.set_num_threads(args.threads)
    work = Path(args.work_dir or pair_heads_work_dir())
    k = args.tune_top_layers
    test = split_pairs("test", args.test_per_doc, args, KINDS)
    doc_index: dict[str, int] = {}  # test documents in order of appearance (as results/)
    for q in test:
        doc_index.setdefault(q.doc_id, len(doc_index))
    for task in args.tasks:
        kinds = ("next", OWN_SET[task])
        train = split_pairs("train", args.train_per_doc, args, kinds)
        dev = split_pairs("dev", args.dev_per_doc, args, kinds)
        model, tokenizer = base_pretraining_model()
        state = train_tuned(model, tokenizer, task, train, dev, args, work)
        if state["interrupted"]:
            print(f"stopped at step {state['step']}; run the same command again to resume")
            return 1
        t0 = time.time()
        probs = cached_predictions(model, tokenizer, state["tuned"], test, work)
        pred = probs.argmax(-1)  # 1: does not continue
        test_seconds = time.time() - t0
        reps = cell_replicates(
            [q.kind for q in test],
            np.array([q.label for q in test]),
            np.array([doc_index[q.doc_id] for q in test]),
            {f"{task}-top{k}": pred},  # the head's key in results/nsp-sop
            Engine(n_boot=2000, seed=0),
        )
        own = next(a for a in accuracies(reps, [q.kind for q in test]) if a.kind == OWN_SET[task])
        name = tuned_name(task, k)
        n_layers = model.config.num_hidden_layers
        manifest = {"task": task, "tuned_layers": list(range(n_layers - k, n_layers))}
        summary = {
            "task": task,
            "description": description(manifest),
            "encoder": f"minilm-l6 (all-MiniLM-L6-v2), top {k} layers trained with the head",
            "pairs": {
                n: {"pairs": len(ps), "documents": len({p.doc_id for p in ps})}
                for n, ps in (("train", train), ("dev", dev))
            }
            | {"test": {"pairs": own.n_pairs, "documents": len(doc_index)}},
            "per_document": {
                "train": args.train_per_doc,
                "dev": args.dev_per_doc,
                "test": args.test_per_doc,
            },
            "settings": {
                n: getattr(args, n)
                for n in (
                    "layer_lr",
                    "lr",
                    "weight_decay",
                    "batch_size",
                    "epochs",
                    "seed",
                    "eval_every",
                    "threads",
                )
            },  # fmt: skip
            "steps": state["step"],
            "n_parameters": sum(int(model.state_dict()[n].numel()) for n in state["tuned"]),
            "history": state["history"],
            "best_epoch": state["best"],
            "test": own.as_dict(),
            "train_seconds": round(state["wall_time_s"], 1),
            "test_seconds": round(test_seconds, 1),
        }
        sd = model.state_dict()
        folder = Path(args.export_dir) / name
        saved = save_pair_head(
            {n: sd[n] for n in state["tuned"]}, folder, {**manifest, "training": summary}
        )
        write_pair_head_card(folder, saved)
        print(
            f"{name}: test accuracy {own.value:.3f} [{own.ci_low:.3f}, {own.ci_high:.3f}] -> {folder}"
        )
    return 0
