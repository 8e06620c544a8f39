"""Train the NSP and SOP heads on the frozen minilm-l6 (``python -m probing train-pair-heads``).

    OMP_WAIT_POLICY=PASSIVE HF_HUB_OFFLINE=1 python -m probing train-pair-heads \\
        --data-dir /work/shared/data --overwrite

Pairs (:mod:`probing.training.sentence_pairs`) come from the train documents of Brown and
UD-EWT; the dev documents choose the epoch; the test documents are only scored. The frozen
encoder's ``[CLS]`` state of each pair is computed once and cached
(:mod:`probing.training.pair_features`); then, per task, BERT's NSP head
(:class:`~probing.models.pair_heads.PairHead`: pooler dense + tanh, 2-way linear) is
trained with AdamW under the shared :class:`~probing.training.loop.TrainingLoop`, seeded,
checkpointed each epoch (``<work>/<task>-checkpoint.pt``: a killed run resumes), and the
epoch with the best dev accuracy is exported with its card.

NSP trains on ``next`` vs ``other_doc`` pairs, SOP on ``next`` vs ``swapped``; each anchor
gives both its positive and its negative, so each task is balanced.
"""

from __future__ import annotations

import argparse
import copy
import time
from pathlib import Path

import numpy as np
import torch

from probing.analyses.nsp_sop import OWN_SET, accuracies, cell_replicates
from probing.io import atomic_write
from probing.models.pair_heads import (
    DESCRIPTIONS,
    PairHead,
    base_pretraining_model,
    save_pair_head,
)
from probing.probes.compare import Engine
from probing.training.loop import TrainingLoop
from probing.training.pair_features import cached_cls
from probing.training.pair_head_card import write_pair_head_card
from probing.training.sentence_pairs import KINDS, Pair, pair_heads_work_dir, split_pairs

TRAIN_KINDS = ("next", "other_doc", "swapped")


def _task_rows(pairs: list[Pair], task: str) -> np.ndarray:
    neg = OWN_SET[task]
    return np.array([i for i, p in enumerate(pairs) if p.kind in ("next", neg)])


def _accuracy(head: PairHead, x: torch.Tensor, y: torch.Tensor) -> float:
    with torch.no_grad():
        return float((head(x).argmax(-1) == y).float().mean())


