"""CLI command ``alterrep``: counterfactual pushes of the subject's number, layer by layer.

    python -m probing alterrep --model minilm-l6-mlm --layers all --out DIR

writes ``DIR/<model>__alterrep.csv`` (one row per layer: clean and counterfactual agreement
accuracy, flip rates of the counterfactual and the random push, their paired difference, each
with a 95 % sentence-bootstrap interval), ``.json`` (the same with the run's settings and
command line) and ``.html`` (the figure). Method: :mod:`probing.interventions.alterrep`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from probing import params
from probing.analyses.params import AlterRepParams
from probing.shipped import add_overwrite_argument, output_folder, refuse_shipped


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model", default="minilm-l6-mlm", help="a masked LM: name, folder or hub id")
    params.add_arguments(p, AlterRepParams)  # the settings, with their ranges
    p.add_argument(
        "--out", required=True, type=output_folder, help="output folder (created if missing)"
    )
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    add_overwrite_argument(p)


def output_files(args: argparse.Namespace) -> list[Path]:
    """Every file the run writes (the shipped-file guard checks these)."""
    stem = "".join(c if c.isalnum() or c in "-_." else "_" for c in args.model)
    return [args.out / f"{stem}__alterrep.{ext}" for ext in ("csv", "json", "html")]


def run(args: argparse.Namespace) -> int:
    import pandas as pd

    from probing.analyses.registry import get
    from probing.cli.probe import writable_folder
    from probing.figures.alterrep import flip_figure
    from probing.figures.export import figure_bytes
    from probing.io import atomic_write, atomic_write_json, atomic_write_text
    from probing.models.registry import load_encoder

    files = output_files(args)
    refuse_shipped(files, args.overwrite)
    writable_folder(args.out)
    encoder = load_encoder(args.model)
    settings = params.from_args(AlterRepParams, args)

    def progress(stage: str, done: int, total: int) -> None:
        if not args.quiet:
            print(f"\r{done}/{total} {stage}", end="" if done < total else "\n", file=sys.stderr)

    result = get("alterrep").run([encoder], settings, progress)
    result["argv"] = ["alterrep", "--model", args.model, *params.argv_of(settings)]
    csv, meta, html = files
    atomic_write_text(csv, pd.DataFrame(result["rows"]).to_csv(index=False, float_format="%.5f"))
    atomic_write_json(meta, result)
    page = figure_bytes(flip_figure(result), "html")
    atomic_write(html, lambda tmp: tmp.write_bytes(page))
    table = pd.DataFrame(result["rows"])[
        ["layer", "accuracy_clean", "flip_counterfactual", "flip_random"]
    ]
    print(table.round(3).to_string(index=False))
    if not args.quiet:
        print(f"wrote {', '.join(p.name for p in files)} to {args.out}", file=sys.stderr)
    return 0
