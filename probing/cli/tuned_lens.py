"""CLI command ``train-tuned-lens``: tuned-lens translators for any masked LM (Belrose et
al. 2023), trained on held-out text, then scored against the logit lens.

    python -m probing train-tuned-lens --model minilm-l6-mlm --out DIR

writes ``DIR/tuned_lens.safetensors`` (one affine translator per layer, provenance in the
header) and ``DIR/tuned_lens_eval.json`` (per layer, logit vs tuned lens: mean KL to the
final distribution and the share of masks whose final answer is already top-1, with 95 %
paired sentence-bootstrap intervals, on sentences the translators never saw).
Defaults: trained on Brown dev files (held out from the embedded MLM head's training text),
scored on UD-EWT dev. Files shipped in ``models/`` or ``results/`` are replaced only with
``--overwrite``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from probing.shipped import add_overwrite_argument, output_folder, refuse_shipped


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--model", default="minilm-l6-mlm", help="a masked LM: registry name, hub id or folder"
    )
    p.add_argument("--train-dataset", default="brown", help="text to train the translators on")
    p.add_argument("--train-split", default="dev", help="its split (default: dev)")
    p.add_argument(
        "--n-sentences", type=int, default=900, help="training sentences (evenly spread)"
    )
    p.add_argument(
        "--steps", type=int, default=150, help="KL fine-tuning steps after the least-squares start"
    )
    p.add_argument("--eval-dataset", default="ud-ewt", help="text to score the lenses on")
    p.add_argument("--eval-split", default="dev", help="its split (default: dev)")
    p.add_argument(
        "--eval-sentences", type=int, default=500, help="scoring sentences (one mask each)"
    )
    p.add_argument("--seed", type=int, default=0, help="seed for the masks and the batches")
    p.add_argument(
        "--out", required=True, type=output_folder, help="output folder (created if missing)"
    )
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    add_overwrite_argument(p)


def output_files(args: argparse.Namespace) -> list[Path]:
    """Every file the run writes."""
    return [args.out / "tuned_lens.safetensors", args.out / "tuned_lens_eval.json"]


def run(args: argparse.Namespace) -> int:
    from probing.analyses.attention import sample_sentences
    from probing.analyses.tuned_lens import evaluate_lens, lensable, train_tuned_lens
    from probing.cli.probe import writable_folder
    from probing.io import atomic_write_json
    from probing.models.registry import load_encoder

    files = output_files(args)
    refuse_shipped(files, args.overwrite)  # results/ and the embedded model's translators
    writable_folder(args.out)
    encoder = load_encoder(args.model)
    lensable(encoder)  # a typed error before any data is read
    train = sample_sentences(args.train_dataset, args.train_split, n=args.n_sentences)
    evaluation = sample_sentences(args.eval_dataset, args.eval_split, n=args.eval_sentences)

    def progress(stage: str, done: int, total: int) -> None:
        if not args.quiet:
            print(f"\r{stage}: {done}/{total}", end="" if done < total else "\n", file=sys.stderr)

    source = f"{args.train_dataset} {args.train_split}, {len(train)} sentences"
    lens = train_tuned_lens(encoder, train, args.steps, args.seed, source, progress)
    lens.save(files[0])
    report = evaluate_lens(encoder, lens, evaluation, seed=args.seed)
    report.update(
        {
            "model": encoder.info.name,
            "layers": list(encoder.info.layer_names),
            "evaluated_on": f"{args.eval_dataset} {args.eval_split}, one masked word per sentence",
            "training": lens.meta,
        }
    )
    atomic_write_json(files[1], report)
    if not args.quiet:
        print(f"wrote {files[0].name} and {files[1].name} to {args.out}", file=sys.stderr)
    return 0
