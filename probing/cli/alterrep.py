"""Files of the command ``alterrep`` (built from its registry entry by
:mod:`probing.cli.registered`): counterfactual pushes of the subject's number, layer by layer.

    python -m probing alterrep --model minilm-l6-mlm --layers all --out DIR

writes ``DIR/<model>__alterrep.csv`` (one row per layer: clean and counterfactual agreement
accuracy, flip rates of the counterfactual and the random push, their paired difference, each
with a 95 % sentence-bootstrap interval), ``.json`` (the same with the run's settings and
command line) and ``.html`` (the figure). Method: :mod:`probing.interventions.alterrep`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from probing.cli.registered import command

if TYPE_CHECKING:
    from probing.cli.registered import Job

add_arguments, run = command("alterrep")  # the command's parser and run, for direct callers


def files(job: Job) -> list[Path]:
    """Every file the run writes (the shipped-file guard checks these)."""
    return [
        job.out / f"{job.stem(job.models[0])}__alterrep.{ext}" for ext in ("csv", "json", "html")
    ]


def write(job: Job, result: dict[str, Any]) -> None:
    import pandas as pd

    from probing.figures.alterrep import flip_figure
    from probing.figures.export import figure_bytes
    from probing.io import atomic_write, atomic_write_json, atomic_write_text

    result["argv"] = job.argv
    csv, meta, html = files(job)
    atomic_write_text(csv, pd.DataFrame(result["rows"]).to_csv(index=False, float_format="%.5f"))
    atomic_write_json(meta, result)
    page = figure_bytes(flip_figure(result), "html")
    atomic_write(html, lambda tmp: tmp.write_bytes(page))
    table = pd.DataFrame(result["rows"])[
        ["layer", "accuracy_clean", "flip_counterfactual", "flip_random"]
    ]
    print(table.round(3).to_string(index=False))
