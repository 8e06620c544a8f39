"""What data sets ContextLens knows, where they live and where to get them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from probing import config
from probing.errors import DatasetNotFoundError


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
    """

    name: str
    description: str
    urls: tuple[str, ...]
    licence: str
    folder: str
    splits: tuple[str, ...] = ()
    label_sets: tuple[str, ...] = ()
    required: tuple[str, ...] = field(default=(), repr=False)


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


def get_dataset(name: str) -> DatasetInfo:
    """The registry entry for ``name``; ``KeyError`` naming the choices if unknown."""
    try:
        return DATASETS[name]
    except KeyError:
        raise KeyError(
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
    info = get_dataset(name)
    root = resolve_data_dir(data_dir)
    folder = root / info.folder
    for rel in info.required if required is None else required:
        path = folder / rel
        if not path.exists():
            raise DatasetNotFoundError(not_found_message(info, path, root))
    return folder


def not_found_message(info: DatasetInfo, path: Path, root: Path) -> str:
    """The how-to-get-it message for a missing file of ``info``."""
    return (
        f"Data set {info.name!r} not found: expected {path}. The data folder is {root} "
        "(set it with CONTEXTLENS_DATA_DIR or --data-dir). "
        f"Get the data with: python -m probing data download {info.name}"
    )
