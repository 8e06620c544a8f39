"""``attention-stats --parsers``: write Clark et al.'s heads-as-parsers tables."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from probing.analyses.attention_parsers import DIRECTIONS, OFFSETS, parser_sentences, score_parsers

if TYPE_CHECKING:
    from probing.encoders.base import Encoder

MIN_COUNT = 100  # "frequent" relation: at least this many arcs in the sentences scored


def write_parsers(
    encoder: Encoder,  # a BERT-family one
    split: str,
    n_sentences: int | None,
    out: Path,
    progress: Callable[[int, int], None] | None = None,
) -> Path:
    """Score every head on UD-EWT ``split``; write ``attention_parsers.{csv,json}`` in ``out``."""
    sentences = parser_sentences(split, n_sentences)
    scores = score_parsers(encoder, sentences, progress=progress)
    table = scores.best_heads(min_count=MIN_COUNT)
    path = out / "attention_parsers.csv"
    table.to_csv(path, index=False, float_format="%.6g")
    meta = {
        "model": encoder.name,
        "dataset": "ud-ewt",
        "split": split,
        "n_sentences": scores.n_sentences - scores.skipped,
        "skipped": scores.skipped,
        "min_count": MIN_COUNT,
        "directions": list(DIRECTIONS),
        "offsets": list(OFFSETS),
        "selection": "best head and best offset chosen on the same sentences they are scored on",
        "bootstrap_unit": "sentence",
        "n_boot": 1000,
    }
    (out / "attention_parsers.json").write_text(json.dumps(meta, indent=2) + "\n", "utf-8")
    print(f"heads as parsers: {len(table)} rows → {path}")
    return path
