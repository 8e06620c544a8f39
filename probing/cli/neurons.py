"""``python -m probing neurons``: the units that matter at one layer (issue 45, part 3).

Example::

    python -m probing neurons --model minilm-l6-mlm --task pos --layer 3 --ks 1 5 10 50 \\
        --out /tmp/contextlens [--doc docs/units-that-matter.md]

Writes ``<model>__<dataset>__neurons-<task>-L<layer>.json`` (rankings, top-k vs random-k
probe accuracy, ablation loss) into ``--out`` (default ``results/neurons``, written into
only with ``--overwrite``); ``--doc`` rewrites a Markdown file's generated findings block
from the run's comparison tables (:mod:`probing.interventions.neurons_doc`).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from probing.shipped import add_overwrite_argument, output_folder, refuse_shipped

DEFAULT_OUT = "results/neurons"


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Options of ``python -m probing neurons``."""
    p.add_argument("--model", default="minilm-l6-mlm", help="registry name, folder or hub id")
    p.add_argument("--task", default="pos", help="a word-level label (pos, xpos, deprel, …)")
    p.add_argument("--layer", type=int, default=3, help="hidden state (0: embeddings)")
    p.add_argument("--ks", type=int, nargs="+", default=[1, 5, 10, 50], help="top-k sizes")
    p.add_argument("--train-sentences", type=int, default=400)
    p.add_argument("--test-sentences", type=int, default=200)
    p.add_argument("--heldout-sentences", type=int, default=100, help="for the ablation loss")
    p.add_argument("--n-random", type=int, default=20, help="random k-sets per k")
    p.add_argument("--n-boot", type=int, default=1000, help="bootstrap replicates (sentences)")
    p.add_argument(
        "--doc",
        type=Path,
        help="also write the findings, from the comparison tables, between the "
        "<!-- generated:neurons:begin/end --> markers of this Markdown file",
    )
    p.add_argument(
        "--out", type=output_folder, default=DEFAULT_OUT, help=f"output folder ({DEFAULT_OUT})"
    )
    p.add_argument("--quiet", action="store_true", help="no progress output")
    add_overwrite_argument(p)


def run(args: argparse.Namespace) -> int:
    from probing.interventions.data import task_field
    from probing.probes.store import output_stem

    dataset, _ = task_field(args.task)
    stem = output_stem(args.model, dataset, f"neurons-{args.task}-L{args.layer}")
    path = Path(args.out) / f"{stem}.json"
    refuse_shipped([path, *([args.doc] if args.doc else [])], args.overwrite)
    if args.doc is not None:
        check_doc(args.doc)  # before the run: a file without the markers is refused

    from probing.interventions.neurons_run import run_units
    from probing.io import atomic_write_json
    from probing.models.registry import load_encoder

    def say(stage: str, done: int, total: int) -> None:
        if not args.quiet:
            print(f"  {stage}: {done}/{total}", flush=True)

    result = run_units(
        load_encoder(args.model),
        args.task,
        args.layer,
        args.ks,
        train_sentences=args.train_sentences,
        test_sentences=args.test_sentences,
        heldout_sentences=args.heldout_sentences,
        n_random=args.n_random,
        n_boot=args.n_boot,
        say=say,
    )
    Path(args.out).mkdir(parents=True, exist_ok=True)
    atomic_write_json(path, result)
    from probing.interventions.neurons_compare import findings

    for lines in findings(result).values():
        print("\n".join(lines))
    print(f"wrote {path}")
    if args.doc is not None:
        write_doc(args.doc, result, path)
        print(f"wrote the findings into {args.doc}")
    return 0


def check_doc(doc: Path) -> str:
    """The doc's text; InvalidArgumentError when it lacks the generated block's markers."""
    from probing.errors import InvalidArgumentError
    from probing.interventions.neurons_doc import BEGIN, END

    try:
        text = doc.read_text(encoding="utf-8")
    except OSError as e:
        raise InvalidArgumentError(f"--doc {doc}: cannot read it ({e.strerror}).") from None
    if BEGIN not in text or END not in text:
        raise InvalidArgumentError(f"--doc {doc} has no {BEGIN} … {END} block to write into.")
    return text


def write_doc(doc: Path, result: dict, source: Path) -> None:
    """Replace the doc's generated block with the findings of ``result``."""
    from probing.interventions.neurons_doc import replace_block
    from probing.io import atomic_write_text

    atomic_write_text(doc, replace_block(check_doc(doc), result, source))
