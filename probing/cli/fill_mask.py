"""CLI command ``fill-mask``: a masked LM's top-k guesses for each [MASK], optionally per layer.

python -m probing fill-mask "The [MASK] sat on the mat." --model minilm-l6-mlm --top-k 10
python -m probing fill-mask "I went [MASK] the store." --layers --json
"""

from __future__ import annotations

import argparse
import json
from typing import Any

DEFAULT_MODEL = "minilm-l6-mlm"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("text", help='a sentence with one to four [MASK], e.g. "The [MASK] sat."')
    p.add_argument(
        "--model", default=DEFAULT_MODEL, help=f"model with an MLM head (default {DEFAULT_MODEL})"
    )
    p.add_argument("--top-k", type=int, default=10, help="candidates per mask (default 10)")
    p.add_argument(
        "--layers",
        action="store_true",
        help="also apply the MLM head to every layer: top 5 per layer and the final token's rank",
    )
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")


def run(args: argparse.Namespace) -> int:
    from probing.analyses.fill_mask import fill_mask, fill_mask_by_layer, piece_note
    from probing.figures.fill_mask import mask_label
    from probing.models.registry import load_encoder

    encoder = load_encoder(args.model)
    predictions = fill_mask(encoder, args.text, top_k=args.top_k)
    layers = (
        fill_mask_by_layer(encoder, args.text, top_k=min(5, args.top_k)) if args.layers else None
    )

    if args.json:
        masks: list[dict[str, Any]] = []
        for i, pred in enumerate(predictions):
            item: dict[str, Any] = {
                "mask_index": pred.mask_index,
                "position": pred.position,
                "word_index": pred.word_index,
                "candidates": [
                    {"token": c.token, "probability": c.probability} for c in pred.candidates
                ],
            }
            if layers is not None:
                m = layers.masks[i]
                item["layers"] = [
                    {
                        "layer": name,
                        "top": [
                            {"token": t, "probability": float(p)}
                            for t, p in zip(m.tokens[li], m.probabilities[li], strict=True)
                        ],
                        "final_token_rank": int(m.final_rank[li]),
                        "final_token_probability": float(m.final_probability[li]),
                    }
                    for li, name in enumerate(layers.layer_names)
                ]
            masks.append(item)
        out = {
            "model": encoder.info.name,
            "text": args.text,
            "piece_convention": encoder.info.piece_convention,
            "masks": masks,
        }
        print(json.dumps(out, indent=2))
        return 0

    print(f"model: {encoder.info.name}")
    note = piece_note(encoder.info.piece_convention)
    if note:
        print(f"pieces as its tokenizer writes them: {note}")
    for i, pred in enumerate(predictions):
        print(f"\n{mask_label(pred.mask_index, pred.word_index)}:")
        for rank, c in enumerate(pred.candidates, 1):
            print(f"  {rank:>3}  {c.token:<18} {c.probability:7.2%}")
        if layers is not None:
            m = layers.masks[i]
            width = max(len(n) for n in layers.layer_names)
            print(
                f"  by layer (rank and probability of “{m.final_token}”; top {len(m.tokens[0])}):"
            )
            for li, name in enumerate(layers.layer_names):
                top = ", ".join(m.tokens[li])
                print(
                    f"    {name:<{width}}  rank {int(m.final_rank[li]):>6}  "
                    f"{float(m.final_probability[li]):7.2%}  | {top}"
                )
    return 0
