"""CLI command ``attention-stats``: Clark et al.'s head statistics over a corpus sample.

    python -m probing attention-stats --model minilm-l6 --dataset ud-ewt --n-sentences 200 --out DIR

writes, in DIR:

- ``head_statistics.csv``: one row per layer × head (layer 1-based, head 0-based), one column
  per statistic (entropy in nats; the others shares of attention in [0, 1]);
- ``head_statistics.html``: the statistics as layer × head heatmaps, self-contained (plotly.js
  embedded, opens offline);
- ``head_statistics.json``: what was run (model, data set, split, sentences, queries, skipped).

With ``--parsers`` (UD-EWT only), also Clark et al.'s heads as parsers (§4.2) on the split's
gold trees (all of its sentences unless ``--parsers-sentences N``):

- ``attention_parsers.csv``: per frequent relation and direction, the best head, its accuracy
  with a sentence-bootstrap interval, and the best fixed-offset baseline's;
- ``attention_parsers.json``: what was run.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from probing import params
from probing.analyses.params import AttentionStatsParams
from probing.shipped import add_overwrite_argument, output_folder, refuse_shipped


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--model", default="minilm-l6", help="registry name, hub id or folder (BERT family)"
    )
    params.add_arguments(p, AttentionStatsParams)  # the settings, with their ranges
    p.add_argument(
        "--out", required=True, type=output_folder, help="output folder (created if missing)"
    )
    p.add_argument(
        "--parsers", action="store_true", help="also score each head as a dependency parser"
    )
    p.add_argument(
        "--parsers-sentences", type=int, default=None, help="sentences for --parsers (default all)"
    )
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    add_overwrite_argument(p)


def output_files(args: argparse.Namespace) -> list[Path]:
    """Every file the run writes (the shipped-file guard checks these)."""
    files = [args.out / f"head_statistics.{ext}" for ext in ("csv", "html", "json")]
    if args.parsers:
        files += [args.out / f"attention_parsers.{ext}" for ext in ("csv", "json")]
    return files


def run(args: argparse.Namespace) -> int:
    from probing.analyses.attention import STATISTICS
    from probing.analyses.registry import get
    from probing.cli.probe import writable_folder
    from probing.figures.attention import statistics_figure
    from probing.figures.export import figure_bytes
    from probing.models.registry import load_encoder

    refuse_shipped(output_files(args), args.overwrite)
    writable_folder(args.out)  # before the run, so that a long run is not lost at the end
    encoder = load_encoder(args.model)
    settings = params.from_args(AttentionStatsParams, args)

    def progress(stage: str, done: int, total: int) -> None:
        if not args.quiet:
            end = "" if done < total else "\n"
            print(f"\r{done}/{total} {stage}", end=end, file=sys.stderr)

    stats = get("attention-stats").run([encoder], settings, progress)
    docs = not settings.per_sentence
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    stats.to_frame().to_csv(out / "head_statistics.csv", index=False, float_format="%.6g")
    title = (
        f"Head statistics: {encoder.name} on {stats.n_sentences} {args.dataset} {args.split} sentences"
        f"<br><sup>means per {'document' if docs else 'sentence'} ({stats.n_documents or stats.n_sentences}), "
        f"then over them; {stats.n_queries} query positions; piece level, special tokens "
        "included; entropy in nats</sup>"
    )
    (out / "head_statistics.html").write_bytes(
        figure_bytes(statistics_figure(stats, title=title), "html")
    )
    meta = {
        "model": encoder.name,
        "dataset": args.dataset,
        "split": args.split,
        "n_sentences": stats.n_sentences,
        "n_queries": stats.n_queries,
        "skipped": stats.skipped,
        "n_documents": stats.n_documents,
        "argv": ["attention-stats", "--model", args.model, *params.argv_of(settings)],
        "averaging": stats.averaging,
        "punctuation": '"." and "," pieces (Clark et al.)',
        "layers": stats.shape[0],
        "heads": stats.shape[1],
        "statistics": STATISTICS,
    }
    (out / "head_statistics.json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    print(
        f"{stats.n_sentences} sentences ({stats.n_queries} pieces, {stats.skipped} skipped) → "
        f"{out}/head_statistics.{{csv,html,json}}"
    )
    if args.parsers:
        from probing.cli.attention_parsers import write_parsers

        write_parsers(encoder, args.split, args.parsers_sentences, out, progress)
    return 0
