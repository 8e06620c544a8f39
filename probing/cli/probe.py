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

from probing.cli.shipped import add_overwrite_argument, refuse_shipped
from probing.encoding import POOLINGS
from probing.probes.defaults import DEFAULT_MAX_TRAIN_SENTENCES, DEFAULT_MAX_TRAIN_WORDS, PROBE_CS
from probing.probes.tasks import TASKS

# Nothing heavy (scikit-learn, pandas, torch) is imported above: `probe --help` stays fast;
# the run imports what it needs.


def output_stem(model: str, dataset: str, task: str) -> str:
    """:func:`probing.probes.store.output_stem`, imported when first used."""
    from probing.probes.store import output_stem as stem

    return stem(model, dataset, task)


def _int_or_all(text: str) -> int | None:
    """``N`` or ``all``/``0`` (no cap)."""
    if text.lower() in {"all", "none", "0"}:
        return None
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError("must be a positive number or 'all'")
    return value


def _layers(text: str) -> list[int]:
    try:
        return [int(x) for x in text.replace(" ", "").split(",") if x]
    except ValueError:
        raise argparse.ArgumentTypeError("layers are comma-separated numbers, e.g. 0,3,6") from None


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Options of ``python -m probing probe``."""
    p.add_argument("--model", default="minilm-l6", help="registry name, folder or hub id")
    p.add_argument("--task", default="pos", choices=list(TASKS), help="probing task")
    p.add_argument("--dataset", help="data set (default: the task's own: pos->ud-ewt, ...)")
    p.add_argument("--layers", type=_layers, help="comma-separated layers (default: all)")
    p.add_argument("--out", default="results", help="output folder (default: results/)")
    p.add_argument(
        "--max-train-sentences",
        type=_int_or_all,
        default=DEFAULT_MAX_TRAIN_SENTENCES,
        help=f"training sentences to encode, a fixed seeded sample (default "
        f"{DEFAULT_MAX_TRAIN_SENTENCES}; 'all' for the whole split)",
    )
    p.add_argument(
        "--max-train-words",
        type=_int_or_all,
        default=DEFAULT_MAX_TRAIN_WORDS,
        help=f"training words per probe fit (default {DEFAULT_MAX_TRAIN_WORDS}; 'all')",
    )
    p.add_argument("--max-dev-sentences", type=_int_or_all, default=None, help="default: all")
    p.add_argument("--max-test-sentences", type=_int_or_all, default=None, help="default: all")
    p.add_argument(
        "--cs",
        type=lambda t: tuple(float(x) for x in t.split(",") if x),
        default=None,
        help="grid of inverse regularisation strengths C tried on dev (default "
        + ",".join(f"{c:g}" for c in PROBE_CS)
        + ")",
    )
    p.add_argument(
        "--seeds",
        type=int,
        default=1,
        help="runs with seeds SEED..SEED+N-1 (own control labels, training sample, MDL "
        "order); scores are means with sd across seeds (committed results: 3)",
    )
    p.add_argument(
        "--per-layer-c",
        action="store_true",
        help="choose C per layer on dev (default: one C for all layers, equal capacity)",
    )
    p.add_argument(
        "--mdl",
        action="store_true",
        help="also the online codelength (Voita & Titov 2020) of task and control labels",
    )
    p.add_argument(
        "--mdl-seeds",
        type=int,
        default=1,
        help="seeds that also get an MDL measurement (default 1: the first; ~10 fits each)",
    )
    p.add_argument(
        "--no-cumulative-mix",
        action="store_true",
        help="skip the cumulative scalar mixes (Tenney et al.'s centre of gravity)",
    )
    p.add_argument("--pooling", default="first", choices=POOLINGS)
    p.add_argument(
        "--sentence-pooling",
        help="sentence tasks (genre): comma-separated cls,mean,attention,max (default: all the "
        "model offers; ELMo: mean,max)",
    )
    p.add_argument(
        "--per-doc",
        help="sentence tasks: sentences per document, train,dev,test (default 20,20,50)",
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--n-boot", type=int, default=1000, help="bootstrap replicates (default 1000)")
    p.add_argument("--no-scalar-mix", action="store_true", help="skip the scalar-mix probe")
    p.add_argument("--no-control", action="store_true", help="skip the control task")
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
    from tqdm.auto import tqdm

    from probing.probes.run import probe_layers
    from probing.probes.tasks import get_task

    try:  # a wrong task/data-set pair is a usage error, not a crash
        get_task(args.task).field_for(args.dataset or get_task(args.task).default_dataset)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    refuse_shipped(output_files(args), getattr(args, "overwrite", False))
    from probing.cli.preflight import preflight

    out = writable_folder(args.out)  # before the estimate and the run: nothing computed is lost
    preflight(args, args.dataset or get_task(args.task).default_dataset)  # before any data
    bars: dict[str, tqdm] = {}
    fitted: dict | None = {} if args.save_probes else None
    if get_task(args.task).kind == "sentence":
        from probing.cli.sentence_probe import run_sentence_probe

        return run_sentence_probe(args)

    def progress(stage: str, done: int, total: int) -> None:
        if args.quiet:
            return
        bar = bars.get(stage)
        if bar is None:
            unit = "fit" if stage == "fit" else "sent"
            bar = bars[stage] = tqdm(total=total, desc=stage, unit=unit, file=sys.stderr)
        bar.total = total
        bar.update(done - bar.n)
        if done >= total:
            bar.close()

    results = probe_layers(
        args.model,
        args.task,
        args.dataset,
        layers=args.layers,
        progress=progress,
        max_train_sentences=args.max_train_sentences,
        seed=args.seed,
        pooling=args.pooling,
        max_train_words=args.max_train_words,
        max_dev_sentences=args.max_dev_sentences,
        max_test_sentences=args.max_test_sentences,
        n_boot=args.n_boot,
        Cs=args.cs or PROBE_CS,
        scalar_mix=not args.no_scalar_mix,
        control=not args.no_control,
        seeds=args.seeds,
        per_layer_c=args.per_layer_c,
        mdl=args.mdl,
        cumulative_mix=not args.no_cumulative_mix,
        mdl_seeds=args.mdl_seeds,
        keep_probes=fitted,
    )
    for bar in bars.values():
        bar.close()
    results.meta.command = "python -m probing probe " + " ".join(
        shlex.quote(a) for a in _reconstruct(args)
    )
    stem = output_stem(args.model, results.dataset, results.task)
    write_outputs(results, out, stem, True if args.plotlyjs == "inline" else "cdn")
    if fitted:
        from probing.probes.saved import probe_dir, save_probes

        info = {"model": results.model, "task": results.task, "dataset": results.dataset,
                "layer_names": results.meta.get("layer_names"), "pooling": args.pooling,
                "command": results.meta["command"]}  # fmt: skip
        save_probes(fitted, probe_dir(out) / stem, info)
        if results.sentence_counts:
            save_sentence_counts(results, out, stem)
    print(summary(results))
    if getattr(args, "compare", False):
        print(comparison_text(results))
    print(f"wrote {out / stem}.csv, .json, .html")
    return 0


def output_files(args: argparse.Namespace) -> list[Path]:
    """Every file the run writes: per task name (a sentence task writes one per pooling
    strategy, ``genre-cls`` …) the CSV, JSON and HTML, and with ``--save-probes`` the probes'
    JSON and safetensors. The shipped-file guard checks exactly these."""
    from probing.probes.saved import probe_dir
    from probing.probes.tasks import get_task

    task = get_task(args.task)
    dataset = args.dataset or task.default_dataset
    if task.kind == "sentence":
        from probing.cli.sentence_probe import strategies

        # no list given: every strategy a model may have (ELMo writes only mean and max)
        names = [f"{args.task}-{s}" for s in strategies(args)]
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


def write_outputs(results, out: Path, stem: str, plotlyjs: bool | str = "cdn") -> None:  # noqa: ANN001
    """``<stem>.csv``, ``.json`` and ``.html`` in ``out``, each written atomically: a run
    stopped mid-write (full disk, Ctrl-C) leaves the previous file whole, never a truncated
    one that the Layering page or a later comparison would read."""
    from probing.figures.probing import write_html
    from probing.io import atomic_write

    atomic_write(out / f"{stem}.csv", lambda p: results.table.to_csv(p, index=False, float_format="%.6g"),
                 suffix=".csv")  # fmt: skip
    atomic_write(out / f"{stem}.json", results.to_json, suffix=".json")
    atomic_write(out / f"{stem}.html", lambda p: write_html(results, p, plotlyjs), suffix=".html")


def save_sentence_counts(results, out: Path, stem: str) -> Path:  # noqa: ANN001 - ProbeResults
    """The run's per-sentence counts in ``OUT/sentence-scores/<stem>.safetensors`` (what
    comparisons across runs are made from, :mod:`probing.probes.statements`)."""
    from probing.probes.reapply import COUNTS_DIR, StoredCounts, save_counts, unit_of

    counts = results.sentence_counts
    n_sentences = next(iter(counts.values())).counts.shape[1]
    stored = StoredCounts(unit_of(results.dataset), n_sentences, counts)
    return save_counts(stored, out / COUNTS_DIR / f"{stem}.safetensors", "the run's predictions")


def comparison_text(results) -> str:  # noqa: ANN001 - ProbeResults
    """The run's comparison table as text (``--compare``)."""
    from probing.probes.compare import Difference, format_table

    table = results.comparisons
    if not table:
        return "no comparison table (fewer than two layers)"
    text = format_table([Difference.from_dict(r) for r in table["rows"]])
    if table.get("selectivity"):
        text += "\n\ntask − control (selectivity) per layer:\n" + format_table(
            [Difference.from_dict(r) for r in table["selectivity"]]
        )
    return text


