"""Sentence pairs for next-sentence prediction (NSP) and sentence-order prediction (SOP).

Documents are Brown files and UD English-EWT documents (``newdoc id``), each kept whole in
one split: a Brown file in the split of its SemCor document (:func:`brown_split`), an EWT
document in the EWT file it is published in. Pairs are built inside one split only, so no
sentence of a test document is ever in a training pair, and a negative drawn "from another
document" comes from a document of the same split.

An *anchor* is a position ``i`` in a document with a following sentence; from it:

- ``next``: ``(s_i, s_i+1)``, the positive of both tasks (label 0: IsNext / in order);
- ``other_doc``: ``(s_i, s)`` with ``s`` from another document (BERT's NSP negative);
- ``same_doc``: ``(s_i, s_j)``, ``j`` in the same document, neither ``i`` nor adjacent to it
  (a diagnostic: same topic, not the next sentence);
- ``swapped``: ``(s_i+1, s_i)`` (ALBERT's SOP negative).

Labels follow BERT's pre-training convention: 0 = B continues A, 1 = it does not. Every
negative kind is labelled 1, so one head can be scored on any kind.

Example:
    >>> docs = [Document("d1", ["A b c.", "D e f.", "G h i.", "J k l."]),
    ...         Document("d2", ["M n o.", "P q r.", "S t u.", "V w x."])]
    >>> anchors = sample_anchors(docs, per_document=1, seed=0)
    >>> [p.kind for p in anchor_pairs(anchors[0], docs, seed=0)]
    ['next', 'other_doc', 'same_doc', 'swapped']
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from probing.datasets.brown import read_brown
from probing.datasets.ud import read_ud

KINDS = ("next", "other_doc", "same_doc", "swapped")
NEGATIVES = {"nsp": "other_doc", "sop": "swapped"}  # each task's own negative kind
MIN_WORDS, MAX_WORDS = 3, 60  # headlines and run-on lists make poor pairs
MIN_SENTENCES = 4  # a same-document negative needs a sentence neither i nor adjacent


@dataclass(frozen=True)
class Document:
    """One document's sentences in reading order (text, words joined by spaces)."""

    doc_id: str
    sentences: list[str]


@dataclass(frozen=True)
class Anchor:
    """Sentence ``index`` of document ``doc`` (an index into a document list)."""

    doc: int
    index: int


@dataclass(frozen=True)
class Pair:
    """Sentence A, sentence B, the label (0 continues, 1 not) and where they come from."""

    a: str
    b: str
    label: int
    kind: str
    doc_id: str


def read_documents(split: str, data_dir: str | Path | None = None) -> list[Document]:
    """Brown files then EWT documents of ``split`` (``train``/``dev``/``test``), in corpus
    order; documents with fewer than :data:`MIN_SENTENCES` sentences are left out."""
    docs: dict[str, list[str]] = {}
    for s in read_brown(split, data_dir):
        docs.setdefault(f"brown:{s.doc_id}", []).append(" ".join(s.words))
    for s in read_ud(split, data_dir):
        docs.setdefault(f"ewt:{s.doc_id}", []).append(s.meta.get("text") or " ".join(s.words))
    return [Document(d, sents) for d, sents in docs.items() if len(sents) >= MIN_SENTENCES]


def _usable(text: str) -> bool:
    return MIN_WORDS <= len(text.split()) <= MAX_WORDS


def sample_anchors(docs: Sequence[Document], per_document: int | None, seed: int) -> list[Anchor]:
    """Anchors whose sentence and next sentence are both 3–60 words, at most
    ``per_document`` per document (None: all), drawn with ``seed``; in document order."""
    rng = random.Random(seed)
    out: list[Anchor] = []
    for d, doc in enumerate(docs):
        s = doc.sentences
        ok = [i for i in range(len(s) - 1) if _usable(s[i]) and _usable(s[i + 1])]
        if per_document is not None and len(ok) > per_document:
            ok = sorted(rng.sample(ok, per_document))
        out.extend(Anchor(d, i) for i in ok)
    return out


def anchor_pairs(
    anchor: Anchor, docs: Sequence[Document], seed: int, kinds: Iterable[str] = KINDS
) -> list[Pair]:
    """The pairs of one anchor, in the order of ``kinds``. Random choices are seeded by
    ``seed``, the anchor and the kind, so a pair never depends on which other anchors or
    kinds were asked for."""
    doc, i = docs[anchor.doc], anchor.index
    s, out = doc.sentences, []
    for kind in kinds:
        rng = random.Random(f"{seed}:{anchor.doc}:{anchor.index}:{kind}")
        if kind == "next":
            out.append(Pair(s[i], s[i + 1], 0, kind, doc.doc_id))
        elif kind == "swapped":
            out.append(Pair(s[i + 1], s[i], 1, kind, doc.doc_id))
        elif kind == "same_doc":
            far = [j for j in range(len(s)) if abs(j - i) >= 2 and _usable(s[j])]
            far = far or [j for j in range(len(s)) if abs(j - i) >= 2]
            out.append(Pair(s[i], s[rng.choice(far)], 1, kind, doc.doc_id))
        elif kind == "other_doc":
            other = rng.randrange(len(docs) - 1)
            other += other >= anchor.doc  # any document but this one
            cand = [t for t in docs[other].sentences if _usable(t)] or docs[other].sentences
            out.append(Pair(s[i], rng.choice(cand), 1, kind, doc.doc_id))
        else:
            raise ValueError(f"unknown pair kind {kind!r}; one of {KINDS}")
    return out


def pairs_of(
    anchors: Iterable[Anchor], docs: Sequence[Document], seed: int, kinds: Iterable[str] = KINDS
) -> Iterator[Pair]:
    """Every anchor's pairs of ``kinds``, anchor by anchor."""
    kinds = tuple(kinds)
    for anchor in anchors:
        yield from anchor_pairs(anchor, docs, seed, kinds)


def pair_heads_work_dir() -> Path:
    """Where the pair-head trainers keep features, checkpoints and scores by default."""
    from probing.config import cache_dir

    return cache_dir() / "train" / "minilm-l6-pair-heads"


def split_pairs(split: str, per_doc: int | None, args, kinds) -> list[Pair]:
    """The pairs of ``kinds`` of every anchor of ``split`` (seeded by ``--seed``)."""
    docs = read_documents(split, getattr(args, "data_dir", None))
    anchors = sample_anchors(docs, per_doc, seed=args.seed)
    return list(pairs_of(anchors, docs, seed=args.seed, kinds=kinds))
