"""Every numeric (and list-valued) CLI argument's valid range, checked while parsing.

One table, :data:`BOUNDS`, says per command and option what it takes; :func:`apply` puts
a converter on each option after its command's module added it, so argparse refuses a bad
value before anything is imported, loaded or read: ``argument --seeds: must be a whole
number from 1 to 100, not '0'`` and exit status 2. A valid value that means hours of work
is not refused: ``probe`` prints the cost model's estimate before it starts
(:mod:`probing.cli.preflight`).

Standard library only: this runs before the command's heavy imports.
"""

from __future__ import annotations

import argparse

from probing.params import ALL_WORDS, SEED_MAX, Bound, converter  # noqa: F401 - re-exported


def _count(lo: int, hi: float, all_ok: bool = False) -> Bound:
    return Bound(lo, hi, int, all_ok)


_SENTENCES = _count(1, 10_000_000, all_ok=True)
_SEED = _count(0, SEED_MAX)
_MINUTES = Bound(0.1, 10_000, float)

# command -> {option dest -> Bound}, for the commands that are not entries of the analysis
# registry (probing/analyses/params.py: those carry their own ranges, and
# probing/cli/registered.py builds their options). A numeric option with no range anywhere
# fails tests/unit/test_cli_bounds.py or tests/unit/test_registered_cli.py.
BOUNDS: dict[str, dict[str, Bound]] = {
    "probe": {
        "layers": Bound(-1000, 1000, int, items=(1, 1000)),
        "max_train_sentences": _SENTENCES,
        "max_train_words": _count(1, 1_000_000_000, all_ok=True),
        "max_dev_sentences": _SENTENCES,
        "max_test_sentences": _SENTENCES,
        "cs": Bound(1e-6, 1e6, float, items=(1, 50)),
        "seeds": _count(1, 100),
        "mdl_seeds": _count(1, 100),
        "seed": _SEED,
        "n_boot": _count(1, 100_000),
        "per_doc": Bound(1, 100_000, int, all_ok=True, items=(3, 3), as_text=True),
        "sentence_pooling": Bound(choices=("cls", "mean", "attention", "max")),
    },
    "fill-mask": {"top_k": _count(1, 1000)},
    "erase": {
        "layers": Bound(0, 1000, int, all_ok=True, items=(1, 1000)),
        "n_random": _count(1, 100),
        "seeds": _count(1, 100),
        "train_sentences": _count(1, 100_000),
        "test_sentences": _count(1, 100_000),
        "heldout_sentences": _count(1, 100_000),
        "n_boot": _count(1, 100_000),
        "fit_sentences": _count(0, 10_000_000),  # 0: the whole training split
        "max_fit_words": _count(1, 100_000_000),
        "heldout_train_sentences": _count(0, 10_000_000),  # 0: the whole dev split
    },
    "agreement": {
        "patch_every": _count(1, 100_000),
        "cases_every": _count(1, 100_000),
        "n_boot": _count(1, 100_000),
    },
    "neurons": {
        "layer": _count(0, 100),
        "ks": _count(1, 100_000),
        "train_sentences": _count(1, 100_000),
        "test_sentences": _count(1, 100_000),
        "heldout_sentences": _count(1, 100_000),
        "n_random": _count(1, 1_000),
        "n_boot": _count(1, 100_000),
    },
    "minimal-pairs": {
        "max_pairs": _count(1, 1_000_000),
        "ppl_sentences": _count(0, 100_000),
        "n_boot": _count(1, 100_000),
    },
    "ablate-heads": {
        "heldout_sentences": _count(1, 100_000),
        "agreement_cases": _count(1, 1_000_000),
        "n_boot": _count(1, 100_000),
    },
    "sweep": {"workers": _count(1, 1024)},
    "report": {"workers": _count(1, 1024)},
    "train-elmo": {
        "vocab_size": _count(100, 10_000_000),
        "max_len": _count(2, 10_000),
        "batch_tokens": _count(16, 10_000_000),
        "lr": Bound(1e-9, 10, float),
        "warmup_tokens": _count(0, 10**12),
        "max_tokens": _count(1, 10**12),
        "min_lr_ratio": Bound(0, 1, float),
        "clip": Bound(1e-6, 1e6, float),
        "dropout": Bound(0, 0.99, float),
        "seed": _SEED,
        "threads": _count(1, 1024),
        "checkpoint_minutes": _MINUTES,
        "export_minutes": _MINUTES,
        "eval_tokens": _count(1, 100_000_000),
        "log_every": _count(1, 10**9),
        "max_steps": _count(1, 10**12),
        "max_sentences": _count(1, 10**9),
    },
    "train-elmo-softmax": {
        "every": _count(1, 10_000),
        "max_len": _count(2, 10_000),
        "batch_tokens": _count(16, 10_000_000),
        "shard_batches": _count(1, 1_000_000),
        "epochs": _count(1, 1000),
        "batch_size": _count(1, 10_000_000),
        "lr": Bound(1e-9, 10, float),
        "dropout": Bound(0, 0.99, float),
        "seed": _SEED,
        "threads": _count(1, 1024),
        "checkpoint_minutes": _MINUTES,
        "eval_tokens": _count(1, 100_000_000),
        "log_every": _count(1, 10**9),
    },
    "train-pair-heads": {
        "train_per_doc": _count(1, 100_000),
        "dev_per_doc": _count(1, 100_000),
        "test_per_doc": _count(1, 100_000),
        "epochs": _count(1, 100_000),
        "batch_size": _count(1, 65_536),
        "lr": Bound(1e-9, 10, float),
        "weight_decay": Bound(0, 1, float),
        "seed": _SEED,
        "threads": _count(1, 1024),
        "checkpoint_minutes": _MINUTES,
        "max_steps": _count(1, 10**12),
        "tune_top_layers": _count(0, 64),  # more than the encoder has: refused by the trainer
        "layer_lr": Bound(1e-9, 10, float),
        "eval_every": _count(1, 10**9),
        "log_every": _count(1, 10**9),
    },
    "train-mlm-head": {
        "max_tokens": _count(1, 10**12),
        "unfreeze_top": _count(0, 1000),
        "seq_len": _count(8, 512),
        "batch_size": _count(1, 4096),
        "lr": Bound(1e-9, 10, float),
        "lr_head": Bound(1e-9, 10, float),
        "weight_decay": Bound(0, 1, float),
        "warmup_tokens": _count(0, 10**12),
        "seed": _SEED,
        "threads": _count(1, 1024),
        "checkpoint_minutes": _MINUTES,
        "eval_every": _count(1, 10**12),
        "eval_masks": _count(1, 10_000_000),
        "eval_seed": _SEED,
        "max_steps": _count(1, 10**12),
        "log_every": _count(1, 10**9),
    },
    "train-finetune": {
        "seed": _SEED,
        "lr": Bound(1e-9, 10, float),
        "warmup": Bound(0, 1, float),
        "weight_decay": Bound(0, 1, float),
        "clip": Bound(1e-9, 1e6, float),
        "epochs": _count(0, 1000),
        "batch_size": _count(1, 4096),
        "eval_every": _count(1, 10**9),
        "patience": _count(1, 10**6),
        "train_sentences": _count(1, 10**7),
        "genre_per_doc": _count(1, 10**6),
        "max_steps": _count(0, 10**12),
        "threads": _count(1, 1024),
    },
}