def summary(results) -> str:  # noqa: ANN001 - ProbeResults
    """A short plain-text table: per-layer score, CI, control, selectivity; baselines."""
    metric = results.metric
    lines = [f"{results.model} · {results.dataset} · {results.task} ({metric}, test split)"]
    lines.append(f"{'layer':>5}  {metric:>8}  {'95% CI':>15}  {'control':>7}  {'select.':>7}")
    for _, r in results.layer_scores().iterrows():
        ctl = "" if r["control"] != r["control"] else f"{r['control']:.3f}"
        sel = "" if r["selectivity"] != r["selectivity"] else (
            f"{r['selectivity']:.3f} [{r['selectivity_ci_low']:.3f}, {r['selectivity_ci_high']:.3f}]")  # fmt: skip
        lines.append(
            f"{int(r['layer']):>5}  {r['value']:>8.3f}  [{r['ci_low']:.3f}, {r['ci_high']:.3f}]"
            f"  {ctl:>7}  {sel}"
        )
    for _, r in results.baselines().iterrows():
        lines.append(f"baseline {r['probe']:<12} {r['value']:.3f}")
    if results.scalar_mix:
        m = results.scalar_mix
        weights = " ".join(f"{w:.2f}" for w in m["weights"])
        lines.append(f"scalar mix {m['accuracy']:.3f}; weights {weights}; γ {m['gamma']:.2f}")
    for _, r in results.summaries().iterrows():
        where = f"layer {int(r['layer'])} (chosen on dev)" if r["probe"] == "best_layer" else ""
        lines.append(
            f"{r['probe']:<18} {where} {r['value']:.3f} [{r['ci_low']:.3f}, {r['ci_high']:.3f}]"
        )
    lines.append(f"centre of gravity (running best) {results.centre_of_gravity:.2f}")
    if results.meta.get("C_at_grid_edge"):
        lines.append("note: the C chosen on dev is at the edge of the grid (--cs)")
    return "\n".join(lines)


