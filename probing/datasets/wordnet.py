"""WordNet 3.0: NLTK's reader over the data folder, sense-key helpers and gloss text.

Sense keys are WordNet's ``lemma%ss_type:lex_filenum:lex_id:head_word:head_id``
(e.g. ``say%2:32:00::``); the ``lex_filenum`` field names the lexicographer file
(``verb.communication``), which is the *supersense* label used for probing.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from probing.datasets.registry import dataset_path

if TYPE_CHECKING:  # nltk is imported when WordNet is first read
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

DATA_FILES = ("data.noun", "data.verb", "data.adj", "data.adv")

# WordNet 3.0 lexicographer files (``lexnames``), number -> name: the 45 supersenses. Fixed
# by the 3.0 release, so readers need no data file for them (a test checks the file).
LEXNAMES: dict[str, str] = {
    f"{i:02d}": name
    for i, name in enumerate(
        (
            "adj.all",
            "adj.pert",
            "adv.all",
            "noun.Tops",
            "noun.act",
            "noun.animal",
            "noun.artifact",
            "noun.attribute",
            "noun.body",
            "noun.cognition",
            "noun.communication",
            "noun.event",
            "noun.feeling",
            "noun.food",
            "noun.group",
            "noun.location",
            "noun.motive",
            "noun.object",
            "noun.person",
            "noun.phenomenon",
            "noun.plant",
            "noun.possession",
            "noun.process",
            "noun.quantity",
            "noun.relation",
            "noun.shape",
            "noun.state",
            "noun.substance",
            "noun.time",
            "verb.body",
            "verb.change",
            "verb.cognition",
            "verb.communication",
            "verb.competition",
            "verb.consumption",
            "verb.contact",
            "verb.creation",
            "verb.emotion",
            "verb.motion",
            "verb.perception",
            "verb.possession",
            "verb.social",
            "verb.stative",
            "verb.weather",
            "adj.ppl",
        )
    )
}

# PTB (and Brown/UPOS-ish) tag prefixes -> WordNet POS letters.
_POS_PREFIX = (("NN", "n"), ("VB", "v"), ("JJ", "a"), ("RB", "r"))
_UPOS = {"NOUN": "n", "PROPN": "n", "VERB": "v", "ADJ": "a", "ADV": "r"}
_EXAMPLE_RE = re.compile(r'"([^"]*)"')


def wordnet_pos(pos: str) -> str | None:
    """WordNet POS letter (``n v a r``) for a WordNet letter, a PTB tag or a UPOS tag."""
    if pos in {"n", "v", "a", "r", "s"}:
        return "a" if pos == "s" else pos
    if pos in _UPOS:
        return _UPOS[pos]
    for prefix, letter in _POS_PREFIX:
        if pos.upper().startswith(prefix):
            return letter
    return None


@lru_cache(maxsize=2)
def _reader(folder: Path) -> WordNetCorpusReader:
    import nltk.data
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    class _WordNet30Reader(WordNetCorpusReader):
        # NLTK maps a non-"wordnet" version onto its own downloaded WordNet for the
        # multilingual (OMW) functions, which we neither use nor have offline: the
        # folder *is* WordNet 3.0, so there is nothing to map.
        def map_wn(self, version: str = "wordnet") -> None:
            return None

    # NLTK >= 3.9 only reads corpora under its data paths; the user chose this folder
    # through the data-dir setting, so authorise exactly it (not the whole data dir).
    if str(folder) not in map(str, nltk.data.path):
        nltk.data.path.append(str(folder))
    with warnings.catch_warnings():  # "multilingual functions are not available"
        warnings.simplefilter("ignore", UserWarning)
        return _WordNet30Reader(str(folder), None)


def wordnet(data_dir: str | Path | None = None) -> WordNetCorpusReader:
    """NLTK's ``WordNetCorpusReader`` over ``<data dir>/wordnet-3.0`` (cached per folder)."""
    return _reader(dataset_path("wordnet", data_dir).resolve())


@lru_cache(maxsize=2)
def _lexnames(folder: Path) -> dict[str, str]:
    names: dict[str, str] = {}
    for line in (folder / "lexnames").read_text(encoding="utf-8").splitlines():
        parts = line.split()
        if len(parts) >= 2:
            names[parts[0]] = parts[1]
    return names


def lexnames(data_dir: str | Path | None = None) -> dict[str, str]:
    """Lexicographer file number (``"32"``) -> name (``"verb.communication"``)."""
    return dict(_lexnames(dataset_path("wordnet", data_dir).resolve()))


