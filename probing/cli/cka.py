"""CLI command ``cka``: linear CKA between every pair of layers of two models (or within one)
on the same words of a data-set sample, with sentence-bootstrap intervals.

    python -m probing cka --model-a minilm-l6 --model-b elmo-mini --n-words 2000 --out DIR

writes ``cka_<a>__<b>.csv`` (one row per layer pair: CKA and its 95 % interval),
``cka_<a>__<b>.html`` (the heat map) and ``cka_<a>__<b>.json`` (what was run, and the
matrices). Without ``--model-b`` model A is compared with itself.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from probing import params
from probing.analyses.params import CkaParams
from probing.shipped import add_overwrite_argument, output_folder, refuse_shipped


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model-a", default="minilm-l6", help="registry name, hub id or folder")
    p.add_argument("--model-b", default=None, help="second model (default: model A itself)")
    params.add_arguments(p, CkaParams)  # the settings, with their ranges (the registry's)
    p.add_argument(
        "--out", required=True, type=output_folder, help="output folder (created if missing)"
    )
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    add_overwrite_argument(p)


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)


def output_files(args: argparse.Namespace) -> list[Path]:
    """Every file the run writes (the shipped-file guard checks these)."""
    stem = f"cka_{_safe(args.model_a)}__{_safe(args.model_b or args.model_a)}"
    return [args.out / f"{stem}.{ext}" for ext in ("csv", "html", "json")]


def run(args: argparse.Namespace) -> int:
    import pandas as pd

    from probing.analyses.registry import get
    from probing.cli.probe import writable_folder
    from probing.figures.cka import cka_figure
    from probing.figures.export import figure_bytes
    from probing.io import atomic_write, atomic_write_json, atomic_write_text
    from probing.models.registry import load_encoder

    files = output_files(args)
    refuse_shipped(files, args.overwrite)
    writable_folder(args.out)
    encoders = [load_encoder(args.model_a)]
    if args.model_b:
        encoders.append(load_encoder(args.model_b))

    def progress(stage: str, done: int, total: int) -> None:
        if not args.quiet:
            end = "" if done < total else "\n"
            print(f"\r{done}/{total} {stage}", end=end, file=sys.stderr)

    settings = params.from_args(CkaParams, args)
    result = get("cka").run(encoders, settings, progress)
    csv, html, meta = files
    atomic_write_text(csv, pd.DataFrame(result.to_rows()).to_csv(index=False, float_format="%.5f"))
    page = figure_bytes(cka_figure(result), "html")
    atomic_write(html, lambda tmp: tmp.write_bytes(page))
    atomic_write_json(
        meta,
        {
            **result.to_record(),
            "argv": ["cka", "--model-a", args.model_a]
            + (["--model-b", args.model_b] if args.model_b else [])
            + params.argv_of(settings),
            "estimator": "linear CKA, unbiased HSIC (Song et al. 2012; Kornblith et al. 2019 debiased)",
            "interval": "95 % percentile, sentences resampled; copies of one word not paired",
        },
    )
    if not args.quiet:
        print(f"wrote {', '.join(p.name for p in files)} to {args.out}", file=sys.stderr)
    return 0
