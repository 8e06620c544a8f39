"""Files of the command ``train-tuned-lens`` (built from its registry entry by
:mod:`probing.cli.registered`): tuned-lens translators for any masked LM (Belrose et al.
2023), trained on held-out text, then scored against the logit lens.

    python -m probing train-tuned-lens --model minilm-l6-mlm --out DIR

writes ``DIR/tuned_lens.safetensors`` (one affine translator per layer, provenance in the
header) and ``DIR/tuned_lens_eval.json`` (per layer, logit vs tuned lens: mean KL to the
final distribution and the share of masks whose final answer is already top-1, with 95 %
paired sentence-bootstrap intervals, on sentences the translators never saw; and the command
line). Defaults: trained on Brown dev files (held out from the embedded MLM head's training
text), scored on UD-EWT dev. Files shipped in ``models/`` or ``results/`` are replaced only
with ``--overwrite``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from probing.cli.registered import command

if TYPE_CHECKING:
    from probing.analyses.tuned_lens import LensRun
    from probing.cli.registered import Job

add_arguments, run = command("train-tuned-lens")  # the command's parser and run, for direct callers


def files(job: Job) -> list[Path]:
    """Every file the run writes (results/ and the embedded model's translators are shipped)."""
    return [job.out / "tuned_lens.safetensors", job.out / "tuned_lens_eval.json"]


def write(job: Job, result: LensRun) -> None:
    from probing.io import atomic_write_json

    lens_path, report_path = files(job)
    result.lens.save(lens_path)
    atomic_write_json(report_path, {**result.report, "argv": job.argv})
