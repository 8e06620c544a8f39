"""Data sets: registry, readers (UD-EWT, SemCor, Brown, WordNet), splits and downloads."""

from __future__ import annotations

from probing.datasets.registry import (
    DATASETS,
    DatasetInfo,
    dataset_path,
    get_dataset,
    list_datasets,
)
from probing.datasets.types import Sentence

__all__ = ["DATASETS", "DatasetInfo", "Sentence", "dataset_path", "get_dataset", "list_datasets"]
