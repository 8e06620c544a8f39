"""Users' own CoNLL-U files: read and check an upload and split it (probing it:
:mod:`probing.probes.upload`).

An upload is untrusted input, so it is checked line by line *before* the ``conllu`` package
parses it: ``conllu`` is lenient (it pads short lines, splits on runs of spaces and reports
no line numbers), and a user who uploaded a broken file needs to know which line to fix.
Every problem raises :class:`~probing.errors.DataFormatError` whose message starts with the
line number (also kept as the exception's ``line`` attribute).

The split is deterministic and by sentence: sentence *i* (0-based, file order) goes to the
test part when ``i % 5 == 4``, i.e. every fifth sentence (80/20). Interleaving rather than
cutting the file at 80 % keeps both parts drawn from the whole file when it is ordered by
document or genre.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

import conllu

from probing.datasets.types import Sentence
from probing.datasets.ud import CONLLU_FIELDS, CONLLU_PARSERS, conllu_sentence
from probing.errors import DataFormatError

TEST_EVERY = 5  # sentence i is a test sentence when i % TEST_EVERY == TEST_EVERY - 1: 80/20
CONLLU_COLUMNS = ("ID", "FORM", "LEMMA", "UPOS", "XPOS", "FEATS", "HEAD", "DEPREL", "DEPS", "MISC")
_WORD_ID = re.compile(r"[1-9][0-9]*")
_RANGE_ID = re.compile(r"[1-9][0-9]*-[1-9][0-9]*")
_EMPTY_NODE_ID = re.compile(r"[0-9]+\.[1-9][0-9]*")


def line_error(line: int | None, message: str) -> DataFormatError:
    """A DataFormatError whose message starts with the line (kept as ``.line`` too)."""
    exc = DataFormatError(f"Line {line}: {message}" if line is not None else message)
    exc.line = line  # type: ignore[attr-defined] - for callers that point at the line
    return exc


def _size(n_bytes: int) -> str:
    if n_bytes >= 1024 * 1024:
        return f"{n_bytes / (1024 * 1024):.1f} MB"
    if n_bytes >= 1024:
        return f"{n_bytes / 1024:.0f} KB"
    return f"{n_bytes} bytes"


def _decode(data: bytes) -> str:
    """UTF-8 text (a leading BOM dropped); the error names the line of the first bad byte."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise line_error(
            line,
            f"byte 0x{data[exc.start]:02x} is not UTF-8. CoNLL-U files are UTF-8 text; "
            "re-save the file as UTF-8.",
        ) from None
    return text.removeprefix("\ufeff")


def check_conllu(text: str) -> str:  # noqa: C901 - one check per CoNLL-U rule, in file order
    """Check CoNLL-U ``text`` line by line; return it normalised for the ``conllu`` parser.

    Checks: every word line has 10 tab-separated columns; IDs are word numbers (1, 2, …),
    ranges (``3-4``) or empty nodes (``8.1``); word numbers run 1, 2, 3 … within a sentence
    (a restart means a missing blank line); every word has a FORM and a UPOS tag; there is
    at least one sentence. Normalising: ``\\r\\n`` → ``\\n``, whitespace-only lines → empty.

    Raises:
        DataFormatError: the first problem, its message starting with ``Line N:``.
    """
    lines = text.split("\n")
    out: list[str] = []
    expected = 1  # the next word number in the current sentence
    n_sentences = 0
    for number, raw in enumerate(lines, start=1):
        line = raw.rstrip("\r")
        if not line.strip():
            if expected > 1:
                n_sentences += 1
            expected = 1
            out.append("")
            continue
        out.append(line)
        if line.startswith("#"):
            continue
        cols = line.split("\t")
        if len(cols) != len(CONLLU_COLUMNS):
            hint = " (columns must be separated by tabs, not spaces)" if len(cols) == 1 else ""
            raise line_error(
                number,
                f"expected {len(CONLLU_COLUMNS)} tab-separated columns "
                f"({' '.join(CONLLU_COLUMNS)}), found {len(cols)}{hint}.",
            )
        word_id, form, upos = cols[0].strip(), cols[1], cols[3].strip()
        if _RANGE_ID.fullmatch(word_id) or _EMPTY_NODE_ID.fullmatch(word_id):
            _check_range(number, word_id, expected)
            continue  # multi-word tokens and empty nodes carry no UPOS of their own
        if not _WORD_ID.fullmatch(word_id):
            raise line_error(
                number,
                f"ID {word_id!r} is not a word number (1, 2, …), a range (3-4) or an empty "
                "node (8.1).",
            )
        if int(word_id) != expected:
            why = " (is a blank line missing between two sentences?)" if int(word_id) == 1 else ""
            raise line_error(number, f"word ID {word_id} where {expected} was expected{why}.")
        expected += 1
        if not form.strip():
            raise line_error(number, f"word {word_id} has an empty FORM (2nd column).")
        if upos in ("", "_"):
            raise line_error(
                number,
                f"word {word_id} ({form!r}) has no UPOS tag (4th column is {upos or 'empty'!r}); "
                "probing needs a UPOS tag on every word.",
            )
    if expected > 1:  # the last sentence need not end with a blank line
        n_sentences += 1
    if n_sentences == 0:
        raise line_error(1, "the file has no sentences (no word lines); is it a CoNLL-U file?")
    return "\n".join(out) + "\n"


