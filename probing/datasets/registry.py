"""What data sets ContextLens knows, where they live, where to get them and how to read them.

Each entry names its reader and its ``files(split)`` as ``"module:function"``: the reader
modules import this one (for :func:`dataset_path`, their own callers' way to the data), so
they are looked up when first used. The registry hands a reader its folder; a reader never
asks the registry back while it reads.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from probing import config
from probing.datasets.types import not_found_message
from probing.errors import (
    DatasetNotFoundError,
    NotACorpusError,
    UnknownDatasetError,
    UnknownSplitError,
)

if TYPE_CHECKING:
    from probing.datasets.types import Sentence


@dataclass(frozen=True)
class DatasetInfo:
    """Static facts about one data set.

    Attributes:
        name: registry key (``ud-ewt``, ``semcor``, ``brown``, ``wordnet``).
        description: one line for the UI and ``data list``.
        urls: canonical sources the downloader fetches from (see ``probing.datasets.download``).
        licence: licence name; the licence file is kept in the folder.
        folder: folder name under the data dir.
        splits: the splits its reader offers (empty for WordNet, a lexicon).
        label_sets: label-set names the reader yields per word.
        required: files (relative to ``folder``) that must exist for the reader to work.
        reader: ``"module:function"`` of the sentence reader, called as
            ``(split or splits or None, folder=FOLDER)`` with the data set's folder handed
            in (the reader checks its own files there; it never asks the registry back);
            empty for a lexicon (WordNet).
        split_files: ``"module:function"`` giving, for ``(split, FOLDER)``, the files whose
            bytes determine its sentences (the feature cache's fingerprint).
    """

    name: str
    description: str
    urls: tuple[str, ...]
    licence: str
    folder: str
    splits: tuple[str, ...] = ()
    label_sets: tuple[str, ...] = ()
    required: tuple[str, ...] = field(default=(), repr=False)
    reader: str = field(default="", repr=False)
    split_files: str = field(default="", repr=False)

    @property
    def is_corpus(self) -> bool:
        """True for data sets of sentences (with a reader); False for a lexicon."""
        return bool(self.reader)

    def read(
        self, split: str | Iterable[str] | None = None, data_dir: str | Path | None = None
    ) -> Iterator[Sentence]:
        """Sentences of one split, several, or all (``None``), in data-set order."""
        if not self.reader:
            raise NotACorpusError(
                f"{self.name!r} is a lexicon, not a corpus of sentences; choose one of: "
                f"{', '.join(corpus_names())}."
            )
        for part in [split] if isinstance(split, str) else list(split or ()):
            self.check_split(part)
        return _function(self.reader)(split, folder=self.path(data_dir, required=()))

    def check_split(self, split: str) -> None:
        """Raises UnknownSplitError (a ValueError) naming the splits when ``split`` is not one."""
        if split not in self.splits:
            raise UnknownSplitError(
                f"Data set {self.name!r} has no split {split!r}; choose one of: "
                f"{', '.join(self.splits) or '(none: a lexicon)'}."
            )

    def path(
        self, data_dir: str | Path | None = None, required: Sequence[str] | None = None
    ) -> Path:
        """The data set's folder, checked to hold its ``required`` files (default: all).

        Raises:
            DatasetNotFoundError: a required file is missing; the message says how to fix it.
        """
        root = resolve_data_dir(data_dir)
        folder = root / self.folder
        for rel in self.required if required is None else required:
            if not (folder / rel).exists():
                raise DatasetNotFoundError(not_found_message(self.name, folder / rel, root))
        return folder

    def files(self, split: str, data_dir: str | Path | None = None) -> list[Path]:
        """The files whose bytes determine ``split``'s sentences, the reader's source included."""
        if not self.split_files:
            raise KeyError(
                f"No word-level reader for data set {self.name!r}; choose "
                f"{', '.join(corpus_names())}."
            )
        self.check_split(split)
        return _function(self.split_files)(split, self.path(data_dir, required=()))


def _function(ref: str) -> Callable[..., Any]:
    module, name = ref.split(":")
    return getattr(importlib.import_module(module), name)


DATASETS: dict[str, DatasetInfo] = {
    d.name: d
    for d in (
        DatasetInfo(
            name="ud-ewt",
            description="Universal Dependencies English Web Treebank (UPOS, PTB XPOS)",
            urls=tuple(
                f"https://github.com/UniversalDependencies/UD_English-EWT/raw/15d613d8/{f}"
                for f in (
                    "en_ewt-ud-train.conllu",
                    "en_ewt-ud-dev.conllu",
                    "en_ewt-ud-test.conllu",
                    "LICENSE.txt",
                )
            ),
            licence="CC BY-SA 4.0",
            folder="ud-english-ewt",
            splits=("train", "dev", "test"),
            label_sets=("upos", "xpos", "lemma"),
            required=(
                "en_ewt-ud-train.conllu",
                "en_ewt-ud-dev.conllu",
                "en_ewt-ud-test.conllu",
            ),
            reader="probing.datasets.ud:read_ud_splits",
            split_files="probing.datasets.ud:ud_split_files",
        ),
        DatasetInfo(
            name="semcor",
            description="SemCor 3.0 (brown1+brown2): PTB POS, WordNet 3.0 senses, supersenses",
            urls=("http://web.eecs.umich.edu/~mihalcea/downloads/semcor/semcor3.0.tar.gz",),
            licence="WordNet 3.0 licence",
            folder="semcor-3.0",
            splits=("train", "dev", "test"),
            label_sets=("pos", "sense", "supersense", "lemma", "mwe"),
            required=("brown1/tagfiles", "brown2/tagfiles"),
            reader="probing.datasets.semcor:read_semcor",
            split_files="probing.datasets.semcor:semcor_split_files",
        ),
        DatasetInfo(
            name="brown",
            description="Brown corpus (Brown tag set, 15 genres)",
            urls=(
                "https://raw.githubusercontent.com/nltk/nltk_data/gh-pages/packages/corpora/brown.zip",
            ),
            licence="redistribution permitted (see README)",
            folder="brown",
            splits=("train", "dev", "test"),
            label_sets=("pos", "pos_raw"),
            required=("cats.txt", "ca01"),
            reader="probing.datasets.brown:read_brown",
            split_files="probing.datasets.brown:brown_split_files",
        ),
        DatasetInfo(
            name="wordnet",
            description="Princeton WordNet 3.0 database (glosses, senses, lexicographer files)",
            urls=("https://wordnetcode.princeton.edu/3.0/WordNet-3.0.tar.gz",),
            licence="WordNet 3.0 licence",
            folder="wordnet-3.0",
            required=("data.noun", "index.sense", "lexnames"),
        ),
    )
}


def list_datasets() -> list[DatasetInfo]:
    """All known data sets, in registry order."""
    return list(DATASETS.values())


def corpus_names() -> list[str]:
    """Names of the data sets with sentences (not lexicons), in registry order."""
    return [d.name for d in DATASETS.values() if d.is_corpus]


def get_dataset(name: str) -> DatasetInfo:
    """The registry entry for ``name``; UnknownDatasetError (a KeyError and a ValueError)
    naming the choices if unknown."""
    try:
        return DATASETS[name]
    except KeyError:
        raise UnknownDatasetError(
            f"Unknown data set {name!r}; choose one of: {', '.join(DATASETS)}."
        ) from None


def resolve_data_dir(data_dir: str | Path | None = None) -> Path:
    """``data_dir`` if given, else the process-wide setting (``CONTEXTLENS_DATA_DIR``)."""
    return Path(data_dir).expanduser() if data_dir is not None else config.data_dir()


def dataset_path(
    name: str, data_dir: str | Path | None = None, required: Sequence[str] | None = None
) -> Path:
    """The folder of data set ``name``, checked to hold its required files.

    Raises:
        DatasetNotFoundError: a required file is missing; the message says how to fix it.
    """
    return get_dataset(name).path(data_dir, required)
