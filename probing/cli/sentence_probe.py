"""``python -m probing probe --task genre --dataset brown --sentence-pooling cls|mean|attention``.

One run encodes the sampled Brown sentences once (all strategies the model offers, cached)
and writes, per strategy, ``<model>__brown__genre-<strategy>.csv/.json/.html`` with the
same table and summary as the word-level probes.
"""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path

from probing.probes.settings import ProbeSettings


def strategies(settings: ProbeSettings) -> list[str]:
    """The ``--sentence-pooling`` strategies asked for, or every known one."""
    from probing.probes.runners.sentence import strategies as asked

    return asked(settings)


def run_sentence_probe(args: argparse.Namespace, settings: ProbeSettings) -> int:
    """Run the task's sentence runner and write the files (``args``: where and how)."""
    from probing.cli.progress import progress_bars
    from probing.figures.probing import write_html
    from probing.models.registry import load_encoder
    from probing.probes.results import summary
    from probing.probes.store import output_stem

    task = settings.spec
    _, progress = progress_bars(args.quiet)
    results = task.runner()(task, load_encoder(settings.model), settings, progress=progress)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    # The recorded command: the data set always, no caps (the sentence probe has none).
    base = ProbeSettings(
        model=settings.model,
        task=settings.task,
        dataset=settings.dataset_name,
        per_doc=settings.per_doc,
    )
    for strategy, res in results.items():
        argv = [
            *base.to_argv(only=("model", "task", "dataset", "per_doc")),
            "--sentence-pooling",
            strategy,
            "--seed",
            str(settings.seed),
        ]
        res.meta["command"] = "python -m probing probe " + " ".join(shlex.quote(a) for a in argv)
        stem = output_stem(settings.model, res.dataset, f"{res.task}-{strategy}")
        res.table.to_csv(out / f"{stem}.csv", index=False, float_format="%.6g")
        res.to_json(out / f"{stem}.json")
        write_html(res, out / f"{stem}.html", True if args.plotlyjs == "inline" else "cdn")
        print(f"[sentence pooling: {strategy}]")
        print(summary(res))
        print(f"wrote {out / stem}.csv, .json, .html")
    return 0