def _reconstruct(args: argparse.Namespace) -> list[str]:
    parts = ["--model", args.model, "--task", args.task]
    if args.dataset:
        parts += ["--dataset", args.dataset]
    if args.layers:
        parts += ["--layers", ",".join(map(str, args.layers))]
    for flag, value in (
        ("--max-train-sentences", args.max_train_sentences),
        ("--max-train-words", args.max_train_words),
        ("--max-dev-sentences", args.max_dev_sentences),
        ("--max-test-sentences", args.max_test_sentences),
    ):
        parts += [flag, "all" if value is None else str(value)]
    if args.cs:
        parts += ["--cs", ",".join(f"{c:g}" for c in args.cs)]
    if args.pooling != "first":
        parts += ["--pooling", args.pooling]
    parts += ["--seed", str(args.seed), "--seeds", str(args.seeds)]
    for flag in ("per_layer_c", "mdl", "no_scalar_mix", "no_control", "no_cumulative_mix"):
        if getattr(args, flag):
            parts.append("--" + flag.replace("_", "-"))
    if args.mdl and args.mdl_seeds != 1:
        parts += ["--mdl-seeds", str(args.mdl_seeds)]
    if args.save_probes:
        parts.append("--save-probes")
    parts += ["--out", str(args.out)]
    return parts


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
