"""Reader for the UD English Web Treebank (CoNLL-U, parsed with the ``conllu`` package).

Sentences are made of *syntactic words*: multi-word token lines (ids like ``3-4``, e.g.
``don't`` = ``do`` + ``n't``) and empty nodes (ids like ``8.1``) are skipped, so the words
are exactly those that carry UPOS/XPOS tags. Only the official splits are used.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

import conllu

from probing.datasets.registry import dataset_path
from probing.datasets.types import Sentence, in_folder
from probing.errors import UnknownSplitError

UD_SPLITS = ("train", "dev", "test")

# The 17 universal POS tags of UD v2.
UPOS_TAGS = (
    "ADJ",
    "ADP",
    "ADV",
    "AUX",
    "CCONJ",
    "DET",
    "INTJ",
    "NOUN",
    "NUM",
    "PART",
    "PRON",
    "PROPN",
    "PUNCT",
    "SCONJ",
    "SYM",
    "VERB",
    "X",
)

# Only the columns we use are parsed: the rest (deps, misc) cost time for nothing. Fields are
# positional, so feats is read too, kept as its raw string.
CONLLU_FIELDS = ("id", "form", "lemma", "upos", "xpos", "feats", "head", "deprel")
CONLLU_PARSERS = {"feats": lambda line, i: line[i]}


def conllu_sentence(
    tokens: conllu.TokenList, doc_id: str, default_id: str, split: str = "train"
) -> Sentence:
    """One parsed CoNLL-U sentence as a :class:`Sentence` (the EWT reader's and uploads').

    Words are the syntactic words (integer ids): "3-4" range lines and "8.1" empty nodes
    are skipped. Labels ``upos``, ``xpos``, ``lemma``, ``head``, ``deprel``; ``sent_id`` from the file, else
    ``default_id``; ``meta["text"]`` the raw text, else the words joined by spaces.
    """
    meta = tokens.metadata
    words = [t for t in tokens if isinstance(t["id"], int)]
    return Sentence(
        words=[t["form"] for t in words],
        labels={
            "upos": [t["upos"] for t in words],
            "xpos": [t["xpos"] for t in words],
            "lemma": [t["lemma"] for t in words],
            # the head's 1-based index ("0": root; "" when the file has none) and relation
            "head": ["" if t["head"] is None else str(t["head"]) for t in words],
            "deprel": ["" if t["deprel"] in (None, "_") else t["deprel"] for t in words],
        },
        doc_id=doc_id,
        sent_id=meta.get("sent_id", default_id),
        split=split,
        meta={"text": meta.get("text", " ".join(t["form"] for t in words))},
    )


def ud_file(split: str, data_dir: str | Path | None = None, *, folder: Path | None = None) -> Path:
    """Path of the EWT CoNLL-U file of ``split`` (in ``folder`` when the registry hands it
    in, else in the data dir's EWT folder); DatasetNotFoundError if missing."""
    if split not in UD_SPLITS:
        raise UnknownSplitError(
            f"Unknown UD split {split!r}; choose one of: {', '.join(UD_SPLITS)}."
        )
    name = f"en_ewt-ud-{split}.conllu"
    if folder is not None:
        return in_folder("ud-ewt", folder, name)
    return dataset_path("ud-ewt", data_dir, required=[name]) / name


def read_ud(
    split: str, data_dir: str | Path | None = None, *, folder: Path | None = None
) -> Iterator[Sentence]:
    """Sentences of one EWT split, in file order.

    Yields:
        Sentence with labels ``upos``, ``xpos``, ``lemma``, ``head`` (the head's 1-based
        word index as a string, ``"0"`` for the root) and ``deprel`` (the UD relation to it,
        subtypes like ``nmod:poss`` kept); ``sent_id`` from the file;
        ``doc_id`` from the last ``newdoc id`` comment; ``meta["text"]`` the raw text.
    """
    path = ud_file(split, data_dir, folder=folder)
    doc_id = split
    with open(path, encoding="utf-8") as f:
        for n, tokens in enumerate(
            conllu.parse_incr(f, fields=CONLLU_FIELDS, field_parsers=CONLLU_PARSERS), start=1
        ):
            meta = tokens.metadata
            doc_id = meta.get("newdoc id", doc_id)
            yield conllu_sentence(tokens, doc_id, f"{split}-{n}", split=split)


def read_ud_splits(
    split: str | Iterable[str] | None = None,
    data_dir: str | Path | None = None,
    *,
    folder: Path | None = None,
) -> Iterator[Sentence]:
    """Sentences of one EWT split, of several, or (``None``) of all three in order."""
    splits = [split] if isinstance(split, str) else list(split or UD_SPLITS)
    return (s for part in splits for s in read_ud(part, data_dir, folder=folder))


def ud_split_files(split: str, folder: Path | None = None) -> list[Path]:
    """The files whose bytes determine a split's sentences: its CoNLL-U file (in ``folder``,
    the EWT folder the registry hands in) and this reader."""
    return [ud_file(split, folder=folder), Path(__file__)]
