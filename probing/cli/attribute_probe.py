"""``attribute --probe TASK``: which input words a saved probe's label rests on (one
sentence), and the probe faithfulness study (``--study N``). Arguments are
:mod:`probing.cli.attribute`'s; this module runs them."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from probing.encoders.bert import TransformersEncoder
    from probing.probes.saved import SavedProbes


def saved_probe(model: str, task: str) -> SavedProbes:
    """The ``task`` probe saved with ``model``'s results (``results/probes/``).

    Raises:
        InvalidArgumentError: none saved, naming those that are and how to train one.
    """
    from probing import config
    from probing.analyses.probe_lens import saved_probes
    from probing.errors import InvalidArgumentError

    probes = saved_probes(config.results_dir(), model)
    if task not in probes:
        have = ", ".join(sorted(probes)) or "none"
        raise InvalidArgumentError(
            f"No {task} probe is saved for {model} (saved: {have}). Train one with "
            f"`python -m probing probe --model {model} --task {task} --save-probes`."
        )
    return probes[task]


def _layer(
    args: argparse.Namespace, encoder: TransformersEncoder, probes: SavedProbes
) -> tuple[int, dict[int, float]]:
    """``--layer``, or the layer chosen on UD-EWT dev (and the dev accuracies)."""
    from probing.attribution.probe_study import best_layer, dev_accuracy
    from probing.datasets import read_sentences

    if args.layer is not None:
        return int(args.layer), {}
    acc = dev_accuracy(encoder, probes, read_sentences("ud-ewt", "dev"), n_dev=args.n_dev)
    return best_layer(acc), acc


def _html(fig: object, plotlyjs: str) -> str:
    return fig.to_html(include_plotlyjs=True if plotlyjs == "inline" else "cdn", full_html=True)


def _done(args: argparse.Namespace, files: list[Path]) -> int:
    if not args.quiet:
        print(f"wrote {', '.join(p.name for p in files)} to {args.out}", file=sys.stderr)
    return 0


def sentence(args: argparse.Namespace, files: list[Path]) -> int:
    """One sentence: every method's word scores for the probe's label on ``--word``."""
    import pandas as pd

    from probing.attribution.probe_attribution import (
        probe_gradient_x_input,
        probe_integrated_gradients,
    )
    from probing.attribution.probe_case import prepare_probe_case, require_surface
    from probing.encoders.base import split_words
    from probing.figures.probe_attribution import probe_word_bars_figure
    from probing.io import atomic_write_json, atomic_write_text
    from probing.models.registry import load_encoder

    encoder = require_surface(load_encoder(args.model))
    probes = saved_probe(args.model, args.probe)
    words = split_words(args.text)
    layer, dev = _layer(args, encoder, probes)
    case = prepare_probe_case(
        encoder, words, args.word, probes, layer, label=args.label, target="given"
    )
    started = time.perf_counter()
    ig = probe_integrated_gradients(encoder, case, baseline=args.baseline, steps=args.steps)
    gxi = case.to_words(probe_gradient_x_input(encoder, case))
    seconds = time.perf_counter() - started
    csv, meta, html = files
    scores = {"integrated_gradients": ig.words, "gradient_x_input": gxi}
    table = pd.DataFrame({"word_index": range(len(words)), "word": words, **scores})
    atomic_write_text(csv, table.to_csv(index=False, float_format="%.6g"))
    method = args.method if args.method in scores else "integrated_gradients"
    fig = probe_word_bars_figure(
        words, scores[method], case.word, case.label, layer, method, args.baseline
    )
    atomic_write_text(html, _html(fig, args.plotlyjs))
    atomic_write_json(
        meta,
        {
            "model": encoder.info.name,
            "text": args.text,
            "words": words,
            "probe": {"task": case.task, "layer": layer, "pooling": case.pooling},
            "layer_choice": "given (--layer)" if not dev else "most accurate on UD-EWT dev",
            "dev_accuracy": {str(k): v for k, v in dev.items()},
            "word": case.word,
            "label": case.label,
            "label_from": case.target if args.label else "predicted",
            "pieces": case.pieces,
            "word_ids": case.word_ids,
            "f": "the probe's logit for the label on the word's vector at the layer",
            "ig": {
                "baseline": args.baseline,
                "steps": args.steps,
                "f_input": ig.f_input,
                "f_baseline": ig.f_baseline,
                "convergence_delta": ig.delta,
            },
            "words_from_pieces": "sum over the tokenizer's pieces of each word",
            "seconds": round(seconds, 3),
        },
    )
    return _done(args, files)


def study(args: argparse.Namespace, files: list[Path]) -> int:
    """The probe faithfulness study (:mod:`probing.attribution.probe_study`)."""
    import numpy as np
    import pandas as pd

    from probing.attribution.probe_case import require_surface
    from probing.attribution.probe_study import (
        MAX_WORDS,
        MIN_WORDS,
        STUDY_METHODS,
        run_probe_study,
        study_cases,
    )
    from probing.attribution.study import summarise
    from probing.datasets import read_sentences
    from probing.figures.probe_attribution import probe_aopc_figure
    from probing.io import atomic_write_json, atomic_write_text
    from probing.models.registry import load_encoder

    encoder = require_surface(load_encoder(args.model))
    probes = saved_probe(args.model, args.probe)
    started = time.perf_counter()
    layer, dev = _layer(args, encoder, probes)
    cases, ids, gold = study_cases(
        encoder, read_sentences("ud-ewt", "test"), probes, layer, n=args.study, seed=args.seed
    )

    def progress(done: int, total: int) -> None:
        if not args.quiet:
            end = "" if done < total else "\n"
            print(f"\r{done}/{total} cases", end=end, file=sys.stderr)

    rows, context = run_probe_study(
        encoder,
        cases,
        ids,
        gold,
        steps=args.steps,
        n_random=args.n_random,
        seed=args.seed,
        progress=progress,
    )
    summary = summarise(rows, n_boot=args.n_boot, seed=args.seed, methods=STUDY_METHODS)
    summary.pop("agreement", None)
    in_context = summarise(context, n_boot=args.n_boot, seed=args.seed, methods=STUDY_METHODS)
    in_context.pop("agreement", None)
    firsts = pd.DataFrame([r for r in rows.curves if r["method"] != "random"])
    seconds = time.perf_counter() - started
    curves_csv, ig_csv, meta, html = files
    for path, data in ((curves_csv, rows.curves + context.curves), (ig_csv, rows.ig)):
        atomic_write_text(path, pd.DataFrame(data).to_csv(index=False, float_format="%.6g"))
    atomic_write_text(
        html, _html(probe_aopc_figure(summary["means"], args.probe, layer), args.plotlyjs)
    )
    ig = pd.DataFrame(rows.ig)
    argv = ["attribute", "--probe", args.probe, "--study", str(args.study), "--model", args.model]
    argv += ["--layer", str(args.layer)] if args.layer is not None else ["--n-dev", str(args.n_dev)]
    argv += ["--steps", str(args.steps), "--n-random", str(args.n_random)]
    argv += ["--n-boot", str(args.n_boot), "--seed", str(args.seed)]
    atomic_write_json(
        meta,
        {
            "model": encoder.info.name,
            "task": args.probe,
            "layer": layer,
            "argv": [*argv, "--out", str(args.out)],
            "layer_choice": "given (--layer)"
            if not dev
            else f"most accurate on the first {args.n_dev} UD-EWT dev sentences",
            "dev_accuracy": {str(k): v for k, v in dev.items()},
            "cases": f"UD-EWT test in file order, {MIN_WORDS}-{MAX_WORDS} words, one "
            "alphabetic word per sentence drawn uniformly (seeded by the sentence's position)",
            "label": "the probe's prediction on the word (gold recorded in the CSVs)",
            "prediction_accuracy": float(
                np.mean([c.label == g for c, g in zip(cases, gold, strict=True)])
            ),
            "methods": {
                "integrated_gradients": f"IG, [MASK] baseline, {args.steps} steps",
                "integrated_gradients_pad": f"IG, [PAD] baseline, {args.steps} steps",
                "gradient_x_input": "x · ∂f/∂x",
                "random": f"mean of {args.n_random} seeded random orders",
            },
            "removal": "every piece of a removed word replaced by the mask token; the probed "
            "word is ranked like any other (top level), or kept in place (context_words)",
            "own_word_first": firsts.groupby("method")["ranks_own_word_first"].mean().to_dict(),
            "aopc": "mean over k = 0..m of p_0 - p_k (deletion), p_k - p_all-removed (insertion)",
            "interval": "95 % percentile, sentence bootstrap, paired across methods",
            "completeness": {
                b: {
                    "median": float(g["relative_delta"].median()),
                    "max": float(g["relative_delta"].max()),
                }
                for b, g in ig.groupby("baseline")
            },
            "seconds": round(seconds, 1),
            **summary,
            "context_words": in_context,
        },
    )
    return _done(args, files)
