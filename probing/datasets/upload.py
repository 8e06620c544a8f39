"""Users' own CoNLL-U files: read and check an upload, split it, probe UPOS on every layer.

An upload is untrusted input, so it is checked line by line *before* the ``conllu`` package
parses it: ``conllu`` is lenient (it pads short lines, splits on runs of spaces and reports
no line numbers), and a user who uploaded a broken file needs to know which line to fix.
Every problem raises :class:`~probing.errors.DataFormatError` whose message starts with the
line number (also kept as the exception's ``line`` attribute).

The split is deterministic and by sentence: sentence *i* (0-based, file order) goes to the
test part when ``i % 5 == 4``, i.e. every fifth sentence (80/20). Interleaving rather than
cutting the file at 80 % keeps both parts drawn from the whole file when it is ordered by
document or genre.

:func:`probe_upload` encodes both parts in memory
(:func:`probing.features.features_of_sentences`) and runs the probes of
:func:`probing.probes.run.probe_layers` on them (:func:`probing.probes.run.probe_features`:
linear probe per layer with sentence-bootstrap intervals, control task and selectivity,
majority / word-type / static baselines, scalar mix, centre of gravity), so the same
figures and downloads work for it. There is no dev split: each
:class:`~probing.probes.linear.LinearProbe` chooses C on 10 % of its training words, and the
scalar mix trains for its full number of epochs.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from dataclasses import replace

import conllu
import numpy as np

from probing.datasets.types import Sentence
from probing.datasets.ud import CONLLU_FIELDS, CONLLU_PARSERS, conllu_sentence
from probing.datasets.upload_budget import check_upload_size
from probing.encoders.base import Encoder
from probing.errors import DataFormatError, InvalidArgumentError, UnknownTaskError
from probing.features import features_of_sentences
from probing.probes.guards import check_probe_size
from probing.probes.results import ProbeResults
from probing.probes.run import probe_features
from probing.probes.settings import ProbeSettings
from probing.probes.tasks import TASKS, task_names

# (stage, done, total) with the stage names probe_layers uses: "extract train",
# "extract test", "fit".
UploadProgress = Callable[[str, int, int], None]

TEST_EVERY = 5  # sentence i is a test sentence when i % TEST_EVERY == TEST_EVERY - 1: 80/20
# Uploads are encoded in memory (float16); these caps bound that memory whatever the file
# size (20k words x 13 layers x 768 dims x 2 bytes = 400 MB for a BERT-base). Probe
# accuracy hardly moves beyond ~20k training words for tag sets of this size.
MAX_TRAIN_WORDS = 20_000
MAX_TEST_WORDS = 10_000

CONLLU_COLUMNS = ("ID", "FORM", "LEMMA", "UPOS", "XPOS", "FEATS", "HEAD", "DEPREL", "DEPS", "MISC")
# Task -> the label field it reads from an upload (structural tasks read the heads): the
# registry's tasks with an ``upload_field``.
UPLOAD_TASKS = {t: TASKS[t].upload_field for t in task_names(uploadable=True)}
COLUMN_NAMES = {
    "upos": "UPOS (4th)",
    "xpos": "XPOS (5th)",
    "head": "HEAD (7th)",
    "deprel": "DEPREL (8th)",
}
_WORD_ID = re.compile(r"[1-9][0-9]*")
_RANGE_ID = re.compile(r"[1-9][0-9]*-[1-9][0-9]*")
_EMPTY_NODE_ID = re.compile(r"[0-9]+\.[1-9][0-9]*")


def _error(line: int | None, message: str) -> DataFormatError:
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
        raise _error(
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
            raise _error(
                number,
                f"expected {len(CONLLU_COLUMNS)} tab-separated columns "
                f"({' '.join(CONLLU_COLUMNS)}), found {len(cols)}{hint}.",
            )
        word_id, form, upos = cols[0].strip(), cols[1], cols[3].strip()
        if _RANGE_ID.fullmatch(word_id) or _EMPTY_NODE_ID.fullmatch(word_id):
            _check_range(number, word_id, expected)
            continue  # multi-word tokens and empty nodes carry no UPOS of their own
        if not _WORD_ID.fullmatch(word_id):
            raise _error(
                number,
                f"ID {word_id!r} is not a word number (1, 2, …), a range (3-4) or an empty "
                "node (8.1).",
            )
        if int(word_id) != expected:
            why = " (is a blank line missing between two sentences?)" if int(word_id) == 1 else ""
            raise _error(number, f"word ID {word_id} where {expected} was expected{why}.")
        expected += 1
        if not form.strip():
            raise _error(number, f"word {word_id} has an empty FORM (2nd column).")
        if upos in ("", "_"):
            raise _error(
                number,
                f"word {word_id} ({form!r}) has no UPOS tag (4th column is {upos or 'empty'!r}); "
                "probing needs a UPOS tag on every word.",
            )
    if expected > 1:  # the last sentence need not end with a blank line
        n_sentences += 1
    if n_sentences == 0:
        raise _error(1, "the file has no sentences (no word lines); is it a CoNLL-U file?")
    return "\n".join(out) + "\n"


def _check_range(number: int, word_id: str, expected: int) -> None:
    """A multi-word token's range ``a-b``: it must start at the next word and have a < b
    (an empty node's ID, ``8.1``, has no range to check)."""
    if "-" not in word_id:
        return
    first, last = (int(x) for x in word_id.split("-"))
    if first >= last:
        raise _error(
            number,
            f"range {word_id} must go from a smaller to a larger word number (e.g. 3-4).",
        )
    if first != expected:
        raise _error(
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
        raise _error(
            None,
            f"The file is {_size(len(data))}; uploads are limited to {_size(max_bytes)} "
            f"({max_bytes:,} bytes). Upload a smaller part of it.",
        )
    if not data.strip():
        raise _error(1, "the file is empty.")
    text = check_conllu(_decode(data))
    try:
        parsed = conllu.parse(text, fields=CONLLU_FIELDS, field_parsers=CONLLU_PARSERS)
    except Exception as exc:  # our checks should catch everything first; never a traceback
        raise _error(None, f"The file could not be read as CoNLL-U: {exc}") from None
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
        raise _error(
            None,
            f"The file has {len(sentences)} sentence(s); probing needs at least {TEST_EVERY} "
            f"(every {TEST_EVERY}th sentence is held out for testing).",
        )
    train, test = [], []
    for i, s in enumerate(sentences):
        is_test = i % TEST_EVERY == TEST_EVERY - 1
        (test if is_test else train).append(replace(s, split="test" if is_test else "train"))
    return train, test


def _take_words(sentences: list[Sentence], max_words: int) -> list[Sentence]:
    """The first sentences (file order) that together have at most ``max_words`` words."""
    out, n = [], 0
    for s in sentences:
        if out and n + len(s) > max_words:
            break
        out.append(s)
        n += len(s)
    return out


def probe_upload(
    encoder: Encoder,
    sentences: Sequence[Sentence],
    layers: Sequence[int] | None = None,
    max_train_sentences: int | None = None,
    progress: UploadProgress | None = None,
    seed: int = 0,
    *,
    name: str = "upload",
    n_boot: int = 1000,
    batch_size: int = 32,
    task: str = "pos",
) -> ProbeResults:
    """Probe a task on every (chosen) layer of ``encoder`` over an uploaded file's sentences.

    Args:
        encoder: any Encoder.
        sentences: from :func:`read_conllu_upload`; split by :func:`split_train_test`.
        layers: layers to probe (default all; 0 = the input layer).
        max_train_sentences: use at most this many training sentences (the first ones).
        progress: ``(stage, done, total)``; stages ``extract train``, ``extract test``, ``fit``.
        seed: seed of the probes, control labels and bootstrap.
        name: the file name; the results' data set is ``upload:<name>``.
        n_boot: bootstrap replicates.
        batch_size: sentences per forward pass.
        task: ``pos`` (UPOS), ``xpos``, ``deprel`` (edge probe on the gold arcs) or the
            structural ``dep-distance`` / ``dep-depth`` (need HEAD on every word; without a
            dev split, structural probes train for their full epochs).

    Returns:
        ProbeResults for ``task``, as :func:`probe_layers` returns them.
    """
    if task not in UPLOAD_TASKS:
        raise UnknownTaskError(
            f"Unknown upload task {task!r}; choose one of {', '.join(UPLOAD_TASKS)}."
        )
    label = UPLOAD_TASKS[task]
    _check_labels(sentences, label)
    report = progress or (lambda stage, done, total: None)
    train_s, test_s = split_train_test(sentences)
    if max_train_sentences is not None:
        train_s = train_s[:max_train_sentences]
    train_s, test_s = _take_words(train_s, MAX_TRAIN_WORDS), _take_words(test_s, MAX_TEST_WORDS)
    if label == "head":
        _check_tree_sentences(train_s, test_s, task)
    n_all = int(encoder.info.n_contextual_layers) + 1
    layer_ids = tuple(range(n_all)) if layers is None else tuple(sorted({int(x) for x in layers}))
    if not layer_ids or not all(0 <= x < n_all for x in layer_ids):
        raise InvalidArgumentError(
            f"layers must lie in 0..{n_all - 1} for {encoder.info.name}, not {list(layers or [])}"
        )
    # Before encoding anything: a file with thousands of distinct tags in the task's own
    # column, or sentences whose probing would outgrow the job's memory, is refused at once.
    if label != "head":
        tags = {t for s in train_s for t in s.labels[label]}
        check_probe_size(tags, int(encoder.info.dim), f"The {label.upper()} probe on {name}")
    check_upload_size([*train_s, *test_s], task, len(layer_ids), int(encoder.info.dim), name)

    dataset = f"upload:{name}"
    t0 = time.perf_counter()
    feats = {
        split: features_of_sentences(
            encoder,
            part,
            label,
            layers=layer_ids,
            dataset=dataset,
            split=split,
            progress=lambda d, t, split=split: report(f"extract {split}", d, t),
            batch_size=batch_size,
        )
        for split, part in (("train", train_s), ("test", test_s))
    }
    if label != "head" and len(np.unique(feats["train"].labels)) < 2:
        raise _error(
            None,
            f"Every training word has the same {label.upper()} label; there is nothing to probe.",
        )
    t_extract = time.perf_counter() - t0

    settings = ProbeSettings(
        model=encoder.info.name, task=task, seed=seed, n_boot=n_boot, max_train_words=None
    )
    results = probe_features(
        feats, settings, model=encoder.info.name, dataset=dataset, progress=report
    )
    meta = results.meta
    meta.encoder = encoder.info.name
    meta.layer_names = list(encoder.info.layer_names) or [f"layer {i}" for i in range(n_all)]
    meta.label_field = label
    meta.pooling = "first"
    meta.split_rule = f"sentence i is a test sentence when i % {TEST_EVERY} == {TEST_EVERY - 1}"
    meta.n_sentences = len(sentences)
    meta.timing_s["extract"] = round(t_extract, 2)
    return results


def _check_tree_sentences(
    train_s: Sequence[Sentence], test_s: Sequence[Sentence], task: str
) -> None:
    """Structural probes score word pairs (distance) and depth rankings within a sentence: a
    split whose sentences all have one word has nothing to score (every score would be
    undefined). Refused before anything is encoded.

    Raises:
        DataFormatError: naming the split and what it needs.
    """
    what = "tree distance" if task == "dep-distance" else "tree depth"
    for split, part in (("training", train_s), (f"held-out (every {TEST_EVERY}th)", test_s)):
        if not any(len(s.words) >= 2 for s in part):
            raise _error(
                None,
                f"Every {split} sentence of the file has a single word: {what} is scored "
                "within sentences of two or more words, so there is nothing to probe. Upload "
                "sentences of several words.",
            )


def _check_labels(sentences: Sequence[Sentence], label: str) -> None:
    """Every word needs the task's column: a clear message naming the first one without."""
    column = COLUMN_NAMES[label]
    for s in sentences:
        values = s.labels.get(label, [])
        for i, v in enumerate(values):
            if v in ("", "_", None):
                raise _error(
                    None,
                    f"Sentence {s.sent_id}, word {i + 1} ({s.words[i][:40]!r}) has no "
                    f"{column} column value; this task needs one on every word.",
                )
        if label == "head" and not _is_tree(values):
            raise _error(
                None,
                f"Sentence {s.sent_id}: HEAD values do not form one tree "
                "(exactly one word must have HEAD 0, the others a word of the sentence, no cycles).",
            )


def _is_tree(values: Sequence) -> bool:
    """True when 1-based heads (0 = root) form one tree: whole numbers, one root, heads
    inside the sentence, no cycles. O(n) time and memory, whatever the sentence's length
    (the n x n distance matrix this once built took gigabytes for a 10,000-word sentence)."""
    try:
        heads = [int(h) for h in values]
    except (TypeError, ValueError):
        return False
    n = len(heads)
    if heads.count(0) != 1 or any(h < 0 or h > n for h in heads):
        return False
    state = [0] * n  # 0 unseen, 1 on the path being walked, 2 known to reach the root
    for start in range(n):
        path, j = [], start
        while j >= 0 and state[j] == 0:
            state[j] = 1
            path.append(j)
            j = heads[j] - 1
        if j >= 0 and state[j] == 1:  # walked back into this path: a cycle
            return False
        for k in path:
            state[k] = 2
    return True
