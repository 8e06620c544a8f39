"""Static word vectors users already know: GloVe and word2vec in their text formats.

Both formats are one word per line followed by its numbers, separated by spaces:

- word2vec text (``.txt``/``.vec``): a first line ``<n_words> <dim>``, then the vectors;
- GloVe (``glove.6B.300d.txt``): no header line.

Either may be gzip-compressed (``.gz``, detected from the file's first bytes). The binary
word2vec format is not read (it is a different layout; convert it with gensim's
``KeyedVectors.save_word2vec_format(..., binary=False)``).
"""

from __future__ import annotations

import gzip
import io
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from probing.errors import DataFormatError, DatasetNotFoundError

_GZIP_MAGIC = b"\x1f\x8b"


@dataclass
class StaticVectors:
    """A word -> vector table.

    Attributes:
        words: the vocabulary, in file order (n_words).
        vectors: float32 (n_words, dim).
        source: the file it was read from.
    """

    words: list[str]
    vectors: np.ndarray
    source: str = ""
    _index: dict[str, int] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        if not self._index:
            # First occurrence wins: files sorted by frequency list the common form first.
            for i, w in enumerate(self.words):
                self._index.setdefault(w, i)

    def __len__(self) -> int:
        return len(self.words)

    @property
    def dim(self) -> int:
        return int(self.vectors.shape[1])

    def key(self, word: str) -> str | None:
        """The vocabulary entry for ``word``: itself, else its lower-cased form (GloVe is
        lower-cased), else None when the word is not in the vocabulary."""
        if word in self._index:
            return word
        lower = word.lower()
        return lower if lower in self._index else None

    def __contains__(self, word: object) -> bool:
        return isinstance(word, str) and self.key(word) is not None

    def vector(self, word: str) -> np.ndarray:
        """float32 (dim,) vector of ``word``; KeyError naming the word when it is missing."""
        k = self.key(word)
        if k is None:
            raise KeyError(f"{word!r} is not in the static vocabulary ({self.source or 'vectors'})")
        return self.vectors[self._index[k]]

    def lookup(self, words: list[str]) -> tuple[np.ndarray, list[str]]:
        """Vectors of the words found, (n_found, dim), and the list of words not found."""
        found = [w for w in words if w in self]
        missing = [w for w in words if w not in self]
        vecs = (
            np.stack([self.vector(w) for w in found])
            if found
            else np.zeros((0, self.dim), np.float32)
        )
        return vecs, missing

    def most_similar(self, word: str, k: int = 10) -> list[tuple[str, float]]:
        """The ``k`` words with the highest cosine to ``word`` (itself excluded)."""
        q = self.vector(word).astype(np.float64)
        norms = np.linalg.norm(self.vectors, axis=1) * np.linalg.norm(q)
        sims = (self.vectors @ q) / np.where(norms > 0, norms, 1.0)
        self_i = self._index[self.key(word)]  # type: ignore[index]
        sims[self_i] = -np.inf
        top = np.argsort(-sims, kind="stable")[:k]
        return [(self.words[i], float(sims[i])) for i in top]


def _open_text(path: Path) -> io.TextIOBase:
    with open(path, "rb") as f:
        magic = f.read(2)
    if magic == _GZIP_MAGIC:
        return io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8", errors="strict")
    return open(path, encoding="utf-8", errors="strict")  # noqa: SIM115 - caller closes


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    """(1-based line number, line) of a text or gzip file; binary files become DataFormatError."""
    try:
        with _open_text(path) as f:
            yield from enumerate(f, start=1)
    except UnicodeDecodeError as exc:
        raise DataFormatError(
            f"{path} is not a UTF-8 text file (binary word2vec?). Only the text formats are "
            "read: GloVe (word and numbers per line) or word2vec text with a "
            "'<count> <dim>' first line. Convert binary word2vec with gensim: "
            "KeyedVectors.load_word2vec_format(p, binary=True).save_word2vec_format(out, binary=False)."
        ) from exc
    except (OSError, EOFError) as exc:  # a truncated or corrupt .gz
        raise DataFormatError(f"{path} cannot be read: {exc}") from exc


