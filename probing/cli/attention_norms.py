"""Files of the command ``attention-norms`` (built from its registry entry by
:mod:`probing.cli.registered`): Clark et al.'s attention to [SEP], punctuation and [CLS] per
layer, under raw and norm-weighted attention (Kobayashi et al. 2020).

    python -m probing attention-norms --model minilm-l6 --n-sentences 2000 --out DIR

writes ``attention_norms.csv`` (statistic × layer: raw, norm, norm − raw, each with a 95 %
paired document-bootstrap interval), ``attention_norms.html`` (the figure) and
``attention_norms.json`` (what was run).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from probing.cli.registered import command

if TYPE_CHECKING:
    from probing.cli.registered import Job

add_arguments, run = command("attention-norms")  # the command's parser and run, for direct callers


def files(job: Job) -> list[Path]:
    """Every file the run writes (the shipped-file guard checks these)."""
    return [job.out / f"attention_norms.{ext}" for ext in ("csv", "html", "json")]


def write(job: Job, result: Any) -> None:
    from probing.figures.attention_norms import share_comparison_figure
    from probing.figures.export import figure_bytes
    from probing.io import atomic_write, atomic_write_json, atomic_write_text

    csv, html_path, json_path = files(job)
    settings = job.params
    atomic_write_text(csv, result.table.to_csv(index=False, float_format="%.5f"))
    fig = share_comparison_figure(result, f"{settings.dataset} {settings.split}")
    html = figure_bytes(fig, "html")
    atomic_write(html_path, lambda tmp: tmp.write_bytes(html))
    meta = {
        "model": job.encoders[0].name,
        "dataset": settings.dataset,
        "split": settings.split,
        "n_sentences": result.n_sentences,
        "n_documents": result.n_documents,
        "skipped": result.skipped,
        "n_boot": result.n_boot,
        "argv": job.argv,
        "averaging": "per document (all its query positions), then over documents; heads averaged per layer",
        "norm_weighting": "row shares of alpha_ij * ||f_h(x_j)|| (Kobayashi et al. 2020)",
        "punctuation": '"." and "," pieces (Clark et al.)',
    }
    atomic_write_json(json_path, meta)
