"""``python -m probing probe --task genre --dataset brown --sentence-pooling cls|mean|attention``.

One run encodes the sampled Brown sentences once (all strategies the model offers, cached)
and writes, per strategy, ``<model>__brown__genre-<strategy>.csv/.json/.html`` with the
same table and summary as the word-level probes.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path


def _per_doc(text: str | None) -> dict[str, int | None] | None:
    if not text:
        return None
    parts = [p.strip() for p in text.split(",")]
    if len(parts) != 3:
        raise argparse.ArgumentTypeError("--per-doc takes three numbers: train,dev,test")
    values = [None if p.lower() in {"all", "0"} else int(p) for p in parts]
    return dict(zip(("train", "dev", "test"), values, strict=True))


def strategies(args: argparse.Namespace) -> list[str]:
    """The ``--sentence-pooling`` strategies asked for, or every known one."""
    from probing.analyses.sentence_pooling import STRATEGIES

    given = [s.strip() for s in (args.sentence_pooling or "").split(",") if s.strip()]
    return given or list(STRATEGIES)


def run_sentence_probe(args: argparse.Namespace) -> int:
    """Run :func:`probing.probes.sentence.probe_sentences` and write the files."""
    from tqdm.auto import tqdm

    from probing.cli.probe import summary
    from probing.figures.probing import write_html
    from probing.probes.linear import DEFAULT_CS
    from probing.probes.sentence import probe_sentences
    from probing.probes.store import output_stem

    chosen = strategies(args) if args.sentence_pooling else None
    bars: dict[str, tqdm] = {}

    def progress(stage: str, done: int, total: int) -> None:
        if args.quiet:
            return
        bar = bars.get(stage) or bars.setdefault(
            stage, tqdm(total=total, desc=stage, unit="sent", file=sys.stderr)
        )
        bar.update(done - bar.n)
        if done >= total:
            bar.close()

    results = probe_sentences(
        args.model,
        args.task,
        args.dataset or "brown",
        chosen,
        per_doc=_per_doc(args.per_doc),
        seed=args.seed,
        Cs=args.cs or DEFAULT_CS,
        n_boot=args.n_boot,
        progress=progress,
    )
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    command = ["--model", args.model, "--task", args.task, "--dataset", args.dataset or "brown"]
    if args.per_doc:
        command += ["--per-doc", args.per_doc]
    for strategy, res in results.items():
        res.meta["command"] = "python -m probing probe " + " ".join(
            shlex.quote(a)
            for a in [*command, "--sentence-pooling", strategy, "--seed", str(args.seed)]
        )
        stem = output_stem(args.model, res.dataset, f"{res.task}-{strategy}")
        res.table.to_csv(out / f"{stem}.csv", index=False, float_format="%.6g")
        res.to_json(out / f"{stem}.json")
        write_html(res, out / f"{stem}.html", True if args.plotlyjs == "inline" else "cdn")
        print(f"[sentence pooling: {strategy}]")
        print(summary(res))
        print(f"wrote {out / stem}.csv, .json, .html")
    return 0