def _header(parts: list[str]) -> tuple[int, int] | None:
    """``(n_words, dim)`` when a first line is a word2vec header, else None."""
    if len(parts) == 2 and all(p.isdigit() for p in parts):
        return int(parts[0]), int(parts[1])
    return None


def load_static_vectors(  # noqa: C901 - one pass over a file that checks each line
    path: str | os.PathLike[str], max_words: int | None = None
) -> StaticVectors:
    """Read GloVe or word2vec text-format vectors (plain or gzip).

    Args:
        path: the file.
        max_words: read only the first ``max_words`` vectors (files are sorted by
            frequency, so this keeps the commonest words and saves memory and time).

    Returns:
        StaticVectors with float32 vectors (n_words, dim).

    Raises:
        DatasetNotFoundError: the file does not exist.
        DataFormatError: the file is empty, binary, or a line has the wrong number of
            values or a value that is not a number; the message names the line.
    """
    p = Path(path).expanduser()
    if not p.is_file():
        raise DatasetNotFoundError(
            f"Static vectors file not found: {p}. Give the path of a GloVe .txt (e.g. "
            "glove.6B.300d.txt from https://nlp.stanford.edu/projects/glove/) or a word2vec "
            "text-format file (.txt/.vec, optionally .gz)."
        )
    if max_words is not None and max_words < 1:
        raise ValueError("max_words must be at least 1")
    words: list[str] = []
    rows: list[np.ndarray] = []
    dim: int | None = None
    expected: int | None = None
    for lineno, line in _lines(p):
        parts = line.rstrip("\n").rstrip().split(" ")
        if lineno == 1 and (head := _header(parts)) is not None:
            expected, dim = head
            continue
        if not line.strip():
            continue
        if dim is None:
            # GloVe: the first line fixes the dimension. A word may itself contain spaces
            # in some GloVe files, so the numbers are taken from the end of the line.
            # A first word that is itself a number ("2010") makes every part numeric.
            dim = min(_count_trailing_numbers(parts), len(parts) - 1)
            if dim <= 0:
                raise DataFormatError(
                    f"{p}, line {lineno}: expected a word followed by numbers, got "
                    f"{_show(line)}. Is this a GloVe or word2vec text file?"
                )
        if len(parts) < dim + 1:
            raise DataFormatError(
                f"{p}, line {lineno}: expected a word and {dim} numbers, found "
                f"{len(parts) - 1} value(s): {_show(line)}"
            )
        try:
            vec = np.asarray(parts[-dim:], dtype=np.float32)
        except ValueError:
            raise DataFormatError(
                f"{p}, line {lineno}: a value is not a number: {_show(line)}"
            ) from None
        word = " ".join(parts[:-dim])
        if len(parts) > dim + 1 and _count_trailing_numbers(parts) == len(parts):
            # Only numbers and more of them than the dimension: a ragged row, not a
            # multi-word entry.
            raise DataFormatError(
                f"{p}, line {lineno}: expected {dim} numbers after the word, found more: {_show(line)}"
            )
        words.append(word)
        rows.append(vec)
        if max_words is not None and len(words) >= max_words:
            break
    if not words:
        raise DataFormatError(f"{p} holds no vectors (empty file, or a header line only).")
    if expected is not None and max_words is None and len(words) != expected:
        raise DataFormatError(
            f"{p}: the word2vec header says {expected} vectors but the file has {len(words)} "
            "(truncated download?)."
        )
    return StaticVectors(words=words, vectors=np.stack(rows), source=str(p))


def _count_trailing_numbers(parts: list[str]) -> int:
    n = 0
    for token in reversed(parts):
        try:
            float(token)
        except ValueError:
            break
        n += 1
    return n


def _show(line: str, width: int = 60) -> str:
    line = line.strip()
    return repr(line if len(line) <= width else line[:width] + "…")