def train_head(
    task: str,
    x: torch.Tensor,
    y: torch.Tensor,
    x_dev: torch.Tensor,
    y_dev: torch.Tensor,
    args: argparse.Namespace,
    work: Path,
) -> tuple[PairHead, dict]:
    """Train one head; returns the best-dev-epoch head and its training log. Resumes from
    ``<work>/<task>-checkpoint.pt`` unless ``--fresh``."""
    torch.manual_seed(args.seed)
    head = PairHead(x.shape[1])
    opt = torch.optim.AdamW(head.parameters(), lr=args.lr, weight_decay=args.weight_decay)
    steps_per_epoch = -(-len(x) // args.batch_size)
    state = {"step": 0, "tokens_seen": 0, "wall_time_s": 0.0, "history": [], "best": None}
    ckpt = work / f"{task}-checkpoint.pt"
    best_head = copy.deepcopy(head.state_dict())
    if ckpt.is_file() and not args.fresh:
        saved = torch.load(
            ckpt, map_location="cpu", weights_only=True
        )  # tensors and plain data only
        head.load_state_dict(saved["head"])
        opt.load_state_dict(saved["opt"])
        state, best_head = saved["state"], saved["best_head"]
        print(f"{task}: resumed at epoch {state['step'] // steps_per_epoch}")
    gen = torch.Generator().manual_seed(args.seed)
    order: list[torch.Tensor] = []

    def step() -> int:
        k = state["step"] % steps_per_epoch
        if k == 0 or not order:  # the epoch's shuffle: seeded by the epoch, so resumable
            gen.manual_seed(args.seed * 100_003 + state["step"] // steps_per_epoch)
            order[:] = [torch.randperm(len(x), generator=gen)]
        idx = order[0][k * args.batch_size : (k + 1) * args.batch_size]
        head.train()
        loss = torch.nn.functional.cross_entropy(head(x[idx]), y[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
        return len(idx)

    def evaluate() -> None:
        head.eval()
        epoch = state["step"] // steps_per_epoch
        dev = _accuracy(head, x_dev, y_dev)
        state["history"].append({"epoch": epoch, "train": _accuracy(head, x, y), "dev": dev})
        if state["best"] is None or dev > state["best"]["dev"]:
            state["best"] = state["history"][-1]
            best_head.update(copy.deepcopy(head.state_dict()))
        print(f"{task}: epoch {epoch} train {state['history'][-1]['train']:.3f} dev {dev:.3f}")

    def checkpoint() -> None:
        blob = {"head": head.state_dict(), "opt": opt.state_dict(), "state": state}
        work.mkdir(parents=True, exist_ok=True)
        atomic_write(ckpt, lambda tmp: torch.save({**blob, "best_head": best_head}, tmp))

    loop = TrainingLoop(
        state,
        max_tokens=args.epochs * len(x),
        max_steps=args.max_steps,
        log_every=10**9,
        checkpoint_minutes=args.checkpoint_minutes,  # and after every epoch (below)
    )
    loop.set_callback("eval", evaluate)
    loop.set_callback("eval", checkpoint)
    loop.run(step, eval_due=lambda: state["step"] % steps_per_epoch == 0)
    head.load_state_dict(best_head)
    return head.eval(), state


def run(args: argparse.Namespace) -> int:
    """Encode the pairs once, train both heads, export each with its card (with
    ``--tune-top-layers K``: :func:`probing.training.pair_heads_tuned.run_tuned`)."""
    if getattr(args, "tune_top_layers", 0):
        from probing.training.pair_heads_tuned import run_tuned

        return run_tuned(args)
    torch.set_num_threads(args.threads)
    work = Path(args.work_dir or pair_heads_work_dir())
    model, tokenizer = base_pretraining_model()
    train = split_pairs("train", args.train_per_doc, args, TRAIN_KINDS)
    dev = split_pairs("dev", args.dev_per_doc, args, TRAIN_KINDS)
    # every kind, so results/nsp_sop.py finds these test features in the cache
    test = split_pairs("test", args.test_per_doc, args, KINDS)
    encoding: dict[str, float] = {}
    feats = {
        name: cached_cls(model, tokenizer, pairs, work / "features", name, stats=encoding)
        for name, pairs in (("train", train), ("dev", dev), ("test", test))
    }
    labels = {
        n: torch.tensor([p.label for p in ps])
        for n, ps in (("train", train), ("dev", dev), ("test", test))
    }
    doc_index: dict[str, int] = {}  # test documents in order of appearance (as results/)
    for q in test:
        doc_index.setdefault(q.doc_id, len(doc_index))
    for task in args.tasks:
        rows = {
            n: torch.as_tensor(_task_rows(ps, task))
            for n, ps in (("train", train), ("dev", dev), ("test", test))
        }
        t0 = time.time()
        head, state = train_head(
            task,
            feats["train"][rows["train"]],
            labels["train"][rows["train"]],
            feats["dev"][rows["dev"]],
            labels["dev"][rows["dev"]],
            args,
            work,
        )
        with torch.no_grad():
            pred = head(feats["test"]).argmax(-1).numpy()  # 1: does not continue
        reps = cell_replicates(
            [q.kind for q in test],
            labels["test"].numpy(),
            np.array([doc_index[q.doc_id] for q in test]),
            {task: pred},
            Engine(n_boot=2000, seed=0),
        )
        own = next(a for a in accuracies(reps, [q.kind for q in test]) if a.kind == OWN_SET[task])
        name = f"minilm-l6-{task}"
        summary = {
            "task": task,
            "description": DESCRIPTIONS[task],
            "encoder": "minilm-l6 (all-MiniLM-L6-v2), frozen",
            "pairs": {
                n: {"pairs": int(len(rows[n])), "documents": len({ps[i].doc_id for i in rows[n]})}
                for n, ps in (("train", train), ("dev", dev), ("test", test))
            },
            "per_document": {
                "train": args.train_per_doc,
                "dev": args.dev_per_doc,
                "test": args.test_per_doc,
            },
            "settings": {
                k: getattr(args, k) for k in ("lr", "weight_decay", "batch_size", "epochs", "seed")
            },
            "history": state["history"],
            "best_epoch": state["best"],
            "test": own.as_dict(),
            "encoding": {k: round(v, 1) for k, v in encoding.items()},
            "train_seconds": round(time.time() - t0, 1),
        }
        folder = Path(args.export_dir) / name
        manifest = save_pair_head(head, folder, {"task": task, "training": summary})
        write_pair_head_card(folder, manifest)
        print(
            f"{name}: test accuracy {own.value:.3f} [{own.ci_low:.3f}, {own.ci_high:.3f}] "
            f"-> {folder}"
        )
    return 0


def main(argv: list[str] | None = None) -> int:
    from probing.training.cli_args import add_train_pair_heads_arguments, refuse_shipped_outputs

    parser = add_train_pair_heads_arguments(argparse.ArgumentParser(description=__doc__))
    args = parser.parse_args(argv)
    refuse_shipped_outputs("train-pair-heads", args)
    return run(args)


if __name__ == "__main__":
    raise SystemExit(main())
