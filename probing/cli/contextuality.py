"""CLI command ``contextuality``: Ethayarajh's (2019) metrics per layer over a corpus sample.

    python -m probing contextuality --model minilm-l6 --dataset ud-ewt --n-sentences 500 --out DIR

writes ``DIR/contextuality.csv`` (one row per model and layer, static first),
``DIR/contextuality.json`` (the same rows plus the run's settings) and
``DIR/contextuality.html`` (the interactive figure). ``--model`` may be given twice to
compare two models in one figure.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path

from probing import params
from probing.analyses.params import ContextualityParams
from probing.shipped import add_overwrite_argument, output_folder, refuse_shipped


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--model",
        action="append",
        help="model name or folder (repeat to compare; default minilm-l6)",
    )
    params.add_arguments(p, ContextualityParams)  # the settings, with their ranges
    p.add_argument(
        "--out",
        type=output_folder,
        default="contextuality",
        help="output folder (default ./contextuality)",
    )
    add_overwrite_argument(p)


def run(args: argparse.Namespace) -> int:

    from probing.analyses.registry import get
    from probing.figures.contextual import contextuality_figure
    from probing.models.registry import load_encoder

    models = args.model or ["minilm-l6"]
    settings = params.from_args(ContextualityParams, args)
    out = Path(args.out)
    refuse_shipped(
        [out / f"contextuality.{ext}" for ext in ("csv", "json", "html")],
        getattr(args, "overwrite", False),
    )
    out.mkdir(parents=True, exist_ok=True)
    encoders = [load_encoder(name) for name in models]
    start = time.perf_counter()

    def progress(stage: str, done: int, total: int) -> None:
        print(f"\r{stage} {done}/{total} sentences", end="", file=sys.stderr, flush=True)

    result = get("contextuality").run(encoders, settings, progress)
    tables = [table for _, table in result.groupby("model", sort=False)]
    for table in tables:
        name = table["model"].iloc[0]
        print(
            f"\n{name}: {settings.n_sentences} sentences, {table['n_types'].iloc[0]} word "
            f"types with ≥ {settings.min_count} occurrences",
            file=sys.stderr,
        )
    print(f"{time.perf_counter() - start:.1f} s", file=sys.stderr)
    result.to_csv(out / "contextuality.csv", index=False)
    record = {"model": models, **dataclasses.asdict(settings), "out": str(out)}
    record["argv"] = ["contextuality"] + [a for m in models for a in ("--model", m)]
    record["argv"] += params.argv_of(settings)
    (out / "contextuality.json").write_text(
        json.dumps(
            {"settings": record, "rows": result.to_dict(orient="records")},
            indent=2,
            default=float,  # numpy numbers as numbers
        )
    )
    fig = contextuality_figure(tables)
    fig.update_layout(
        title=f"Contextuality per layer ({settings.dataset}/{settings.split}, "
        f"{settings.n_sentences} sentences)"
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
