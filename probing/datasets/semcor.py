"""Reader for SemCor 3.0 (WordNet 3.0 sense-tagged Brown corpus subset).

By default the fully tagged parts ``brown1`` and ``brown2`` are read (186 documents, 20,138
sentences); ``brownv`` (senses on verbs only) must be asked for explicitly because its
untagged nouns/adjectives would look like "no sense" rather than "not annotated".

Per word, the labels are:

- ``pos``: the ``pos`` attribute of ``<wf>``. It is PTB-like but coarse (SemCor writes ``NN``
  for most plural nouns and ``VB`` for most verb forms). An ambiguous ``MD|VB`` keeps its
  first tag. ``<punc>`` tokens get a PTB punctuation tag from :data:`PUNCT_TAGS` (``,`` ->
  ``,``; ``. ? !`` -> ``.``; ``; : - *`` -> ``:``; brackets -> ``-LRB-``/``-RRB-``; quotes ->
  ``````/``''``; ``$`` -> ``$``; anything else -> ``SYM``).
- ``sense``: the WordNet 3.0 sense key ``lemma%lexsn`` (lemma lower-cased; the adjective
  position markers ``(a)``, ``(p)``, ``(ip)`` that SemCor leaves in some satellite head words
  are removed, as WordNet's ``index.sense`` has them without). ``wnsn=0`` marks a sense lost
  in the 1.6 -> 3.0 mapping (its key is not in WordNet 3.0), so where a form lists several
  senses (``wnsn=2;1``, 666 forms) the **first listed with a non-zero ``wnsn``** is taken
  (annotators list the preferred sense first). ``None`` for untagged words and where no
  listed sense survived (7,370 forms). Every key produced is in WordNet 3.0 (tested).
- ``supersense``: the lexicographer file named by the key's 2nd ``lexsn`` field
  (``2:32:00::`` -> ``verb.communication``), ``None`` where ``sense`` is ``None``.
- ``lemma``: the ``lemma`` attribute (for most-frequent-sense backoff); ``None`` when absent
  (untagged words). Proper names keep SemCor's class lemma (``group``, ``person``,
  ``location``).
- ``mwe``: ``B``/``I`` for the pieces of a multi-word form, ``None`` otherwise.

Multi-word forms (``took_place``, ``Fulton_County_Grand_Jury``) are split on ``_`` into
words that all share the form's labels, so the text reads naturally for an encoder.

Splits are by whole document with the fixed rule of :mod:`probing.datasets.splits`.

Counts (brown1 + brown2): 186 documents, 20,138 sentences, 434,837 words after splitting
(359,732 word forms -> 380,281 words, plus 54,556 punctuation tokens); 201,048 words
(185,269 forms) carry a sense, 31,261 distinct keys, all 45 supersenses. Splits: train
150 docs / 15,947 sentences / 350,226 words; dev 16 / 1,636 / 37,598; test 20 / 2,555 /
47,013.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from pathlib import Path

from probing.datasets import splits
from probing.datasets.registry import dataset_path
from probing.datasets.splits import semcor_split
from probing.datasets.types import Sentence, in_folder
from probing.datasets.wordnet import LEXNAMES
from probing.errors import DataFormatError

DEFAULT_PARTS = ("brown1", "brown2")
ALL_PARTS = ("brown1", "brown2", "brownv")

PUNCT_TAGS: dict[str, str] = {
    ",": ",",
    ".": ".",
    "?": ".",
    "!": ".",
    ";": ":",
    ":": ":",
    "-": ":",
    "*": ":",
    "(": "-LRB-",
    "[": "-LRB-",
    ")": "-RRB-",
    "]": "-RRB-",
    "``": "``",
    "`": "``",
    "''": "''",
    "'": "''",
    "$": "$",
}

_LINE_RE = re.compile(r"^<(wf|punc)([^>]*)>(.*)</\1>$")
_ATTR_RE = re.compile(r"(\w+)=([^\s>]+)")
_SENT_RE = re.compile(r"^<s\s+snum=(\d+)")
_ADJ_MARK_RE = re.compile(r"\((?:a|p|ip)\)")


def semcor_documents(
    data_dir: str | Path | None = None,
    parts: Iterable[str] = DEFAULT_PARTS,
    *,
    folder: Path | None = None,
) -> list[tuple[str, Path]]:
    """``(doc id, path)`` of every document in ``parts``, part by part, sorted by id
    (in ``folder`` when the registry hands it in, else the data dir's SemCor folder)."""
    parts = tuple(parts)
    if folder is None:
        folder = dataset_path("semcor", data_dir, required=[f"{p}/tagfiles" for p in parts])
    docs: list[tuple[str, Path]] = []
    for part in parts:
        tagfiles = in_folder("semcor", folder, f"{part}/tagfiles")
        docs.extend((p.name, p) for p in sorted(tagfiles.iterdir()) if p.name.startswith("br-"))
    return docs


def sense_key(lemma: str, lexsn: str, wnsn: str = "1") -> str | None:
    """WordNet 3.0 sense key from SemCor's ``lemma``, ``lexsn`` and ``wnsn`` attributes.

    With several senses (``wnsn=2;1``) the first one that exists in WordNet 3.0 (``wnsn``
    not 0) is taken; ``None`` if none does (see the module doc).
    """
    for number, lex in zip(wnsn.split(";"), lexsn.split(";"), strict=False):
        if number != "0":
            return f"{lemma.lower()}%{_ADJ_MARK_RE.sub('', lex)}"
    return None


def _word_labels(attrs: dict[str, str]) -> dict[str, str | None]:
    pos = attrs.get("pos", "").split("|")[0] or None
    lemma = attrs.get("lemma")
    lexsn = attrs.get("lexsn")
    sense = supersense = None
    if lemma and lexsn:
        sense = sense_key(lemma, lexsn, attrs.get("wnsn", "0"))
        if sense is not None:
            supersense = LEXNAMES.get(sense.split("%", 1)[1].split(":")[1])
    return {"pos": pos, "sense": sense, "supersense": supersense, "lemma": lemma}


def _read_doc(doc_id: str, path: Path) -> Iterator[Sentence]:
    split = semcor_split(doc_id)
    words: list[str] = []
    labels: dict[str, list[str | None]] = {}
    snum = ""

    def start() -> None:
        words.clear()
        labels.clear()
        labels.update({k: [] for k in ("pos", "sense", "supersense", "lemma", "mwe")})

    start()
    with open(path, encoding="utf-8") as f:
        for lineno, raw in enumerate(f, start=1):
            line = raw.strip()
            if m := _SENT_RE.match(line):
                snum = m.group(1)
                start()
            elif line == "</s>":
                yield Sentence(
                    words=list(words),
                    labels={k: list(v) for k, v in labels.items()},
                    doc_id=doc_id,
                    sent_id=f"{doc_id}.{snum}",
                    split=split,
                )
            elif m := _LINE_RE.match(line):
                kind, attr_text, text = m.groups()
                if kind == "punc":
                    one = {
                        "pos": PUNCT_TAGS.get(text, "SYM"),
                        "sense": None,
                        "supersense": None,
                        "lemma": None,
                    }
                    pieces = [text]
                else:
                    one = _word_labels(dict(_ATTR_RE.findall(attr_text)))
                    pieces = [p for p in text.split("_") if p] or [text]
                for i, piece in enumerate(pieces):
                    words.append(piece)
                    for key, value in one.items():
                        labels[key].append(value)
                    labels["mwe"].append(None if len(pieces) == 1 else ("B" if i == 0 else "I"))
            elif line.startswith(("<wf", "<punc")):
                raise DataFormatError(f"{path}:{lineno}: cannot parse {line!r}")


def read_semcor(
    split: str | Iterable[str] | None = None,
    data_dir: str | Path | None = None,
    parts: Iterable[str] = DEFAULT_PARTS,
    *,
    folder: Path | None = None,
) -> Iterator[Sentence]:
    """SemCor sentences, document by document (see the module doc for the labels).

    Args:
        split: ``train``/``dev``/``test`` (or several); ``None`` for all documents.
        data_dir: data folder (default: the data-dir setting).
        parts: SemCor parts to read; default ``brown1`` + ``brown2``.
        folder: the SemCor folder itself (the registry hands it in; ``data_dir`` unused).
    """
    wanted = {split} if isinstance(split, str) else (set(split) if split is not None else None)
    for doc_id, path in semcor_documents(data_dir, parts, folder=folder):
        if wanted is None or semcor_split(doc_id) in wanted:
            yield from _read_doc(doc_id, path)


def semcor_split_files(split: str, folder: Path | None = None) -> list[Path]:
    """The files whose bytes determine a split's sentences: its documents (in ``folder``,
    the SemCor folder the registry hands in), this reader and the split rule."""
    docs = [p for doc, p in semcor_documents(folder=folder) if semcor_split(doc) == split]
    return docs + [Path(__file__), Path(splits.__file__)]