# A number option whose command declares no range still gets a finite, bounded value and a
# typed message (a safety net; the table above is where ranges belong).
FALLBACK = {int: Bound(-(10**12), 10**12, int), float: Bound(-1e12, 1e12, float)}


def apply(command: str, parser: argparse.ArgumentParser) -> None:
    """Put the converters of ``command``'s table on ``parser``'s options (and the
    :data:`FALLBACK` ranges on its other plain int or float options)."""
    table = BOUNDS.get(command, {})
    for action in parser._actions:
        if action.dest in table:
            action.type = converter(table[action.dest])
        elif action.type in FALLBACK:
            action.type = converter(FALLBACK[action.type])
            action.type.fallback = True  # type: ignore[attr-defined]


def unbounded(parser: argparse.ArgumentParser) -> list[str]:
    """Options of ``parser`` without a declared range (a plain int/float or the fallback)."""
    return [
        a.option_strings[0] if a.option_strings else a.dest
        for a in parser._actions
        if a.type in (int, float) or getattr(a.type, "fallback", False)
    ]


def check_cross(command: str, args: argparse.Namespace) -> None:
    """Ranges that depend on another argument (after parsing, before any work).

    Raises:
        InvalidArgumentError: naming both arguments.
    """
    from probing.errors import InvalidArgumentError

    mdl_seeds = getattr(args, "mdl_seeds", None)
    if command == "probe" and getattr(args, "mdl", False) and (mdl_seeds or 0) > args.seeds:
        raise InvalidArgumentError(
            f"--mdl-seeds must be from 1 to --seeds ({args.seeds}), not {args.mdl_seeds}."
        )
