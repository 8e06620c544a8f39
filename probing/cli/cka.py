"""Files of the command ``cka`` (built from its registry entry by :mod:`probing.cli.registered`):
linear CKA between every pair of layers of two models (or within one) on the same words of a
data-set sample, with sentence-bootstrap intervals.

    python -m probing cka --model-a minilm-l6 --model-b elmo-mini --n-words 2000 --out DIR

writes ``cka_<a>__<b>.csv`` (one row per layer pair: CKA and its 95 % interval),
``cka_<a>__<b>.html`` (the heat map) and ``cka_<a>__<b>.json`` (what was run, and the
matrices). Without ``--model-b`` model A is compared with itself.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from probing.cli.registered import command

if TYPE_CHECKING:
    from probing.analyses.cka import CKAResult
    from probing.cli.registered import Job

add_arguments, run = command("cka")  # the command's parser and run, for direct callers


def files(job: Job) -> list[Path]:
    """Every file the run writes (the shipped-file guard checks these)."""
    stem = f"cka_{job.stem(job.models[0])}__{job.stem(job.models[-1])}"
    return [job.out / f"{stem}.{ext}" for ext in ("csv", "html", "json")]


def write(job: Job, result: CKAResult) -> None:
    import pandas as pd

    from probing.figures.cka import cka_figure
    from probing.figures.export import figure_bytes
    from probing.io import atomic_write, atomic_write_json, atomic_write_text

    csv, html, meta = files(job)
    atomic_write_text(csv, pd.DataFrame(result.to_rows()).to_csv(index=False, float_format="%.5f"))
    page = figure_bytes(cka_figure(result), "html")
    atomic_write(html, lambda tmp: tmp.write_bytes(page))
    atomic_write_json(
        meta,
        {
            **result.to_record(),
            "argv": job.argv,
            "estimator": "linear CKA, unbiased HSIC (Song et al. 2012; Kornblith et al. 2019 debiased)",
            "interval": "95 % percentile, sentences resampled; copies of one word not paired",
        },
    )
