"""CLI command ``contextuality``: Ethayarajh's (2019) metrics per layer over a corpus sample.

    python -m probing contextuality --model minilm-l6 --dataset ud-ewt --n-sentences 500 --out DIR

writes ``DIR/contextuality.csv`` (one row per model and layer, static first),
``DIR/contextuality.json`` (the same rows plus the run's settings) and
``DIR/contextuality.html`` (the interactive figure). ``--model`` may be given twice to
compare two models in one figure.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from probing.datasets.registry import corpus_names
from probing.encoding import POOLINGS
from probing.shipped import add_overwrite_argument, output_folder, refuse_shipped


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--model",
        action="append",
        help="model name or folder (repeat to compare; default minilm-l6)",
    )
    p.add_argument("--dataset", default="ud-ewt", choices=corpus_names())
    p.add_argument("--split", default="train", choices=["train", "dev", "test"])
    p.add_argument("--n-sentences", type=int, default=500, help="sentences sampled (seeded)")
    p.add_argument(
        "--min-count", type=int, default=5, help="occurrences a word type needs (default 5)"
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--uncentred-mev",
        action="store_true",
        help="MEV of the uncentred occurrence matrix (default: centred, as the reference PCA)",
    )
    p.add_argument("--pooling", default="first", choices=POOLINGS)
    p.add_argument(
        "--out",
        type=output_folder,
        default="contextuality",
        help="output folder (default ./contextuality)",
    )
    add_overwrite_argument(p)


def run(args: argparse.Namespace) -> int:
    import pandas as pd

    from probing.analyses.contextuality import contextuality_table, encode_corpus, sample_corpus
    from probing.figures.contextual import contextuality_figure
    from probing.models.registry import load_encoder

    models = args.model or ["minilm-l6"]
    if args.n_sentences < 2:
        print("error: --n-sentences must be at least 2", file=sys.stderr)
        return 2
    out = Path(args.out)
    refuse_shipped(
        [out / f"contextuality.{ext}" for ext in ("csv", "json", "html")],
        getattr(args, "overwrite", False),
    )
    out.mkdir(parents=True, exist_ok=True)
    sentences = sample_corpus(args.dataset, args.split, args.n_sentences, args.seed)
    tables = []
    for name in models:
        encoder = load_encoder(name)
        start = time.perf_counter()
        corpus = encode_corpus(encoder, sentences, pooling=args.pooling, progress=_progress(name))
        table = contextuality_table(
            corpus, min_count=args.min_count, seed=args.seed, centred=not args.uncentred_mev
        )
        table.insert(1, "dataset", f"{args.dataset}/{args.split}")
        tables.append(table)
        print(
            f"\n{name}: {len(sentences)} sentences, {table['n_types'].iloc[0]} word types "
            f"with ≥ {args.min_count} occurrences, {time.perf_counter() - start:.1f} s",
            file=sys.stderr,
        )
    result = pd.concat(tables, ignore_index=True)
    result.to_csv(out / "contextuality.csv", index=False)
    settings = {k: v for k, v in vars(args).items() if not k.startswith("_") and k != "command"}
    settings["model"] = models
    (out / "contextuality.json").write_text(
        json.dumps(
            {"settings": settings, "rows": result.to_dict(orient="records")},
            indent=2,
            # numpy numbers as numbers; the --out folder (a Path since issue 48) as text
            default=lambda v: str(v) if isinstance(v, Path) else float(v),
        )
    )
    fig = contextuality_figure(tables)
    fig.update_layout(
        title=f"Contextuality per layer ({args.dataset}/{args.split}, {len(sentences)} sentences)"
    )
    fig.write_html(out / "contextuality.html", include_plotlyjs=True)
    cols = [
        "model",
        "layer_name",
        "self_similarity",
        "self_similarity_adjusted",
        "intra_sentence",
        "intra_sentence_adjusted",
        "mev",
        "mev_adjusted",
        "self_similarity_baseline",
    ]
    print(result[cols].round(3).to_string(index=False, na_rep="n/a"))
    if result["mev"].isna().any():
        print(
            "n/a: a static vector is the same in every sentence, so its occurrences have no "
            "variance and no (centred) MEV; --uncentred-mev gives 1 there."
        )
    print(f"wrote {out / 'contextuality.csv'}, .json and .html")
    return 0


def _progress(name: str):  # noqa: ANN202
    def report(done: int, total: int) -> None:
        print(f"\r{name}: encoding {done}/{total} sentences", end="", file=sys.stderr, flush=True)

    return report
