"""CLI command ``attention-norms``: Clark et al.'s attention to [SEP], punctuation and [CLS]
per layer, under raw and norm-weighted attention (Kobayashi et al. 2020).

    python -m probing attention-norms --model minilm-l6 --n-sentences 2000 --out DIR

writes ``attention_norms.csv`` (statistic × layer: raw, norm, norm − raw, each with a 95 %
paired document-bootstrap interval), ``attention_norms.html`` (the figure) and
``attention_norms.json`` (what was run).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from probing import params
from probing.analyses.params import AttentionNormsParams
from probing.shipped import add_overwrite_argument, output_folder, refuse_shipped


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model", default="minilm-l6", help="registry name, hub id or folder")
    params.add_arguments(p, AttentionNormsParams)  # the settings, with their ranges
    p.add_argument(
        "--out", required=True, type=output_folder, help="output folder (created if missing)"
    )
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    add_overwrite_argument(p)


def output_files(args: argparse.Namespace) -> list[Path]:
    """Every file the run writes (the shipped-file guard checks these)."""
    return [args.out / f"attention_norms.{ext}" for ext in ("csv", "html", "json")]


def run(args: argparse.Namespace) -> int:
    from probing.analyses.registry import get
    from probing.cli.probe import writable_folder
    from probing.figures.attention_norms import share_comparison_figure
    from probing.figures.export import figure_bytes
    from probing.io import atomic_write, atomic_write_json, atomic_write_text
    from probing.models.registry import load_encoder

    refuse_shipped(output_files(args), args.overwrite)
    writable_folder(args.out)
    encoder = load_encoder(args.model)
    settings = params.from_args(AttentionNormsParams, args)

    def progress(stage: str, done: int, total: int) -> None:
        if not args.quiet and (done % 50 == 0 or done == total):
            end = "" if done < total else "\n"
            print(f"\r{done}/{total} {stage}", end=end, file=sys.stderr)

    result = get("attention-norms").run([encoder], settings, progress)
    out: Path = args.out
    atomic_write_text(
        out / "attention_norms.csv", result.table.to_csv(index=False, float_format="%.5f")
    )
    fig = share_comparison_figure(result, f"{args.dataset} {args.split}")
    html = figure_bytes(fig, "html")
    atomic_write(out / "attention_norms.html", lambda tmp: tmp.write_bytes(html))
    meta = {
        "model": encoder.name,
        "dataset": args.dataset,
        "split": args.split,
        "n_sentences": result.n_sentences,
        "n_documents": result.n_documents,
        "skipped": result.skipped,
        "n_boot": result.n_boot,
        "argv": ["attention-norms", "--model", args.model, *params.argv_of(settings)],
        "averaging": "per document (all its query positions), then over documents; heads averaged per layer",
        "norm_weighting": "row shares of alpha_ij * ||f_h(x_j)|| (Kobayashi et al. 2020)",
        "punctuation": '"." and "," pieces (Clark et al.)',
    }
    atomic_write_json(out / "attention_norms.json", meta)
    if not args.quiet:
        print(f"wrote {', '.join(p.name for p in output_files(args))} to {out}", file=sys.stderr)
    return 0
