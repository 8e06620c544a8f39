"""Minimal pairs and paradigms: the data every scorer reads, and BLiMP's JSONL format.

A :class:`MinimalPair` is a grammatical and an ungrammatical sentence (word lists) that
differ in one place; ``group`` is the sentence or template item it comes from (the unit the
bootstrap resamples). The two members may tokenize to different numbers of pieces: PLL sums
over each sentence's own pieces, so nothing has to line up.

BLiMP (Warstadt et al. 2020) ships one JSONL file per paradigm, a line per pair with
``sentence_good``, ``sentence_bad`` and ``UID`` (the paradigm; ``linguistics_term`` names
its phenomenon). :func:`read_blimp_jsonl` reads that format.
"""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from probing.encoders.base import split_words
from probing.errors import DataFormatError

MIN_PAIRS = 20  # fewer pairs than this: the interval is too wide to say much (warned)
BLIMP_FIELDS = ("sentence_good", "sentence_bad")


class FewPairsWarning(UserWarning):
    """A paradigm with fewer than :data:`MIN_PAIRS` pairs: its accuracy interval is wide."""


@dataclass(frozen=True)
class MinimalPair:
    """``good`` / ``bad`` sentences (word lists), their ``paradigm``, ``group`` (bootstrap
    unit: the source sentence or template item) and ``phenomenon`` (a broader label)."""

    good: tuple[str, ...]
    bad: tuple[str, ...]
    paradigm: str
    group: str
    phenomenon: str = ""

    @property
    def good_text(self) -> str:
        return " ".join(self.good)

    @property
    def bad_text(self) -> str:
        return " ".join(self.bad)


def pair_from_text(
    good: str, bad: str, paradigm: str = "user", group: str = "", phenomenon: str = ""
) -> MinimalPair:
    """A pair from two raw sentences (split into words as :func:`split_words` does)."""
    return MinimalPair(
        tuple(split_words(good)), tuple(split_words(bad)), paradigm, group or good, phenomenon
    )


def by_paradigm(pairs: Iterable[MinimalPair]) -> dict[str, list[MinimalPair]]:
    """Pairs grouped by paradigm, in first-seen order."""
    out: dict[str, list[MinimalPair]] = {}
    for p in pairs:
        out.setdefault(p.paradigm, []).append(p)
    return out


def few_pair_warnings(pairs: Sequence[MinimalPair], minimum: int = MIN_PAIRS) -> list[str]:
    """One message per paradigm with fewer than ``minimum`` pairs, each also issued as a
    :class:`FewPairsWarning` (results carry the messages)."""
    out = []
    for name, items in by_paradigm(pairs).items():
        if len(items) < minimum:
            msg = (
                f"paradigm {name!r} has {len(items)} pairs (< {minimum}): its accuracy "
                "interval is wide; read it as a rough figure"
            )
            warnings.warn(msg, FewPairsWarning, stacklevel=2)
            out.append(msg)
    return out


def read_blimp_jsonl(
    path: str | os.PathLike[str], paradigm: str | None = None
) -> list[MinimalPair]:
    """The pairs of a BLiMP-format JSONL file: one JSON object per line with
    ``sentence_good`` and ``sentence_bad``; the paradigm is the line's ``UID`` (else
    ``paradigm``, else the file's stem), its phenomenon ``linguistics_term`` (optional);
    blank lines are skipped. Each pair is its own bootstrap unit (``pairID`` when given).

    Raises:
        DataFormatError: a line that is not a JSON object, lacks a field, or has an empty
            sentence; the message names the file and the line.
    """
    path = Path(path)
    pairs = []
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            where = f"{path.name}, line {n}"
            try:
                item = json.loads(line)
            except json.JSONDecodeError as exc:
                raise DataFormatError(f"{where} is not JSON: {exc.msg}.") from exc
            if not isinstance(item, dict):
                raise DataFormatError(f"{where} is not a JSON object.")
            missing = [f for f in BLIMP_FIELDS if not isinstance(item.get(f), str)]
            name = item.get("UID") or paradigm or path.stem
            if missing:
                raise DataFormatError(
                    f"{where} has no {' or '.join(missing)} (a BLiMP line needs "
                    f"{', '.join(BLIMP_FIELDS)}; UID and linguistics_term are optional)."
                )
            good, bad = split_words(item["sentence_good"]), split_words(item["sentence_bad"])
            if not good or not bad:
                raise DataFormatError(f"{where} has an empty sentence.")
            group = f"{name}:{item.get('pairID', n)}"
            pairs.append(
                MinimalPair(
                    tuple(good), tuple(bad), str(name), group, str(item.get("linguistics_term", ""))
                )
            )
    if not pairs:
        raise DataFormatError(f"{path.name} has no pairs in it.")
    return pairs
