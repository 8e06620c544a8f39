"""Probing a user's own CoNLL-U file (read and split by :mod:`probing.datasets.upload`).

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

import time
from collections.abc import Callable, Sequence

import numpy as np

from probing.datasets.types import Sentence
from probing.datasets.upload import TEST_EVERY, line_error, split_train_test
from probing.encoders.base import Encoder
from probing.errors import InvalidArgumentError, UnknownTaskError
from probing.features import features_of_sentences
from probing.probes.guards import check_probe_size
from probing.probes.results import ProbeResults
from probing.probes.run import probe_features
from probing.probes.settings import ProbeSettings
from probing.probes.tasks import TASKS, task_names
from probing.probes.upload_budget import check_upload_size

# (stage, done, total) with the stage names probe_layers uses: "extract train",
# "extract test", "fit".
UploadProgress = Callable[[str, int, int], None]

# Uploads are encoded in memory (float16); these caps bound that memory whatever the file
# size (20k words x 13 layers x 768 dims x 2 bytes = 400 MB for a BERT-base). Probe
# accuracy hardly moves beyond ~20k training words for tag sets of this size.
MAX_TRAIN_WORDS = 20_000
MAX_TEST_WORDS = 10_000

# Task -> the label field it reads from an upload (structural tasks read the heads): the
# registry's tasks with an ``upload_field``.
UPLOAD_TASKS = {t: TASKS[t].upload_field for t in task_names(uploadable=True)}
COLUMN_NAMES = {
    "upos": "UPOS (4th)",
    "xpos": "XPOS (5th)",
    "head": "HEAD (7th)",
    "deprel": "DEPREL (8th)",
}


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
        raise line_error(
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
            raise line_error(
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
                raise line_error(
                    None,
                    f"Sentence {s.sent_id}, word {i + 1} ({s.words[i][:40]!r}) has no "
                    f"{column} column value; this task needs one on every word.",
                )
        if label == "head" and not _is_tree(values):
            raise line_error(
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
