"""Files of the command ``attention-stats`` (built from its registry entry by
:mod:`probing.cli.registered`): Clark et al.'s head statistics over a corpus sample.

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

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from probing.cli.registered import command

if TYPE_CHECKING:
    from probing.cli.registered import Job

add_arguments, run = command("attention-stats")  # the command's parser and run, for direct callers


def files(job: Job) -> list[Path]:
    """Every file the run writes (the shipped-file guard checks these)."""
    out = [job.out / f"head_statistics.{ext}" for ext in ("csv", "html", "json")]
    if job.extras.parsers:
        out += [job.out / f"attention_parsers.{ext}" for ext in ("csv", "json")]
    return out


def write(job: Job, stats: Any) -> None:
    from probing.analyses.attention import STATISTICS
    from probing.figures.attention import statistics_figure
    from probing.figures.export import figure_bytes

    settings, out, encoder = job.params, job.out, job.encoders[0]
    docs = not settings.per_sentence
    stats.to_frame().to_csv(out / "head_statistics.csv", index=False, float_format="%.6g")
    title = (
        f"Head statistics: {encoder.name} on {stats.n_sentences} {settings.dataset} "
        f"{settings.split} sentences<br><sup>means per {'document' if docs else 'sentence'} "
        f"({stats.n_documents or stats.n_sentences}), then over them; {stats.n_queries} query "
        "positions; piece level, special tokens included; entropy in nats</sup>"
    )
    (out / "head_statistics.html").write_bytes(
        figure_bytes(statistics_figure(stats, title=title), "html")
    )
    meta = {
        "model": encoder.name,
        "dataset": settings.dataset,
        "split": settings.split,
        "n_sentences": stats.n_sentences,
        "n_queries": stats.n_queries,
        "skipped": stats.skipped,
        "n_documents": stats.n_documents,
        "argv": job.argv,
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
    if job.extras.parsers:
        from probing.cli.attention_parsers import write_parsers

        def progress(done: int, total: int) -> None:  # the scorer counts sentences only
            job.progress("heads as parsers", done, total)

        write_parsers(encoder, settings.split, job.extras.parsers_sentences, out, progress)
