"""CLI command ``attribute``: which words a masked LM used for a fill-mask guess, and how
faithful each attribution method is on this model.

One sentence (one [MASK]; ``--target``: the piece explained, default the model's top guess):

    python -m probing attribute "The capital of France is [MASK] ." --target paris --out DIR

writes ``attribution.csv`` (one row per word: every method's score), ``attribution.json``
(settings, IG's f(x), f(x'), convergence delta, per-layer Value Zeroing / ALTI / attention
maps) and ``attribution.html`` (per-word bars of ``--method``).

The faithfulness study (``--study N``: the first N UD-EWT dev cases by the rule of
:mod:`probing.attribution.cases`):

    python -m probing attribute --study 50 --out results/attribution --overwrite

writes ``faithfulness_cases.csv`` (per case × method: AOPCs and curves),
``agreement_cases.csv`` (per case × layer × method pair: Spearman's ρ),
``ig_cases.csv`` (IG's completeness gap per case), ``faithfulness.json`` (settings, means
with intervals, the comparison tables, the most faithful method where the comparisons single
one out, agreement per layer) and ``faithfulness.html``.

A probe's label instead of a fill-mask guess (``--probe TASK``: a linear probe saved with the
model's results, e.g. ``pos``; ``--word``: the word, ``--layer``: default the layer whose
probe is most accurate on UD-EWT dev; ``--label``: default the probe's prediction):

    python -m probing attribute "They book a flight ." --probe pos --word 1 --out DIR

writes ``probe_attribution.csv`` / ``.json`` / ``.html``; with ``--study N`` the probe study
of :mod:`probing.attribution.probe_study` (N UD-EWT test words, the layer chosen on dev)
writes ``probe_faithfulness_cases.csv``, ``probe_ig_cases.csv``,
``probe_faithfulness.json`` and ``probe_faithfulness.html``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from probing.params import Bound, converter
from probing.shipped import add_overwrite_argument, output_folder, refuse_shipped

if TYPE_CHECKING:
    import plotly.graph_objects as go

DEFAULT_MODEL = "minilm-l6-mlm"
PROBE_MODEL = "minilm-l6"  # the model whose probes are saved with the committed results
METHOD_NAMES = (
    "integrated_gradients",
    "gradient_x_input",
    "attention_x_gradient",
    "value_zeroing",
    "alti",
)  # probing.attribution.methods.METHODS, here without importing torch for --help


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("text", nargs="?", help='a sentence with one [MASK], e.g. "Paris is [MASK]."')
    p.add_argument(
        "--model",
        default=None,
        help=f"masked LM (default {DEFAULT_MODEL}; with --probe: {PROBE_MODEL})",
    )
    p.add_argument("--target", default=None, help="the piece explained (default: top guess)")
    p.add_argument(
        "--method",
        default="integrated_gradients",
        choices=METHOD_NAMES,
        help="the method the HTML figure shows (the CSV has all)",
    )
    p.add_argument(
        "--baseline",
        default="mask",
        choices=("mask", "pad", "zeros"),
        help="Integrated Gradients' baseline for context words (default mask)",
    )
    p.add_argument(
        "--steps",
        type=converter(Bound(2, 1000, int)),
        default=50,
        help="Integrated Gradients' steps, 2 to 1000 (default 50)",
    )
    p.add_argument(
        "--study",
        type=converter(Bound(1, 2000, int)),
        default=None,
        help="run the faithfulness study on this many UD-EWT dev cases instead of a sentence",
    )
    p.add_argument(
        "--study-target",
        default="top",
        choices=("top", "gold"),
        help="what the study explains: the model's top guess (default) or the masked word",
    )
    p.add_argument(
        "--probe",
        default=None,
        metavar="TASK",
        help="explain a saved linear probe's label (pos, xpos, supersense …) instead of a "
        "fill-mask guess",
    )
    p.add_argument(
        "--word",
        type=converter(Bound(0, 10_000, int)),
        default=None,
        help="with --probe: the index of the probed word in the sentence",
    )
    p.add_argument(
        "--layer",
        type=converter(Bound(0, 100, int)),
        default=None,
        help="with --probe: the probe's layer (default: the most accurate on UD-EWT dev)",
    )
    p.add_argument(
        "--label", default=None, help="with --probe: the label explained (default: prediction)"
    )
    p.add_argument(
        "--n-dev",
        type=converter(Bound(10, 5000, int)),
        default=200,
        help="with --probe: UD-EWT dev sentences the default layer is chosen on (default 200)",
    )
    p.add_argument(
        "--n-random",
        type=converter(Bound(1, 100, int)),
        default=10,
        help="random orders per case in the study (default 10)",
    )
    p.add_argument(
        "--n-boot", type=converter(Bound(100, 100_000, int)), default=1000, help="replicates"
    )
    p.add_argument("--seed", type=converter(Bound(0, 2**31 - 1, int)), default=0, help="seed")
    p.add_argument(
        "--out", required=True, type=output_folder, help="output folder (created if missing)"
    )
    p.add_argument(
        "--plotlyjs",
        default="cdn",
        choices=["inline", "cdn"],
        help="embed plotly.js in the HTML (inline, ~4.5 MB, opens offline) or link it (cdn)",
    )
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    add_overwrite_argument(p)


def output_files(args: argparse.Namespace) -> list[Path]:
    """Every file the run writes (the shipped-file guard checks these)."""
    if args.probe:
        names = (
            ["probe_faithfulness_cases.csv", "probe_ig_cases.csv"]
            + ["probe_faithfulness.json", "probe_faithfulness.html"]
            if args.study
            else ["probe_attribution.csv", "probe_attribution.json", "probe_attribution.html"]
        )
    elif args.study:
        names = ["faithfulness_cases.csv", "agreement_cases.csv", "ig_cases.csv"]
        names += ["faithfulness.json", "faithfulness.html"]
    else:
        names = ["attribution.csv", "attribution.json", "attribution.html"]
    return [args.out / n for n in names]


def run(args: argparse.Namespace) -> int:
    from probing.cli.probe import writable_folder
    from probing.errors import InvalidArgumentError

    if (args.text is None) == (args.study is None):
        what = "a sentence and --word" if args.probe else "a sentence with one [MASK]"
        raise InvalidArgumentError(f"Give either {what} or --study N.")
    if args.probe and args.study is None and args.word is None:
        raise InvalidArgumentError("--probe on a sentence needs --word: the probed word's index.")
    args.model = args.model or (PROBE_MODEL if args.probe else DEFAULT_MODEL)
    files = output_files(args)
    refuse_shipped(files, args.overwrite)
    writable_folder(args.out)
    if args.probe:
        from probing.cli import attribute_probe

        run_probe = attribute_probe.study if args.study else attribute_probe.sentence
        return run_probe(args, files)
    return _study(args, files) if args.study else _sentence(args, files)


def _html(fig: go.Figure, plotlyjs: str) -> str:
    return fig.to_html(include_plotlyjs=True if plotlyjs == "inline" else "cdn", full_html=True)


def _words_and_mask(text: str) -> tuple[list[str], int]:
    from probing.analyses.fill_mask import MASK_RE, check_text
    from probing.encoders.base import split_words
    from probing.errors import TooManyMasksError

    if check_text(text) != 1:
        raise TooManyMasksError("Attribution explains one [MASK]: leave exactly one.")
    left, right = MASK_RE.split(text, maxsplit=1)
    before = split_words(left)
    return [*before, "[MASK]", *split_words(right)], len(before)


def _sentence(args: argparse.Namespace, files: list[Path]) -> int:
    import pandas as pd

    from probing.analyses.fill_mask import fill_mask
    from probing.attribution.case import prepare_case
    from probing.attribution.methods import score_case
    from probing.figures.attribution import word_bars_figure
    from probing.io import atomic_write_json, atomic_write_text
    from probing.models.registry import load_encoder

    encoder = load_encoder(args.model)
    words, mask_word = _words_and_mask(args.text)
    if args.target:
        case = prepare_case(encoder, words, mask_word, target=args.target)
    else:  # the model's top guess, whatever piece it is
        top = int(fill_mask(encoder, args.text, top_k=1)[0].token_ids[0])
        case = prepare_case(encoder, words, mask_word, target_id=top)
    started = time.perf_counter()
    scores = score_case(encoder, case, baseline=args.baseline, steps=args.steps)
    seconds = time.perf_counter() - started
    csv, meta, html = files
    table = pd.DataFrame({"word_index": range(len(words)), "word": words, **scores.words})
    atomic_write_text(csv, table.to_csv(index=False, float_format="%.6g"))
    fig = word_bars_figure(words, scores.words[args.method], mask_word, case.target, args.method)
    atomic_write_text(html, _html(fig, args.plotlyjs))
    atomic_write_json(
        meta,
        {
            "model": encoder.info.name,
            "text": args.text,
            "words": words,
            "mask_word": mask_word,
            "target": case.target,
            "pieces": case.pieces,
            "word_ids": case.word_ids,
            "f": "log p(target) at the mask",
            "ig": {
                "baseline": args.baseline,
                "steps": args.steps,
                "f_input": scores.ig.f_input,
                "f_baseline": scores.ig.f_baseline,
                "convergence_delta": scores.ig.delta,
            },
            "words_from_pieces": "sum over the tokenizer's pieces of each word",
            "mixing": {k: v.round(6).tolist() for k, v in scores.mixing.items()},
            "seconds": round(seconds, 3),
        },
    )
    if not args.quiet:
        print(f"wrote {', '.join(p.name for p in files)} to {args.out}", file=sys.stderr)
    return 0


def _study(args: argparse.Namespace, files: list[Path]) -> int:
    import pandas as pd

    from probing.attribution.cases import MAX_WORDS, MIN_WORDS, ud_cases
    from probing.attribution.study import run_study, summarise
    from probing.datasets import read_sentences
    from probing.figures.attribution import aopc_figure
    from probing.io import atomic_write_json, atomic_write_text
    from probing.models.registry import load_encoder

    encoder = load_encoder(args.model)
    cases, ids = ud_cases(
        encoder, read_sentences("ud-ewt", "dev"), n=args.study, target=args.study_target
    )

    def progress(done: int, total: int) -> None:
        if not args.quiet:
            end = "" if done < total else "\n"
            print(f"\r{done}/{total} cases", end=end, file=sys.stderr)

    started = time.perf_counter()
    rows = run_study(
        encoder,
        cases,
        ids,
        steps=args.steps,
        baseline=args.baseline,
        n_random=args.n_random,
        seed=args.seed,
        progress=progress,
    )
    summary = summarise(rows, n_boot=args.n_boot, seed=args.seed)
    seconds = time.perf_counter() - started
    curves_csv, agree_csv, ig_csv, meta, html = files
    for path, data in ((curves_csv, rows.curves), (agree_csv, rows.agreement), (ig_csv, rows.ig)):
        atomic_write_text(path, pd.DataFrame(data).to_csv(index=False, float_format="%.6g"))
    atomic_write_text(html, _html(aopc_figure(summary["means"]), args.plotlyjs))
    atomic_write_json(
        meta,
        {
            "model": encoder.info.name,
            "argv": [
                "attribute",
                "--study",
                str(args.study),
                "--model",
                args.model,
                "--steps",
                str(args.steps),
                "--baseline",
                args.baseline,
                "--study-target",
                args.study_target,
                "--n-random",
                str(args.n_random),
                "--n-boot",
                str(args.n_boot),
                "--seed",
                str(args.seed),
            ],
            "cases": f"UD-EWT dev in file order, {MIN_WORDS}-{MAX_WORDS} words, first "
            "alphabetic NOUN the model reads as one piece masked",
            "target": "the model's top guess at the mask"
            if args.study_target == "top"
            else "the masked (gold) word",
            "removal": "every piece of a removed word replaced by the mask token",
            "aopc": "mean over k = 0..m of p_0 - p_k (deletion), p_k - p_all-removed (insertion)",
            "interval": "95 % percentile, sentence bootstrap, paired across methods",
            "seconds": round(seconds, 1),
            **summary,
        },
    )
    if not args.quiet:
        print(f"wrote {', '.join(p.name for p in files)} to {args.out}", file=sys.stderr)
    return 0
