"""Files of the command ``contextuality`` (built from its registry entry by
:mod:`probing.cli.registered`): Ethayarajh's (2019) metrics per layer over a corpus sample.

    python -m probing contextuality --model minilm-l6 --dataset ud-ewt --n-sentences 500 --out DIR

writes ``DIR/contextuality.csv`` (one row per model and layer, static first),
``DIR/contextuality.json`` (the same rows plus the run's settings) and
``DIR/contextuality.html`` (the interactive figure). ``--model`` may be given twice to
compare two models in one figure.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from probing.cli.registered import command

if TYPE_CHECKING:
    from probing.cli.registered import Job

add_arguments, run = command("contextuality")  # the command's parser and run, for direct callers

COLUMNS = [  # the table printed on stdout
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


def files(job: Job) -> list[Path]:
    """Every file the run writes (the shipped-file guard checks these)."""
    return [job.out / f"contextuality.{ext}" for ext in ("csv", "json", "html")]


def write(job: Job, result: Any) -> None:
    from probing.figures.contextual import contextuality_figure

    settings, out = job.params, job.out
    csv, meta, html = files(job)
    tables = [table for _, table in result.groupby("model", sort=False)]
    for table in tables:
        print(
            f"{table['model'].iloc[0]}: {settings.n_sentences} sentences, "
            f"{table['n_types'].iloc[0]} word types with ≥ {settings.min_count} occurrences",
            file=sys.stderr,
        )
    result.to_csv(csv, index=False)
    record = {"model": job.models, **dataclasses.asdict(settings), "out": str(out)}
    record["argv"] = job.argv
    meta.write_text(
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
    fig.write_html(html, include_plotlyjs=True)
    print(result[COLUMNS].round(3).to_string(index=False, na_rep="n/a"))
    if result["mev"].isna().any():
        print(
            "n/a: a static vector is the same in every sentence, so its occurrences have no "
            "variance and no (centred) MEV; --uncentred-mev gives 1 there."
        )
