"""The sentence type every data-set reader yields, and the check of a file in the folder a
reader was handed (readers never call back into the registry while reading)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from probing.errors import DatasetNotFoundError


def not_found_message(name: str, path: Path, root: Path) -> str:
    """The how-to-get-it message for a missing file of data set ``name``."""
    return (
        f"Data set {name!r} not found: expected {path}. The data folder is {root} "
        "(set it with CONTEXTLENS_DATA_DIR or --data-dir). "
        f"Get the data with: python -m probing data download {name}"
    )


def in_folder(name: str, folder: Path, rel: str) -> Path:
    """``folder / rel``, a file of data set ``name`` in the folder its reader was handed;
    DatasetNotFoundError (with the how-to-get-it message) if it is missing."""
    path = folder / rel
    if not path.exists():
        raise DatasetNotFoundError(not_found_message(name, path, folder.parent))
    return path


@dataclass
class Sentence:
    """One sentence of words with aligned per-word labels.

    Attributes:
        words: the words (syntactic words for UD; SemCor multi-word expressions already split).
        labels: label-set name -> one label per word (``None`` where a word has no label of
            that kind, e.g. an untagged SemCor word's ``sense``).
        doc_id: the document it comes from (``br-a01``, ``ca01``, the EWT ``newdoc id`` or
            the split name for EWT sentences outside a marked document).
        sent_id: an id unique within the data set.
        split: ``train``, ``dev`` or ``test``.
        meta: extra per-sentence facts (e.g. the Brown genre, the raw EWT text).
    """

    words: list[str]
    labels: dict[str, list[str | None]]
    doc_id: str
    sent_id: str
    split: str = "train"
    meta: dict[str, str] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.words)

    def __post_init__(self) -> None:
        for name, seq in self.labels.items():
            if len(seq) != len(self.words):  # a reader bug, never a user error
                raise ValueError(
                    f"{self.sent_id}: {len(seq)} {name!r} labels for {len(self.words)} words"
                )
