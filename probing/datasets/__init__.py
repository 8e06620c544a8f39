"""Data sets: registry, readers (UD-EWT, SemCor, Brown, WordNet), splits and downloads.

Every reader yields :class:`Sentence` objects (words + per-word label lists) and reads from
the data dir (``CONTEXTLENS_DATA_DIR`` / ``--data-dir``); a missing data set raises
``DatasetNotFoundError`` saying where it was expected and how to download it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

from probing.datasets.brown import brown_genres, brown_split, normalize_brown_tag, read_brown
from probing.datasets.download import DownloadResult, download_dataset
from probing.datasets.registry import (
    DATASETS,
    DatasetInfo,
    corpus_names,
    dataset_path,
    get_dataset,
    list_datasets,
)
from probing.datasets.semcor import read_semcor, semcor_documents
from probing.datasets.splits import brown_file_for_semcor, semcor_split
from probing.datasets.types import Sentence
from probing.datasets.ud import UPOS_TAGS, read_ud
from probing.datasets.wordnet import (
    LEXNAMES,
    first_sense_key,
    sense_gloss,
    supersense_of,
    wordnet,
)


def read_sentences(
    name: str, split: str | Iterable[str] | None = None, data_dir: str | Path | None = None
) -> Iterator[Sentence]:
    """Sentences of data set ``name`` (``ud-ewt``, ``semcor``, ``brown``), one split or all."""
    info = get_dataset(name)
    if info.is_corpus:
        _verify(name, split, info.splits, data_dir)
    return info.read(split, data_dir)


def _verify(
    name: str,
    split: str | Iterable[str] | None,
    all_splits: Iterable[str],
    data_dir: str | Path | None,
) -> None:
    """Check the split's files against the checksum manifest before reading them."""
    from probing.datasets.integrity import verify_files
    from probing.errors import DatasetNotFoundError

    parts = [split] if isinstance(split, str) else list(split or all_splits)
    if data_dir is not None:
        return  # the files are those of the process-wide data folder; another one is the caller's
    for part in parts:
        try:
            files = get_dataset(name).files(part)  # what the feature cache hashes
        except (DatasetNotFoundError, KeyError):
            return  # the reader itself says what is missing
        verify_files(name, files)


__all__ = [
    "DATASETS",
    "LEXNAMES",
    "UPOS_TAGS",
    "DatasetInfo",
    "DownloadResult",
    "Sentence",
    "brown_file_for_semcor",
    "brown_genres",
    "brown_split",
    "corpus_names",
    "dataset_path",
    "download_dataset",
    "first_sense_key",
    "get_dataset",
    "list_datasets",
    "normalize_brown_tag",
    "read_brown",
    "read_semcor",
    "read_sentences",
    "read_ud",
    "semcor_documents",
    "semcor_split",
    "sense_gloss",
    "supersense_of",
    "wordnet",
]