def _check_range(number: int, word_id: str, expected: int) -> None:
    """A multi-word token's range ``a-b``: it must start at the next word and have a < b
    (an empty node's ID, ``8.1``, has no range to check)."""
    if "-" not in word_id:
        return
    first, last = (int(x) for x in word_id.split("-"))
    if first >= last:
        raise line_error(
            number,
            f"range {word_id} must go from a smaller to a larger word number (e.g. 3-4).",
        )
    if first != expected:
        raise line_error(
            number,
            f"range {word_id} starts at word {first}, but the next word is {expected}; a "
            "multi-word token line comes just before the words it spans.",
        )


def read_conllu_upload(data: bytes, max_bytes: int, name: str = "upload") -> list[Sentence]:
    """Sentences of an uploaded CoNLL-U file, checked.

    Args:
        data: the file's bytes.
        max_bytes: size cap (``config.limits().max_upload_bytes``).
        name: the file name, used as the sentences' ``doc_id`` and in their ids.

    Returns:
        One :class:`Sentence` per sentence with a word in it, in file order; words are the
        syntactic words (integer IDs; multi-word token lines and empty nodes skipped, as in
        :func:`probing.datasets.read_ud`); labels ``upos``, ``xpos``, ``lemma``.

    Raises:
        DataFormatError: too large (the message gives the cap), empty, not UTF-8, or
            malformed (the message starts with the line number, see :func:`check_conllu`).
    """
    if len(data) > max_bytes:
        raise line_error(
            None,
            f"The file is {_size(len(data))}; uploads are limited to {_size(max_bytes)} "
            f"({max_bytes:,} bytes). Upload a smaller part of it.",
        )
    if not data.strip():
        raise line_error(1, "the file is empty.")
    text = check_conllu(_decode(data))
    try:
        parsed = conllu.parse(text, fields=CONLLU_FIELDS, field_parsers=CONLLU_PARSERS)
    except Exception as exc:  # our checks should catch everything first; never a traceback
        raise line_error(None, f"The file could not be read as CoNLL-U: {exc}") from None
    sentences = []
    for n, tokens in enumerate(parsed, start=1):
        sentence = conllu_sentence(tokens, name, f"{name}-{n}")
        if sentence.words:
            sentences.append(sentence)
    return sentences


def split_train_test(sentences: Sequence[Sentence]) -> tuple[list[Sentence], list[Sentence]]:
    """Every fifth sentence (i % 5 == 4) to test, the rest to train (see the module doc).

    Raises:
        DataFormatError: fewer than 5 sentences (the test part would be empty).
    """
    if len(sentences) < TEST_EVERY:
        raise line_error(
            None,
            f"The file has {len(sentences)} sentence(s); probing needs at least {TEST_EVERY} "
            f"(every {TEST_EVERY}th sentence is held out for testing).",
        )
    train, test = [], []
    for i, s in enumerate(sentences):
        is_test = i % TEST_EVERY == TEST_EVERY - 1
        (test if is_test else train).append(replace(s, split="test" if is_test else "train"))
    return train, test