def supersense_of(sense_key: str, data_dir: str | Path | None = None) -> str:
    """Supersense (lexicographer file name) of a sense key: ``say%2:32:00::`` ->
    ``verb.communication``. Raises ValueError for a malformed key."""
    try:
        lexsn = sense_key.split("%", 1)[1]
        filenum = lexsn.split(":")[1]
        return _lexnames(dataset_path("wordnet", data_dir).resolve())[filenum]
    except (IndexError, KeyError):
        raise ValueError(f"not a WordNet sense key: {sense_key!r}") from None


_DATA_FILE_OF_SS_TYPE = {
    "1": "data.noun",
    "2": "data.verb",
    "3": "data.adj",
    "4": "data.adv",
    "5": "data.adj",
}


@dataclass(frozen=True)
class _SenseIndex:
    offsets: dict[str, tuple[int, int]]  # sense key -> (synset offset, sense number)
    first: dict[tuple[str, str], str]  # (lemma, WordNet POS letter) -> key of sense 1


@lru_cache(maxsize=2)
def _sense_index(folder: Path) -> _SenseIndex:
    # index.sense is WordNet's own key -> synset table (206,941 lines, ~0.3 s to load):
    # far cheaper than building NLTK's whole reader for a gloss or a first sense.
    offsets: dict[str, tuple[int, int]] = {}
    first: dict[tuple[str, str], str] = {}
    with open(folder / "index.sense", encoding="utf-8") as f:
        for line in f:
            key, offset, number, _count = line.split()
            offsets[key] = (int(offset), int(number))
            if number == "1":
                lemma, lexsn = key.split("%", 1)
                letter = {"1": "n", "2": "v", "3": "a", "4": "r", "5": "a"}[lexsn[0]]
                first.setdefault((lemma, letter), key)
    return _SenseIndex(offsets, first)


def _definition(gloss: str) -> str:
    # As NLTK does it: drop the quoted examples, then the "; " separators they leave behind.
    return _EXAMPLE_RE.sub("", gloss).strip().strip("; ")


def _folder(data_dir: str | Path | None) -> Path:
    return dataset_path("wordnet", data_dir).resolve()


def sense_gloss(sense_key: str, data_dir: str | Path | None = None) -> str:
    """Definition of the synset a sense key belongs to (examples left out, as NLTK's
    ``Synset.definition()``). Raises ValueError for a key not in WordNet 3.0."""
    folder = _folder(data_dir)
    entry = _sense_index(folder).offsets.get(sense_key.strip().lower())
    if entry is None:
        raise ValueError(f"unknown WordNet sense key: {sense_key!r}")
    data_file = _DATA_FILE_OF_SS_TYPE[sense_key.split("%", 1)[1][0]]
    with open(folder / data_file, "rb") as f:  # offsets are byte offsets
        f.seek(entry[0])
        line = f.readline().decode("utf-8")
    return _definition(line.partition("|")[2])


def sense_keys(data_dir: str | Path | None = None) -> list[str]:
    """Every WordNet 3.0 sense key (lower case), from ``index.sense``."""
    return list(_sense_index(_folder(data_dir)).offsets)


def first_sense_key(lemma: str, pos: str, data_dir: str | Path | None = None) -> str | None:
    """Sense key of WordNet's first (most frequent) sense of ``lemma`` as ``pos``.

    ``pos`` may be a WordNet letter, a PTB tag or a UPOS tag; adjectives include satellites.
    ``None`` when WordNet has no such lemma (no morphological lookup: pass the lemma). This
    is the standard most-frequent-sense backoff for WSD.
    """
    letter = wordnet_pos(pos)
    if letter is None:
        return None
    name = "_".join(lemma.strip().lower().split())
    return _sense_index(_folder(data_dir)).first.get((name, letter))


def wordnet_glosses(data_dir: str | Path | None = None) -> Iterator[tuple[str, str, str]]:
    """``(synset offset+pos, kind, text)`` for every definition and example, in file order.

    ``kind`` is ``"definition"`` or ``"example"``. The gloss is split the way NLTK does it:
    quoted parts are examples, the rest (minus ``;`` separators) is the definition.
    """
    folder = dataset_path("wordnet", data_dir, required=DATA_FILES)
    for name in DATA_FILES:
        with open(folder / name, encoding="utf-8") as f:
            for line in f:
                if line.startswith("  "):  # licence header
                    continue
                fields, sep, gloss = line.partition("|")
                if not sep:
                    continue
                head = fields.split(maxsplit=3)
                synset_id = f"{head[0]}-{head[2]}"
                definition = _definition(gloss)
                if definition:
                    yield synset_id, "definition", definition
                for example in _EXAMPLE_RE.findall(gloss):
                    if example.strip():
                        yield synset_id, "example", example.strip()
