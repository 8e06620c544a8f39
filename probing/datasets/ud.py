"""Reader for the UD English Web Treebank (CoNLL-U, parsed with the ``conllu`` package).

Sentences are made of *syntactic words*: multi-word token lines (ids like ``3-4``, e.g.
``don't`` = ``do`` + ``n't``) and empty nodes (ids like ``8.1``) are skipped, so the words
are exactly those that carry UPOS/XPOS tags. Only the official splits are used.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import conllu

from probing.datasets.registry import dataset_path
from probing.datasets.types import Sentence

UD_SPLITS = ("train", "dev", "test")

# The 17 universal POS tags of UD v2.
UPOS_TAGS = (
    "ADJ", "ADP", "ADV", "AUX", "CCONJ", "DET", "INTJ", "NOUN", "NUM",
    "PART", "PRON", "PROPN", "PUNCT", "SCONJ", "SYM", "VERB", "X",
)  # fmt: skip

# Only the columns we use are parsed: the rest (deps, misc) cost time for nothing. Fields are
# positional, so feats is read too, kept as its raw string.
_FIELDS = ("id", "form", "lemma", "upos", "xpos", "feats", "head", "deprel")
_PARSERS = {"feats": lambda line, i: line[i]}


def ud_file(split: str, data_dir: str | Path | None = None) -> Path:
    """Path of the EWT CoNLL-U file of ``split``; DatasetNotFoundError if missing."""
    if split not in UD_SPLITS:
        raise ValueError(f"Unknown UD split {split!r}; choose one of: {', '.join(UD_SPLITS)}.")
    name = f"en_ewt-ud-{split}.conllu"
    return dataset_path("ud-ewt", data_dir, required=[name]) / name


def read_ud(split: str, data_dir: str | Path | None = None) -> Iterator[Sentence]:
    """Sentences of one EWT split, in file order.

    Yields:
        Sentence with labels ``upos``, ``xpos``, ``lemma``, ``head`` (the head's 1-based
        word index as a string, ``"0"`` for the root) and ``deprel`` (the UD relation to it,
        subtypes like ``nmod:poss`` kept); ``sent_id`` from the file;
        ``doc_id`` from the last ``newdoc id`` comment; ``meta["text"]`` the raw text.
    """
    path = ud_file(split, data_dir)
    doc_id = split
    with open(path, encoding="utf-8") as f:
        for n, tokens in enumerate(
            conllu.parse_incr(f, fields=_FIELDS, field_parsers=_PARSERS), start=1
        ):
            meta = tokens.metadata
            doc_id = meta.get("newdoc id", doc_id)
            # int ids are syntactic words; tuples are "3-4" ranges and "8.1" empty nodes.
            words = [t for t in tokens if isinstance(t["id"], int)]
            yield Sentence(
                words=[t["form"] for t in words],
                labels={
                    "upos": [t["upos"] for t in words],
                    "xpos": [t["xpos"] for t in words],
                    "lemma": [t["lemma"] for t in words],
                    "head": [str(t["head"]) for t in words],
                    "deprel": [t["deprel"] for t in words],
                },
                doc_id=doc_id,
                sent_id=meta.get("sent_id", f"{split}-{n}"),
                split=split,
                meta={"text": meta.get("text", " ".join(t["form"] for t in words))},
            )
