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

:func:`probe_upload` measures what :func:`probing.probes.run.probe_layers` measures for a
tagging task (linear probe per layer with bootstrap intervals, control task and selectivity,
majority / word-type / static baselines, scalar mix, centre of gravity) and returns the same
:class:`~probing.probes.run.ProbeResults`, so the same figures and downloads work for it.
It is built from the library's public estimators because ``probe_layers`` reads its
sentences from the data-set registry and cannot take them from a file. There is no dev
split: each :class:`~probing.probes.linear.LinearProbe` chooses C on 10 % of its training
words, and the scalar mix trains for its full number of epochs.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import replace

import conllu
import numpy as np
import pandas as pd

from probing.datasets.types import Sentence
from probing.errors import DataFormatError
from probing.probes.baselines import MajorityBaseline, WordTypeBaseline
from probing.probes.control import ControlTask
from probing.probes.linear import LinearProbe
from probing.probes.metrics import Estimate, bootstrap_ci, centre_of_gravity, expected_layer
from probing.probes.mix import ScalarMixProbe
from probing.probes.run import COLUMNS, ProbeResults

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
_FIELDS = ("id", "form", "lemma", "upos", "xpos")
_WORD_ID = re.compile(r"[1-9][0-9]*")
_RANGE_ID = re.compile(r"[1-9][0-9]*-[1-9][0-9]*")
_EMPTY_NODE_ID = re.compile(r"[0-9]+\.[1-9][0-9]*")
# The encoders drop control characters and blank words (probing.encoders.base); a word that
# would vanish is replaced so that the word count stays aligned with the labels.
_CONTROL_RE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


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


def check_conllu(text: str) -> str:
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
        parsed = conllu.parse(text, fields=_FIELDS)
    except Exception as exc:  # our checks should catch everything first; never a traceback
        raise _error(None, f"The file could not be read as CoNLL-U: {exc}") from None
    sentences = []
    for n, tokens in enumerate(parsed, start=1):
        words = [t for t in tokens if isinstance(t["id"], int)]
        if not words:
            continue
        sentences.append(
            Sentence(
                words=[t["form"] for t in words],
                labels={
                    "upos": [t["upos"] for t in words],
                    "xpos": [t["xpos"] for t in words],
                    "lemma": [t["lemma"] for t in words],
                },
                doc_id=name,
                sent_id=tokens.metadata.get("sent_id", f"{name}-{n}"),
                meta={"text": tokens.metadata.get("text", " ".join(t["form"] for t in words))},
            )
        )
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


class _Split:
    """One part's encoded words: float16 layers (L, n, dim) and static (n, dim) in memory."""

    def __init__(self, encoder, sentences: list[Sentence], layer_ids: tuple[int, ...],  # noqa: ANN001
                 progress: Callable[[int, int], None], batch_size: int) -> None:  # fmt: skip
        words = [[w if _CONTROL_RE.sub("", w).strip() else "_" for w in s.words] for s in sentences]
        n, dim = sum(len(w) for w in words), int(encoder.info.dim)
        self.layers = np.empty((len(layer_ids), n, dim), dtype=np.float16)
        self.static = np.empty((n, dim), dtype=np.float16)
        # Longest first, as in probing.features: almost no padding, which on CPU is the
        # biggest speed-up; vectors go back to their words' places.
        order = sorted(range(len(words)), key=lambda i: -len(words[i]))
        offsets = np.concatenate([[0], np.cumsum([len(w) for w in words])])
        progress(0, len(words))
        for start in range(0, len(order), batch_size):
            idx = order[start : start + batch_size]
            encs = encoder.encode([words[i] for i in idx], windowed=True, batch_size=len(idx))
            for i, enc in zip(idx, encs, strict=True):
                a, b = offsets[i], offsets[i + 1]
                self.layers[:, a:b] = enc.layers[list(layer_ids)]
                self.static[a:b] = enc.static
            progress(min(start + batch_size, len(words)), len(words))
        self.words = np.array([w for s in sentences for w in s.words], dtype=str)
        self.labels = np.array([t for s in sentences for t in s.labels["upos"]], dtype=str)

    def layer(self, pos: int) -> np.ndarray:
        return np.asarray(self.layers[pos], dtype=np.float32)


