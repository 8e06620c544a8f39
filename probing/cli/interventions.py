"""``python -m probing erase | agreement | ablate-heads``: the interventions, headless.

Examples::

    python -m probing erase --model minilm-l6-mlm --task pos --layers all --method leace \\
        --out /tmp/contextlens
    python -m probing agreement --model minilm-l6-mlm --patch --out /tmp/contextlens
    python -m probing ablate-heads --model minilm-l6-mlm --out /tmp/contextlens

Each writes ``<model>__<what>.csv`` (the tidy table), ``.json`` (everything, with the
settings) and ``.html`` (the figure) into ``--out`` (default ``results/interventions``,
which, like all of the shipped results, is written into only with ``--overwrite``).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from probing.shipped import add_overwrite_argument, output_folder, refuse_shipped

if TYPE_CHECKING:
    from probing.encoders.base import Encoder

DEFAULT_OUT = "results/interventions"


def _common(p: argparse.ArgumentParser, default_model: str = "minilm-l6-mlm") -> None:
    p.add_argument("--model", default=default_model, help="registry name, folder or hub id")
    p.add_argument(
        "--out",
        type=output_folder,
        default=DEFAULT_OUT,
        help=f"output folder (default: {DEFAULT_OUT})",
    )
    p.add_argument("--n-boot", type=int, default=1000, help="bootstrap replicates")
    p.add_argument(
        "--plotlyjs",
        default="cdn",
        choices=["inline", "cdn"],
        help="embed plotly.js in the HTML (inline) or link it (cdn)",
    )
    p.add_argument("--quiet", action="store_true", help="no progress output")
    add_overwrite_argument(p)


def _progress(quiet: bool) -> Callable[[str, int, int], None] | None:
    if quiet:
        return None

    def show(stage: str, done: int, total: int) -> None:
        print(f"  {stage}: {done}/{total}", flush=True)

    return show


def _write(
    out: Path, stem: str, payload: dict, rows: list[dict], figures: list, plotlyjs: bool | str
) -> None:
    import pandas as pd

    from probing.io import atomic_write_json, atomic_write_text

    out.mkdir(parents=True, exist_ok=True)
    flat = [{k: v for k, v in r.items() if not isinstance(v, (list, dict))} for r in rows]
    atomic_write_text(out / f"{stem}.csv", pd.DataFrame(flat).to_csv(index=False))
    atomic_write_json(out / f"{stem}.json", json.loads(json.dumps(payload, default=float)))
    html = "\n".join(
        f.to_html(full_html=False, include_plotlyjs=(plotlyjs if i == 0 else False))
        for i, f in enumerate(figures)
    )
    atomic_write_text(out / f"{stem}.html", f"<html><body>{html}</body></html>")
    print(f"wrote {out / stem}.csv, .json, .html")


def _files(out: str, stem: str) -> list[Path]:
    return [Path(out) / f"{stem}.{ext}" for ext in ("csv", "json", "html")]


# -- erase ----------------------------------------------------------------------------------


def add_erase_arguments(p: argparse.ArgumentParser) -> None:
    """Options of ``python -m probing erase``."""
    from probing.interventions.data import ERASABLE

    _common(p)
    p.add_argument("--task", default="pos", choices=list(ERASABLE), help="labels to erase")
    p.add_argument("--dataset", help="data set (default: the task's own)")
    p.add_argument("--layers", default=None, help="'all' (default) or e.g. 0,3,6")
    p.add_argument("--method", default="leace", choices=["leace", "inlp"])
    p.add_argument("--n-random", type=int, default=3, help="random-subspace draws")
    p.add_argument("--seeds", type=int, default=3, help="INLP fits (seeds)")
    p.add_argument("--train-sentences", type=int, default=600)
    p.add_argument("--test-sentences", type=int, default=300)
    p.add_argument(
        "--heldout-sentences",
        type=int,
        default=300,
        help="sentences whose masked words measure the LM effect",
    )
    p.add_argument("--no-recovery", action="store_true", help="skip the later-layer probes")
    p.add_argument(
        "--fit-sentences",
        type=int,
        default=0,
        help="training sentences the eraser is fitted on (0: the whole split, up to "
        "--max-fit-words words); --train-sentences of them train the in-sample probes",
    )
    p.add_argument("--max-fit-words", type=int, default=250_000, help="memory cap on the fit set")
    p.add_argument(
        "--heldout-train-sentences",
        type=int,
        default=0,
        help="dev sentences the held-out probes are trained on (0: all but INLP's stop set)",
    )
    p.add_argument(
        "--fit-curve",
        default="400,1600,6400",
        help="smaller fit sets (sentences) for the held-out curve, e.g. 400,1600 ('none': no curve)",
    )


def erase_stem(model: str, dataset: str, task: str, method: str) -> str:
    from probing.probes.store import output_stem

    return f"{output_stem(model, dataset, task)}__erase-{method}"


def run_erase(args: argparse.Namespace) -> int:
    from probing.interventions.data import task_field
    from probing.interventions.erasure_run import ErasureSpec, run_erasure
    from probing.models.registry import load_encoder

    dataset, _ = task_field(args.task, args.dataset)
    stem = erase_stem(args.model, dataset, args.task, args.method)
    recovery = [] if args.no_recovery else [Path(args.out) / f"{stem}__recovery.csv"]
    curve_csv = Path(args.out) / f"{stem}__fitcurve.csv"
    refuse_shipped([*_files(args.out, stem), *recovery, curve_csv], args.overwrite)
    curve = _fit_curve(args.fit_curve)
    spec = ErasureSpec(
        model=args.model,
        task=args.task,
        dataset=dataset,
        layers=None if args.layers is None or None in args.layers else tuple(args.layers),
        method=args.method,
        n_random=args.n_random,
        seeds=args.seeds,
        train_sentences=args.train_sentences,
        test_sentences=args.test_sentences,
        heldout_sentences=args.heldout_sentences,
        recovery=not args.no_recovery,
        n_boot=args.n_boot,
        fit_sentences=args.fit_sentences,
        max_fit_words=args.max_fit_words,
        heldout_train_sentences=args.heldout_train_sentences,
        fit_curve=curve,
    )
    encoder = load_encoder(args.model)
    result = run_erasure(encoder, spec, _progress(args.quiet)).to_json()
    result["argv"] = _erase_argv(args)
    from probing.figures.interventions import erasure_figure, fit_curve_figure, recovery_figure

    figures = [erasure_figure(result)] + ([recovery_figure(result)] if result["recovery"] else [])
    figures += [fit_curve_figure(result)] if result["curve"] else []
    js = True if args.plotlyjs == "inline" else "cdn"
    _write(Path(args.out), stem, result, result["rows"], figures, js)
    if result["recovery"]:
        import pandas as pd

        from probing.io import atomic_write_text

        atomic_write_text(
            Path(args.out) / f"{stem}__recovery.csv",
            pd.DataFrame(result["recovery"]).to_csv(index=False),
        )
    if result["curve"]:
        import pandas as pd

        from probing.io import atomic_write_text

        atomic_write_text(curve_csv, pd.DataFrame(result["curve"]).to_csv(index=False))
    from probing.interventions.erasure_summary import protocol_table, summary_sentences

    print(protocol_table(result))
    for sentence in summary_sentences(result):
        print(f"- {sentence}")
    return 0


def _fit_curve(text: str) -> tuple[int, ...]:
    from probing.errors import InvalidArgumentError

    if text.strip().lower() in ("", "none"):
        return ()
    try:
        sizes = tuple(int(t) for t in text.split(","))
    except ValueError:
        sizes = ()
    if not sizes or min(sizes) < 1:
        raise InvalidArgumentError(
            f"--fit-curve takes sentence counts like 400,1600,6400 (or none), not {text!r}."
        )
    return sizes


def _erase_argv(args: argparse.Namespace) -> list[str]:
    """The command that made the files (every setting spelled out)."""
    argv = ["python", "-m", "probing", "erase", "--model", args.model, "--task", args.task]
    argv += ["--dataset", args.dataset] if args.dataset else []
    layers = (
        "all" if args.layers is None or None in args.layers else ",".join(map(str, args.layers))
    )
    argv += ["--layers", layers, "--method", args.method, "--n-random", str(args.n_random)]
    argv += ["--seeds", str(args.seeds), "--train-sentences", str(args.train_sentences)]
    argv += ["--test-sentences", str(args.test_sentences)]
    argv += ["--heldout-sentences", str(args.heldout_sentences)]
    argv += ["--fit-sentences", str(args.fit_sentences), "--max-fit-words", str(args.max_fit_words)]
    argv += ["--heldout-train-sentences", str(args.heldout_train_sentences)]
    argv += ["--fit-curve", args.fit_curve, "--n-boot", str(args.n_boot)]
    argv += ["--no-recovery"] if args.no_recovery else []
    return [*argv, "--quiet", "--overwrite", "--out", str(args.out)]


# -- agreement ------------------------------------------------------------------------------


def add_agreement_arguments(p: argparse.ArgumentParser) -> None:
    """Options of ``python -m probing agreement``."""
    _common(p)
    p.add_argument(
        "--patch",
        action="store_true",
        help="also activation patching on the templated minimal pairs",
    )
    p.add_argument(
        "--patch-every",
        type=int,
        default=24,
        help="patch every N-th templated pair (a fixed stride)",
    )
    p.add_argument(
        "--cases-every",
        type=int,
        default=1,
        help="score every N-th UD-EWT and templated case (a fixed stride; 1: all)",
    )


def run_agreement(args: argparse.Namespace) -> int:
    from probing.figures.interventions import agreement_figure, patching_figure
    from probing.interventions import agreement as ag
    from probing.models.registry import load_encoder
    from probing.probes.store import output_stem

    stem = output_stem(args.model, "ud-ewt+templates", "agreement")
    refuse_shipped(_files(args.out, stem), args.overwrite)
    encoder = load_encoder(args.model)
    if encoder.info.objective == "bidirectional-lm":
        return _agreement_bilm(args, encoder, stem)
    from probing.interventions.hooks import require_mlm

    encoder = require_mlm(encoder, "Agreement")
    say = _progress(args.quiet) or (lambda *_: None)
    say("reading UD-EWT", 0, 1)
    every = max(1, getattr(args, "cases_every", 1))  # a fixed stride, for large models
    cases = ag.ud_cases()[::every] + ag.templated_cases(every=every)
    prepared = ag.prepare(encoder, cases)
    say("scoring", 0, 1)
    correct = ag.margins(encoder, prepared) > 0
    rows = ag.summary(cases, prepared.kept, correct, n_boot=args.n_boot)
    payload: dict = {
        "model": encoder.name,
        "rows": rows,
        "n_cases": len(cases),
        "n_scored": len(prepared.kept),
        "left_out": "cases whose verb forms are not single pieces",
    }
    figures = [agreement_figure(rows, "attractors"), agreement_figure(rows, "distance")]
    if args.patch:
        from probing.interventions.patching import pair_batches, patch_pairs

        say("patching", 0, 1)
        pairs = pair_batches(encoder, ag.templated_cases(every=args.patch_every))
        payload["patching"] = patch_pairs(encoder, pairs, n_boot=args.n_boot)
        grid = payload["patching"]
        figures.append(patching_figure(grid["roles"], "Patching: layer × position role"))
        figures.append(patching_figure(grid["heads"], "Patching: layer × head output"))
    js = True if args.plotlyjs == "inline" else "cdn"
    _write(Path(args.out), stem, payload, rows, figures, js)
    return 0


def _agreement_bilm(args: argparse.Namespace, encoder: Encoder, stem: str) -> int:
    """Agreement and patching with an ELMo's forward LM (left context only, Linzen et al.)."""
    from probing.figures.interventions import agreement_figure, patching_figure
    from probing.interventions import agreement as ag
    from probing.interventions.hooks import require_bilm
    from probing.interventions.patching import make_batches, patch_pairs, templated_pairs

    require_bilm(encoder, "Agreement")  # NoLMHeadError before any data is read
    say = _progress(args.quiet) or (lambda *_: None)
    say("reading UD-EWT", 0, 1)
    cases = ag.ud_cases() + ag.templated_cases()
    prepared = ag.prepare(encoder, cases)  # left contexts: the forward LM's setting
    kept = prepared.kept
    say("scoring (forward LM)", 0, 1)
    correct = ag.margins(encoder, prepared) > 0
    rows = ag.summary(cases, kept, correct, n_boot=args.n_boot)
    payload: dict = {
        "model": encoder.name,
        "rows": rows,
        "n_cases": len(cases),
        "n_scored": len(kept),
        "setting": "forward LM, left context only (Linzen et al. 2016): "
        "log P(correct form) > log P(wrong form) at the verb",
        "left_out": "cases whose verb forms are not both in the LM vocabulary",
    }
    figures = [agreement_figure(rows, "attractors"), agreement_figure(rows, "distance")]
    if args.patch:
        say("patching (forward LM)", 0, 1)
        pairs = templated_pairs(ag.templated_cases(every=args.patch_every))
        batches = make_batches(encoder, pairs)
        payload["patching"] = patch_pairs(encoder, batches, n_boot=args.n_boot)
        figures.append(
            patching_figure(
                payload["patching"]["roles"], "Patching the forward LM: layer × position role"
            )
        )
    js = True if args.plotlyjs == "inline" else "cdn"
    _write(Path(args.out), stem, payload, rows, figures, js)
    return 0


