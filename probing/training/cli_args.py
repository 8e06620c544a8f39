"""Options of ``train-elmo``, ``train-mlm-head`` and ``train-pair-heads``, in a module
without torch: the CLI builds a command's parser from here, so ``--help`` answers at once (it
took 12 s while the training modules loaded torch first); :mod:`probing.cli.train` runs the training module (the
training modules import their options from here, so this module imports none of them).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from probing.config import MODELS_DIR
from probing.models.embedded import MINILM_MLM_DELTA
from probing.shipped import add_overwrite_argument, refuse_shipped

DEFAULT_EXPORT_DIR = MODELS_DIR / "elmo-mini"
EVAL_SEED = 1234  # the fill-mask evaluation's masks (probing.training.mlm_data re-exports)
EVAL_MASKS = 20_000


def add_train_elmo_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
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
    add_overwrite_argument(parser)
    return parser


def add_train_elmo_softmax_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Options of ``python -m probing train-elmo-softmax`` (:mod:`probing.training.elmo_softmax`)."""
    a = parser.add_argument
    a("--data-dir", type=Path, default=argparse.SUPPRESS, help="data sets folder")
    a(
        "--export-dir",
        type=Path,
        default=DEFAULT_EXPORT_DIR,
        help="the ELMo folder (options.json, weights.hdf5, vocab.txt); the softmax goes here",
    )
    a(
        "--work-dir",
        type=Path,
        default=None,
        help="states and checkpoint (default ~/.cache/contextlens/train/elmo-mini-softmax)",
    )
    a("--every", type=int, default=3, help="use every N-th training sentence")
    a("--max-len", type=int, default=60, help="longer sentences are cut into pieces (as training)")
    a("--batch-tokens", type=int, default=2048, help="padded tokens per encoder batch")
    a("--shard-batches", type=int, default=100, help="encoder batches per states shard")
    a("--epochs", type=int, default=3, help="passes over the stored states")
    a("--batch-size", type=int, default=4096, help="predictions per softmax step")
    a("--lr", type=float, default=3e-3, help="Adam peak lr (cosine decay to 5 %%)")
    a("--dropout", type=float, default=0.1, help="on the stored states (training used 0.1)")
    a("--seed", type=int, default=0)
    a("--threads", type=int, default=1, help="torch threads (set OMP_WAIT_POLICY=PASSIVE)")
    a("--checkpoint-minutes", type=float, default=3.0)
    a("--eval-tokens", type=int, default=10_000, help="held-out words of EWT dev (as training)")
    a("--log-every", type=int, default=100, help="softmax steps between log lines")
    add_overwrite_argument(parser)
    return parser


def add_train_mlm_head_arguments(parser: argparse.ArgumentParser) -> None:
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
        "--write-card",
        type=Path,
        default=None,
        metavar="FOLDER",
        help="only rewrite FOLDER/README.md from its training_log.json, then exit",
    )
    add_overwrite_argument(parser)


def add_train_pair_heads_arguments(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Options of ``python -m probing train-pair-heads`` (:mod:`probing.training.pair_heads`)."""
    a = parser.add_argument
    a("--data-dir", type=Path, default=argparse.SUPPRESS, help="data sets folder")
    a(
        "--export-dir",
        type=Path,
        default=MODELS_DIR,
        help="folder that gets minilm-l6-nsp/ and minilm-l6-sop/ (default: the shipped models/)",
    )
    a(
        "--work-dir",
        type=Path,
        default=None,
        help="cached pair features and checkpoints "
        "(default ~/.cache/contextlens/train/minilm-l6-pair-heads)",
    )
    a("--tasks", nargs="+", choices=("nsp", "sop"), default=["nsp", "sop"])
    a("--train-per-doc", type=int, default=3, help="anchor sentences per training document")
    a("--dev-per-doc", type=int, default=2, help="anchor sentences per dev document")
    a("--test-per-doc", type=int, default=6, help="anchor sentences per test document")
    a("--epochs", type=int, default=40, help="passes over the cached pair features")
    a("--batch-size", type=int, default=64)
    a("--lr", type=float, default=1e-3, help="AdamW learning rate")
    a("--weight-decay", type=float, default=0.01)
    a("--seed", type=int, default=0)
    a("--threads", type=int, default=1, help="torch threads (set OMP_WAIT_POLICY=PASSIVE)")
    a("--checkpoint-minutes", type=float, default=1.0, help="also after every epoch")
    a("--max-steps", type=int, default=None, help="stop after N steps this run (smoke tests)")
    a("--fresh", action="store_true", help="ignore the checkpoints (the feature cache stays)")
    a(
        "--tune-top-layers",
        type=int,
        default=0,
        metavar="K",
        help="train the encoder's top K layers with the head on raw pairs, exported as "
        "minilm-l6-<task>-top<K> (0: the frozen encoder's cached [CLS] states; "
        "probing.training.pair_heads_tuned)",
    )
    a("--layer-lr", type=float, default=1e-4, help="AdamW learning rate of the tuned layers")
    a("--eval-every", type=int, default=100, help="steps between dev evaluations (tuned runs)")
    a("--log-every", type=int, default=10, help="steps between log lines (tuned runs)")
    add_overwrite_argument(parser)
    return parser


_EXPORT_HINTS = {
    "train-elmo": "export somewhere else with --export-dir DIR",
    # the softmax is fitted on the encoder in --export-dir: it needs a copy of the model
    "train-elmo-softmax": "copy models/elmo-mini to a folder of your own and pass --export-dir "
    "FOLDER",
    "train-mlm-head": "export somewhere else with --export-dir DIR",
    "train-pair-heads": "export somewhere else with --export-dir DIR",
}


def refuse_shipped_outputs(command: str, args: argparse.Namespace) -> None:
    """Before any training (and before torch is imported): the folders ``command`` writes
    into must not be the shipped models (``models/elmo-mini`` is the default export) or
    anywhere else in the checkout, unless ``--overwrite``.

    Raises:
        ShippedFilesError: names the folder and where to write instead.
    """
    overwrite = getattr(args, "overwrite", False)
    card = getattr(args, "write_card", None)
    if card is not None:  # only the card is rewritten
        refuse_shipped(
            [Path(card) / "README.md"],
            overwrite,
            hint="name a folder of your own with --write-card FOLDER",
        )
        return
    folders = [args.export_dir]
    for name in ("checkpoint_dir", "work_dir"):  # None: the cache (outside the checkout)
        if getattr(args, name, None) is not None:
            folders.append(getattr(args, name))
    refuse_shipped(folders=folders, overwrite=overwrite, hint=_EXPORT_HINTS[command])
