"""Command line: ``python -m probing COMMAND …`` runs the library's analyses headless.

Each command of :data:`COMMANDS` lives in the module that does the work, with an
``add_arguments(parser)`` / ``run(args)`` pair; each entry of the analysis registry is a
command too, built from the entry by :mod:`probing.cli.registered`. This file only dispatches.
"""

from __future__ import annotations

import argparse
import errno
import importlib
import os
import sys

from probing.cli import bounds, registered
from probing.config import set_data_dir
from probing.errors import ContextLensError
from probing.probes.tasks import TASKS  # light: the probes package imports on first use

USAGE = (
    "ContextLens from the command line: probe each layer of ELMo and BERT-family encoders, "
    "fill masks, measure attention and contextuality, and write CSV, JSON and HTML results. "
    "Data come from $CONTEXTLENS_DATA_DIR (or --data-dir); models from the registry "
    "(`python -m probing models`), a local folder or a hub id."
)

# command -> (module, one-line help). Modules are imported only when their command runs.
# The analysis registry's commands (cka, contextuality, …) join these in :func:`commands`.
COMMANDS: dict[str, tuple[str, str]] = {
    "models": (
        "probing.cli.models",
        "list the registry's models, or fetch one on request (models fetch mpnet-base)",
    ),
    "encode": ("probing.cli.models", "encode a sentence and print per-layer shapes"),
    "probe": (
        "probing.cli.probe",
        "probe every layer for a task (" + ", ".join(TASKS) + ") -> CSV/JSON/HTML",
    ),
    "data": ("probing.cli.data", "list the data sets (licence, present?, path) or download one"),
    "fill-mask": (
        "probing.cli.fill_mask",
        "top-k guesses for each [MASK] in a sentence (--layers: per layer)",
    ),
    "attribute": (
        "probing.cli.attribute",
        "which words a fill-mask guess (or, --probe, a probe's label) used (IG, gradients, "
        "Value Zeroing, ALTI); --study: faithfulness",
    ),
    "sweep": ("probing.cli.sweep", "a grid of probes from a TOML spec, locally or on Ray"),
    "report": (
        "probing.cli.report",
        "a layer report of one model within a time budget (--budget 10m) -> self-contained HTML",
    ),
    "erase": (
        "probing.cli.interventions",
        "erase a task's labels layer by layer (LEACE/INLP, random controls, LM effect)",
    ),
    "agreement": (
        "probing.cli.interventions",
        "subject-verb agreement on UD-EWT and templated pairs (--patch: activation patching)",
    ),
    "minimal-pairs": (
        "probing.cli.minimal_pairs",
        "minimal pairs scored by pseudo-log-likelihood (ELMo: its two LMs), per paradigm",
    ),
    "neurons": (
        "probing.cli.neurons",
        "rank a layer's neurons for a label (elastic-net / probeless), top-k vs random k",
    ),
    "ablate-heads": (
        "probing.cli.interventions",
        "head ablation (Michel et al.): MLM loss and agreement per head, pruning curve",
    ),
    # options from a torch-free module (training/cli_args.py): `--help` answers at once; the
    # run imports torch
    "train-elmo": ("probing.cli.train", "train the embedded ELMo-mini bi-LM"),
    "train-mlm-head": ("probing.cli.train", "train the embedded fill-mask head"),
    "train-finetune": (
        "probing.cli.train",
        "fine-tune minilm-l6 on UD-EWT UPOS or Brown genre (AdamW, warm-up, early stopping)",
    ),
    "train-pair-heads": (
        "probing.cli.train",
        "train NSP and SOP heads on the frozen minilm-l6 (the Course Notes NSP view)",
    ),
    "train-elmo-softmax": (
        "probing.cli.train",
        "fit ELMo-mini's LM softmax on its frozen encoder (forward/backward next-word LM)",
    ),
}


def commands() -> dict[str, tuple[str, str]]:
    """Every command: the table above and one per analysis registry entry (read now)."""
    return {**COMMANDS, **registered.commands()}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The CLI parser; only ``command``'s module is imported (to add its arguments)."""
    parser = argparse.ArgumentParser(
        prog="python -m probing",
        description=USAGE,
        epilog="Run `python -m probing COMMAND --help` for a command's options.",
    )
    parser.add_argument("--data-dir", help="data folder (default: $CONTEXTLENS_DATA_DIR)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module, help_text) in commands().items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        p.set_defaults(_module=module)
        if name == command:
            _module_arguments(module, name)(p)
    return parser


def _module_arguments(module: str, command: str):
    def add(p: argparse.ArgumentParser) -> None:
        if module == registered.__name__:  # built from its registry entry
            registered.add_arguments(p, command)
        else:
            mod = importlib.import_module(module)
            adder = (
                getattr(mod, f"add_{command.replace('-', '_')}_arguments", None)
                or mod.add_arguments
            )
            adder(p)
        bounds.apply(command, p)  # every number's range, checked while parsing
        if "--data-dir" not in p._option_string_actions:  # accept it after the command too
            p.add_argument(
                "--data-dir",
                default=argparse.SUPPRESS,
                help="data folder (default: $CONTEXTLENS_DATA_DIR)",
            )

    return add


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    for i, arg in enumerate(argv, start=1):
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError:  # bytes that were not UTF-8 arrive as lone surrogates
            shown = arg.encode("utf-8", "backslashreplace").decode("ascii", "replace")
            print(f"error: argument {i} ({shown}) is not valid UTF-8 text.", file=sys.stderr)
            return 2
    command = next((a for a in argv if a in commands()), None)
    parser = build_parser(command)
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    if getattr(args, "data_dir", None):
        set_data_dir(args.data_dir)
    mod = importlib.import_module(args._module)
    runner = getattr(mod, f"run_{args.command.replace('-', '_')}", None) or mod.run
    try:
        bounds.check_cross(args.command, args)
        return int(runner(args) or 0)
    except ContextLensError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # a path the user named, or their disk: their input, not a bug
        if os.environ.get("CONTEXTLENS_DEBUG"):
            raise
        print(f"error: {os_error_message(exc)}", file=sys.stderr)
        return 2
    except Exception as exc:  # never a traceback: one line, and how to see more
        if os.environ.get("CONTEXTLENS_DEBUG"):
            raise
        print(
            f"error: {type(exc).__name__}: {exc} (unexpected; set CONTEXTLENS_DEBUG=1 for the "
            "traceback and please report it)",
            file=sys.stderr,
        )
        return 1


# What to do about a file-system error, by its errno.
_OS_HINTS = {
    errno.ENOENT: "check the path (a missing folder is made only inside one that exists)",
    errno.ENOTDIR: "a part of the path is a file, not a folder",
    errno.EISDIR: "it is a folder; give a file",
    errno.EACCES: "pick a path you may read or write",
    errno.EPERM: "pick a path you may read or write",
    errno.EROFS: "it is on a read-only file system; pick a writable folder",
    errno.ENOSPC: "the disk is full; free some space or write elsewhere",
    errno.EDQUOT: "the disk quota is used up; free some space or write elsewhere",
    errno.ENAMETOOLONG: "the name is too long; pick a shorter path",
    errno.EEXIST: "a file is in the way; pick another path",
}


def os_error_message(exc: OSError) -> str:
    """One line for a file-system error: the path, the system's reason, what to do."""
    reason = exc.strerror or str(exc) or type(exc).__name__
    hint = _OS_HINTS.get(exc.errno or 0, "check the paths given and the disk")
    where = f"{exc.filename}: " if exc.filename else ""
    return f"{where}{reason}; {hint}."
