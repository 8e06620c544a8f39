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
import itertools
import os
import stat
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from probing.errors import DataFormatError, DatasetNotFoundError

_GZIP_MAGIC = b"\x1f\x8b"
# Bounds on what a vectors file may make the reader hold or inflate (see _lines): a 300-d
# GloVe line is ~3 KB, 4,096 dims at ~12 characters ~50 KB; gzip shrinks these files ~3x.
MAX_LINE_BYTES = 1 << 16
MAX_GZIP_RATIO = 20
MAX_BYTES = 16 * 1024**3  # the largest GloVe file (840B, 300-d) is 5.6 GB


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


def _check_regular(p: Path) -> int:
    """The size of ``p``, a regular file with content; a typed error for anything else
    (folders, devices, pipes, and ``/proc`` entries, which claim size 0)."""
    try:
        info = p.stat()
    except OSError:
        raise DatasetNotFoundError(
            f"Static vectors file not found: {p}. Give the path of a GloVe .txt (e.g. "
            "glove.6B.300d.txt from https://nlp.stanford.edu/projects/glove/) or a "
            "word2vec text-format file (.txt/.vec, optionally .gz)."
        ) from None
    if not stat.S_ISREG(info.st_mode):
        raise DataFormatError(f"{p} is not a regular file; give a GloVe or word2vec text file.")
    if info.st_size == 0:
        raise DataFormatError(
            f"{p} holds no vectors (an empty file, or a system file that is not a vectors file)."
        )
    return int(info.st_size)


def _lines(path: Path, size: int) -> Iterator[tuple[int, str]]:
    """(1-based line number, line) of a text or gzip file, streamed in bounded pieces.

    No line may be longer than :data:`MAX_LINE_BYTES`, and a gzip file may decompress to at
    most :data:`MAX_GZIP_RATIO` times its size (and :data:`MAX_BYTES` in all), so a
    compression bomb or a file without newlines is refused within a fixed memory bound.
    Binary files become DataFormatError; no error quotes the file's content.
    """
    with open(path, "rb") as raw:
        is_gzip = raw.read(2) == _GZIP_MAGIC
        raw.seek(0)
        f = gzip.GzipFile(fileobj=raw) if is_gzip else raw
        cap = min(MAX_BYTES, size * MAX_GZIP_RATIO) if is_gzip else MAX_BYTES
        total = 0
        for lineno in itertools.count(1):
            try:
                line = f.readline(MAX_LINE_BYTES + 1)
            except (OSError, EOFError, zlib.error) as exc:  # a truncated or corrupt .gz
                raise DataFormatError(
                    f"{path} cannot be read ({type(exc).__name__}): a damaged gzip file?"
                ) from None
            if not line:
                return
            total += len(line)
            if len(line) > MAX_LINE_BYTES:
                raise DataFormatError(
                    f"{path}, line {lineno} is longer than {MAX_LINE_BYTES:,} bytes: not a "
                    "vectors file (a line of 300 GloVe numbers is about 3 KB)."
                )
            if total > cap:
                raise DataFormatError(
                    f"{path} decompresses to more than {cap:,} bytes ({MAX_GZIP_RATIO}x its "
                    "size): not a vectors file (gzip shrinks vectors files about 3x)."
                )
            try:
                yield lineno, line.decode("utf-8")
            except UnicodeDecodeError:
                raise DataFormatError(
                    f"{path} is not a UTF-8 text file (binary word2vec?). Only the text formats "
                    "are read: GloVe (word and numbers per line) or word2vec text with a "
                    "'<count> <dim>' first line. Convert binary word2vec with gensim: "
                    "KeyedVectors.load_word2vec_format(p, binary=True).save_word2vec_format(out, binary=False)."
                ) from None


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
    size = _check_regular(p)
    if max_words is not None and max_words < 1:
        raise ValueError("max_words must be at least 1")
    words: list[str] = []
    rows: list[np.ndarray] = []
    dim: int | None = None
    expected: int | None = None
    for lineno, line in _lines(p, size):
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
                    f"{p}, line {lineno}: expected a word followed by numbers. Is this a GloVe "
                    "or word2vec text file?"
                )
        if len(parts) < dim + 1:
            raise DataFormatError(
                f"{p}, line {lineno}: expected a word and {dim} numbers, found "
                f"{len(parts) - 1} value(s)."
            )
        try:
            vec = np.asarray(parts[-dim:], dtype=np.float32)
        except ValueError:
            raise DataFormatError(f"{p}, line {lineno}: a value is not a number.") from None
        word = " ".join(parts[:-dim])
        if len(parts) > dim + 1 and _count_trailing_numbers(parts) == len(parts):
            # Only numbers and more of them than the dimension: a ragged row, not a
            # multi-word entry.
            raise DataFormatError(
                f"{p}, line {lineno}: expected {dim} numbers after the word, found more."
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
