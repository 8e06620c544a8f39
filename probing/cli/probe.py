"""CLI command ``probe``: probe every layer of a model for one task; write CSV, JSON, HTML.

    python -m probing probe --model minilm-l6 --task pos --dataset ud-ewt --out /tmp/contextlens
    python -m probing probe --model minilm-l6 --task supersense --dataset semcor
    python -m probing probe --model minilm-l6 --task wsd --dataset semcor --layers 0,3,6

Writes ``<model>__<dataset>__<task>.csv`` (the tidy table), ``.json`` (table + scalar-mix
weights + centre of gravity + settings and timings) and ``.html`` (the layer curves, with
plotly.js embedded so that it opens offline) into ``--out``. Progress: one tqdm bar per
extraction split, then one over the probe fits.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from probing.probes.settings import ProbeSettings
from probing.shipped import add_overwrite_argument, output_folder, refuse_shipped

if TYPE_CHECKING:
    from probing.probes.results import ProbeResults

# Nothing heavy (scikit-learn, pandas, torch) is imported above: `probe --help` stays fast;
# the run imports what it needs.


def output_stem(model: str, dataset: str, task: str) -> str:
    """:func:`probing.probes.store.output_stem`, imported when first used."""
    from probing.probes.store import output_stem as stem

    return stem(model, dataset, task)


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Options of ``python -m probing probe``: the run's settings (one per
    :class:`ProbeSettings` field) and where and how the files are written."""
    ProbeSettings.add_arguments(p)
    p.add_argument(
        "--out",
        type=output_folder,
        default="results",
        help="output folder (default: results/, the shipped runs: needs --overwrite there)",
    )
    p.add_argument(
        "--plotlyjs",
        default="inline",
        choices=["inline", "cdn"],
        help="embed plotly.js in the HTML (inline, ~4.5 MB, offline) or link it (cdn)",
    )
    p.add_argument(
        "--save-probes",
        action="store_true",
        help="also save the fitted per-layer probes (safetensors + JSON) in OUT/probes/",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.add_argument(
        "--compare",
        action="store_true",
        help="also print the comparison table: adjacent layers and best-vs-each, paired "
        "difference with 95 %% CI, p and Holm-adjusted p (seeds folded in)",
    )
    add_overwrite_argument(p)


def run(args: argparse.Namespace) -> int:
    """Run the probes and write the three files; prints a per-layer summary."""
    from probing.errors import ContextLensError

    settings = ProbeSettings.from_args(args)
    try:  # a wrong task/data-set pair is a usage error, not a crash
        task = settings.spec  # the one lookup of the task
        task.field_for(settings.dataset_name)
    except ContextLensError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    refuse_shipped(output_files(args, settings), getattr(args, "overwrite", False))
    from probing.cli.preflight import preflight

    out = writable_folder(args.out)  # before the estimate and the run: nothing computed is lost
    preflight(args, settings)  # before any data
    if task.kind == "sentence":
        from probing.cli.sentence_probe import run_sentence_probe

        return run_sentence_probe(args, settings)

    from probing.cli.progress import progress_bars
    from probing.probes.results import comparison_text, summary
    from probing.probes.run import probe_layers

    bars, progress = progress_bars(args.quiet)
    fitted: dict | None = {} if args.save_probes else None
    results = probe_layers(args.model, settings, progress=progress, keep_probes=fitted)
    for bar in bars.values():
        bar.close()
    results.meta.command = command(settings, args)
    stem = output_stem(args.model, results.dataset, results.task)
    write_outputs(results, out, stem, True if args.plotlyjs == "inline" else "cdn")
    if fitted:
        from probing.probes.saved import probe_dir, save_probes

        info = {
            "model": results.model,
            "task": results.task,
            "dataset": results.dataset,
            "layer_names": results.meta.get("layer_names"),
            "pooling": settings.pooling,
            "command": results.meta["command"],
        }
        save_probes(fitted, probe_dir(out) / stem, info)
        if results.sentence_counts:
            save_sentence_counts(results, out, stem)
    print(summary(results))
    if getattr(args, "compare", False):
        print(comparison_text(results))
    print(f"wrote {out / stem}.csv, .json, .html")
    return 0


def command(settings: ProbeSettings, args: argparse.Namespace) -> str:
    """The command line a run records (``meta.command``): its settings, then
    ``--save-probes`` and ``--out``."""
    extra = (["--save-probes"] if args.save_probes else []) + ["--out", str(args.out)]
    return "python -m probing probe " + " ".join(
        shlex.quote(a) for a in [*settings.to_argv(), *extra]
    )


def output_files(args: argparse.Namespace, settings: ProbeSettings | None = None) -> list[Path]:
    """Every file the run writes: per task name (a sentence task writes one per pooling
    strategy, ``genre-cls`` …) the CSV, JSON and HTML, and with ``--save-probes`` the probes'
    JSON and safetensors. The shipped-file guard checks exactly these."""
    from probing.probes.saved import probe_dir

    settings = settings or ProbeSettings.from_args(args)  # run() hands its own in
    task, dataset = settings.spec, settings.dataset_name
    if task.kind == "sentence":
        from probing.cli.sentence_probe import strategies

        # no list given: every strategy a model may have (ELMo writes only mean and max)
        names = [f"{args.task}-{s}" for s in strategies(settings)]
    else:
        names = [args.task]
    out = Path(args.out)
    files = []
    for name in names:
        stem = output_stem(args.model, dataset, name)
        files += [out / f"{stem}.{ext}" for ext in ("csv", "json", "html")]
        if getattr(args, "save_probes", False) and task.kind != "sentence":
            files += [probe_dir(out) / f"{stem}.{ext}" for ext in ("json", "safetensors")]
            files.append(out / "sentence-scores" / f"{stem}.safetensors")
    return files


def writable_folder(path: str | Path) -> Path:
    """``path`` created if needed and checked to take a file.

    Raises:
        OutputNotWritableError: naming the folder and the reason.
    """
    import tempfile

    from probing.errors import OutputNotWritableError

    out = Path(path)
    try:
        out.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=out, prefix=".write-test-"):
            pass
    except OSError as exc:
        raise OutputNotWritableError(
            f"Cannot write results to {out}: {exc.strerror or exc}. Pick another --out folder."
        ) from exc
    return out