# -- ablate-heads ---------------------------------------------------------------------------


def add_ablate_heads_arguments(p: argparse.ArgumentParser) -> None:
    """Options of ``python -m probing ablate-heads``."""
    _common(p)
    p.add_argument(
        "--heldout-sentences",
        type=int,
        default=150,
        help="UD-EWT test sentences whose masked words measure the loss",
    )
    p.add_argument(
        "--agreement-cases",
        type=int,
        default=600,
        help="UD-EWT agreement cases (evenly spaced) for the agreement change",
    )


def run_ablate_heads(args: argparse.Namespace) -> int:
    import numpy as np

    from probing.figures.interventions import head_importance_figure, pruning_figure
    from probing.interventions import agreement as ag
    from probing.interventions.data import labelled_sample
    from probing.interventions.heads import ablate_heads
    from probing.interventions.hooks import model_parts
    from probing.interventions.masked_words import masked_batches
    from probing.models.registry import load_encoder
    from probing.probes.store import output_stem

    stem = output_stem(args.model, "ud-ewt", "ablate-heads")
    sums_path = Path(args.out) / f"{stem}__sentence-sums.safetensors"
    refuse_shipped([*_files(args.out, stem), sums_path], args.overwrite)
    encoder = load_encoder(args.model)
    if not encoder.info.has_attention:
        from probing.errors import NoAttentionError

        raise NoAttentionError(
            f"Head ablation masks attention heads; {encoder.name} is an LSTM (ELMo) and has "
            "none. Its interventions are erasure (with the bi-LM effect), agreement and "
            "patching by layer and position: python -m probing agreement --model "
            f"{args.model} --patch."
        )
    model_parts(encoder)  # NoLMHeadError before any data is read
    held = labelled_sample("ud-ewt", "test", "upos", args.heldout_sentences)
    batches = masked_batches(encoder, held.sentences)
    cases = ag.ud_cases()
    if len(cases) > args.agreement_cases:
        idx = np.unique(np.linspace(0, len(cases) - 1, args.agreement_cases).round().astype(int))
        cases = [cases[i] for i in idx]
    prepared = ag.prepare(encoder, cases)
    groups = [cases[i].group for i in prepared.kept]
    result = ablate_heads(encoder, batches, prepared, groups, args.n_boot, _progress(args.quiet))
    result["model"] = encoder.name
    # The command that made the files, and the per-sentence sums the family test re-reads.
    result["argv"] = [
        *("python", "-m", "probing", "ablate-heads", "--model", args.model),
        *("--heldout-sentences", str(args.heldout_sentences)),
        *("--agreement-cases", str(args.agreement_cases), "--n-boot", str(args.n_boot)),
        *("--quiet", "--overwrite", "--out", str(args.out)),
    ]
    Path(args.out).mkdir(parents=True, exist_ok=True)
    result.pop("sums").save(sums_path)
    result["sentence_sums"] = sums_path.name
    figures = [
        head_importance_figure(result["importance"], "Head importance (Michel et al. I_h)"),
        pruning_figure(result["curve"]),
    ]
    js = True if args.plotlyjs == "inline" else "cdn"
    _write(Path(args.out), stem, result, result["heads"], figures, js)
    return 0
