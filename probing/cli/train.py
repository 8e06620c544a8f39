"""CLI commands ``train-elmo``, ``train-elmo-softmax``, ``train-mlm-head`` and
``train-pair-heads``: their options come from the torch-free :mod:`probing.training.cli_args`
(``--help`` answers at once); a run imports its training module (torch) only then."""

from __future__ import annotations

import argparse

from probing.training.cli_args import (
    add_train_elmo_arguments,
    add_train_elmo_softmax_arguments,
    add_train_mlm_head_arguments,
    add_train_pair_heads_arguments,
    refuse_shipped_outputs,
)
from probing.training.finetune_run import add_train_finetune_arguments

__all__ = [
    "add_train_finetune_arguments",
    "add_train_elmo_arguments",
    "add_train_elmo_softmax_arguments",
    "add_train_mlm_head_arguments",
    "add_train_pair_heads_arguments",
    "run_train_elmo",
    "run_train_elmo_softmax",
    "run_train_mlm_head",
    "run_train_pair_heads",
]


def run_train_elmo(args: argparse.Namespace) -> int:
    """``python -m probing train-elmo``: :func:`probing.training.elmo_lm.run`."""
    refuse_shipped_outputs("train-elmo", args)  # before torch is imported
    from probing.training.elmo_lm import run

    return run(args)


def run_train_elmo_softmax(args: argparse.Namespace) -> int:
    """``python -m probing train-elmo-softmax``: :func:`probing.training.elmo_softmax.run`."""
    refuse_shipped_outputs("train-elmo-softmax", args)  # before torch is imported
    from probing.training.elmo_softmax import run

    return run(args)


def run_train_mlm_head(args: argparse.Namespace) -> int:
    """``python -m probing train-mlm-head``: :func:`probing.training.mlm_head.run`."""
    refuse_shipped_outputs("train-mlm-head", args)  # before torch is imported
    from probing.training.mlm_head import run

    return run(args)


def run_train_pair_heads(args: argparse.Namespace) -> int:
    """``python -m probing train-pair-heads``: :func:`probing.training.pair_heads.run`."""
    refuse_shipped_outputs("train-pair-heads", args)  # before torch is imported
    from probing.training.pair_heads import run

    return run(args)


def run_train_finetune(args: argparse.Namespace) -> int:
    """``python -m probing train-finetune``: :func:`probing.training.finetune_run.run`."""
    from probing.training.finetune_run import refuse_shipped_outputs as refuse_finetune
    from probing.training.finetune_run import run

    refuse_finetune(args)  # before torch is imported
    return run(args)