def write_outputs(
    results: ProbeResults, out: Path, stem: str, plotlyjs: bool | str = "cdn"
) -> None:
    """``<stem>.csv``, ``.json`` and ``.html`` in ``out``, each written atomically: a run
    stopped mid-write (full disk, Ctrl-C) leaves the previous file whole, never a truncated
    one that the Layering page or a later comparison would read."""
    from probing.figures.probing import write_html
    from probing.io import atomic_write

    atomic_write(
        out / f"{stem}.csv",
        lambda p: results.table.to_csv(p, index=False, float_format="%.6g"),
        suffix=".csv",
    )
    atomic_write(out / f"{stem}.json", results.to_json, suffix=".json")
    atomic_write(out / f"{stem}.html", lambda p: write_html(results, p, plotlyjs), suffix=".html")


def save_sentence_counts(results: ProbeResults, out: Path, stem: str) -> Path:
    """The run's per-sentence counts in ``OUT/sentence-scores/<stem>.safetensors`` (what
    comparisons across runs are made from, :mod:`probing.probes.statements`)."""
    from probing.probes.reapply import COUNTS_DIR, StoredCounts, save_counts, unit_of

    counts = results.sentence_counts
    n_sentences = next(iter(counts.values())).counts.shape[1]
    stored = StoredCounts(unit_of(results.dataset), n_sentences, counts)
    return save_counts(stored, out / COUNTS_DIR / f"{stem}.safetensors", "the run's predictions")


def main(argv: list[str] | None = None) -> int:
    """``python -m probing.cli.probe …`` (same options as ``python -m probing probe``)."""
    from probing.errors import ContextLensError

    parser = argparse.ArgumentParser(prog="python -m probing probe", description=__doc__)
    parser.add_argument("--data-dir", help="data folder (default: $CONTEXTLENS_DATA_DIR)")
    add_arguments(parser)
    from probing.cli import bounds

    bounds.apply("probe", parser)
    argv = sys.argv[1:] if argv is None else list(argv)
    args = parser.parse_args(argv)
    if args.data_dir:
        from probing.config import set_data_dir

        set_data_dir(args.data_dir)
    try:
        return run(args)
    except ContextLensError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