def probe_upload(
    encoder,  # noqa: ANN001 - probing.encoders.base.Encoder
    sentences: Sequence[Sentence],
    layers: Sequence[int] | None = None,
    max_train_sentences: int | None = None,
    progress: UploadProgress | None = None,
    seed: int = 0,
    *,
    name: str = "upload",
    n_boot: int = 1000,
    batch_size: int = 32,
) -> ProbeResults:
    """Probe UPOS on every (chosen) layer of ``encoder`` over an uploaded file's sentences.

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

    Returns:
        ProbeResults for task ``pos`` (accuracy), as :func:`probe_layers` returns them.
    """
    report = progress or (lambda stage, done, total: None)
    train_s, test_s = split_train_test(sentences)
    if max_train_sentences is not None:
        train_s = train_s[:max_train_sentences]
    train_s, test_s = _take_words(train_s, MAX_TRAIN_WORDS), _take_words(test_s, MAX_TEST_WORDS)
    n_all = int(encoder.info.n_layers) + 1
    layer_ids = tuple(range(n_all)) if layers is None else tuple(sorted({int(x) for x in layers}))
    if not layer_ids or not all(0 <= x < n_all for x in layer_ids):
        raise ValueError(f"layers must lie in 0..{n_all - 1}, not {list(layers or [])}")

    t0 = time.perf_counter()
    tr = _Split(encoder, train_s, layer_ids, lambda d, t: report("extract train", d, t), batch_size)
    te = _Split(encoder, test_s, layer_ids, lambda d, t: report("extract test", d, t), batch_size)
    if len(np.unique(tr.labels)) < 2:
        raise _error(None, "Every training word has the same UPOS tag; there is nothing to probe.")
    t_extract = time.perf_counter() - t0

    rows: list[dict] = []
    model, dataset = encoder.info.name, f"upload:{name}"

    def add(probe: str, layer: int | None, metric: str, est: Estimate,
            control: float = math.nan, sel: float = math.nan) -> None:  # fmt: skip
        rows.append({
            "model": model, "task": "pos", "dataset": dataset, "split": "test",
            "probe": probe, "layer": layer, "metric": metric, "value": est.value,
            "ci_low": est.ci_low, "ci_high": est.ci_high, "control": control,
            "selectivity": sel, "n": est.n,
        })  # fmt: skip

    def scores(probe: str, layer: int | None, pred: np.ndarray) -> Estimate:
        acc = bootstrap_ci(te.labels, pred, "accuracy", n_boot=n_boot, seed=seed)
        add(probe, layer, "accuracy", acc)
        add(
            probe,
            layer,
            "macro_f1",
            bootstrap_ci(te.labels, pred, "macro_f1", n_boot=n_boot, seed=seed),
        )
        return acc

    t1 = time.perf_counter()
    steps, done = 2 * len(layer_ids) + 2, 0
    report("fit", done, steps)
    for probe_name, base in (("majority", MajorityBaseline()), ("word_type", WordTypeBaseline())):
        scores(probe_name, None, base.fit(tr.words, tr.labels).predict(te.words))
    static = LinearProbe(random_state=seed, max_train_words=None).fit(tr.static, tr.labels)
    scores("static", None, static.predict(te.static))
    done += 1
    report("fit", done, steps)

    control = ControlTask(seed=seed).fit(tr.words, tr.labels)
    c_tr, c_te = control.transform(tr.words), control.transform(te.words)
    chosen: dict[str, float] = {}
    for pos, layer in enumerate(layer_ids):
        X_tr, X_te = tr.layer(pos), te.layer(pos)
        probe = LinearProbe(random_state=seed, max_train_words=None).fit(X_tr, tr.labels)
        pred = probe.predict(X_te)
        chosen[str(layer)] = probe.C_
        # Same probe family, same C, same words as the task probe: only the labels differ.
        c_probe = LinearProbe(C=probe.C_, max_train_words=None, random_state=seed)
        c_acc = float(np.mean(c_probe.fit(X_tr, c_tr).predict(X_te) == c_te))
        acc = bootstrap_ci(te.labels, pred, "accuracy", n_boot=n_boot, seed=seed)
        add("linear", layer, "accuracy", acc, c_acc, acc.value - c_acc)
        add(
            "linear",
            layer,
            "macro_f1",
            bootstrap_ci(te.labels, pred, "macro_f1", n_boot=n_boot, seed=seed),
        )
        done += 2
        report("fit", done, steps)

    mix = ScalarMixProbe(max_train_words=None, random_state=seed)
    mix.fit(tr.layers, tr.labels, layers=layer_ids)
    mix_acc = scores("scalar_mix", None, mix.predict(te.layers))
    report("fit", steps, steps)

    table = pd.DataFrame(rows, columns=COLUMNS)
    table["layer"] = table["layer"].astype("Int64")
    for col in ("value", "ci_low", "ci_high", "control", "selectivity"):
        table[col] = table[col].astype(float)
    per_layer = table[(table["probe"] == "linear") & (table["metric"] == "accuracy")]
    cog = centre_of_gravity(per_layer["value"].to_numpy(), per_layer["layer"].to_numpy(dtype=float))
    layer_names = list(encoder.info.layer_names) or [f"layer {i}" for i in range(n_all)]
    return ProbeResults(
        model=model, task="pos", dataset=dataset, table=table,
        scalar_mix={
            "layers": list(layer_ids), "weights": [float(w) for w in mix.weights_],
            "gamma": float(mix.gamma_), "expected_layer": expected_layer(mix.weights_, layer_ids),
            "accuracy": mix_acc.value, "ci_low": mix_acc.ci_low, "ci_high": mix_acc.ci_high,
        },
        centre_of_gravity=cog,
        meta={
            "encoder": model, "layer_names": layer_names, "label_field": "upos",
            "layers": list(layer_ids), "pooling": "first", "seed": seed, "n_boot": n_boot,
            "split_rule": f"sentence i is a test sentence when i % {TEST_EVERY} == {TEST_EVERY - 1}",
            "n_sentences": len(sentences), "n_train_sentences": len(train_s),
            "n_test_sentences": len(test_s), "n_train_words": int(len(tr.labels)),
            "n_test_words": int(len(te.labels)), "n_labels": int(len(np.unique(tr.labels))),
            "C": chosen, "eval_split": "test",
            "timing_s": {"extract": round(t_extract, 2), "fit": round(time.perf_counter() - t1, 2)},
        },
    )  # fmt: skip
