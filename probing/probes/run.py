"""``probe_layers``: every probe of a task on every layer of a model, in one call.

For a tagging task (``pos``, ``xpos``, ``ptb-pos``, ``supersense``):

1. features of the train (capped by ``max_train_sentences``), dev and test splits;
2. per layer, a :class:`LinearProbe` (C chosen on dev) scored on **test** by accuracy and
   macro-F1 with bootstrap intervals (test sentences resampled), and the same probe (same C) trained on the
   :class:`ControlTask` labels, giving control accuracy and selectivity on the same test
   words;
3. baselines: majority label, most frequent label per word type, a linear probe on the
   context-free ``static`` vectors;
4. the :class:`ScalarMixProbe` over all probed layers (weights, γ, test accuracy);
5. the centre of gravity of the per-layer accuracies and the expected layer of the mix.

For ``wsd``: per layer, 1-NN to SemCor training sense centroids with WordNet first-sense
backoff, scored by F1 on the test split (with precision, recall, and accuracy on lemmas
seen in training); baselines WordNet first sense, SemCor most frequent sense and 1-NN on
the static vectors. Only the first word of a multi-word expression is an instance (the
others share its sense and would count it several times).

All training uses the same (seeded) training words, so baselines and probes are comparable.
:func:`probe_features` runs the same probes on features already extracted (an upload).

The flow of a run: the task is looked up once (:mod:`probing.probes.tasks`), the features of
its data set's splits are extracted (:func:`probing.features.extract_features`, cached on
disk), and the task's runner (:mod:`probing.probes.runners`) fits and scores the probes into
:class:`~probing.probes.results.ProbeResults`. What a run does is one
:class:`~probing.probes.settings.ProbeSettings`.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from typing import Any

from probing.encoders.base import Encoder
from probing.errors import InvalidArgumentError
from probing.features import Features, extract_features
from probing.probes.control import TypeKeys, model_type_keys
from probing.probes.defaults import DEFAULT_MAX_TRAIN_SENTENCES, DEFAULT_MAX_TRAIN_WORDS
from probing.probes.results import COLUMNS, ProbeResults, typed_table
from probing.probes.runners.base import ProbeProgress
from probing.probes.settings import ProbeSettings

__all__ = [  # the results' names are kept here for code written before probing.probes.results
    "COLUMNS",
    "DEFAULT_MAX_TRAIN_SENTENCES",
    "DEFAULT_MAX_TRAIN_WORDS",
    "ProbeProgress",
    "ProbeResults",
    "ProbeSettings",
    "check_run_arguments",
    "probe_features",
    "probe_layers",
    "typed_table",
]

SPLITS = ("train", "dev", "test")


def probe_layers(
    encoder_or_name: Encoder | str,
    settings: ProbeSettings | str,
    dataset: str | None = None,
    *,
    progress: ProbeProgress | None = None,
    keep_probes: dict | None = None,
    **values: Any,
) -> ProbeResults:
    """Probe every layer of a model for one task; see the module doc for what runs.

    Args:
        encoder_or_name: an Encoder, or a name/path for :func:`probing.load_encoder`.
        settings: the run's :class:`ProbeSettings`, or a task name whose settings are
            ``dataset`` and ``values`` (``layers=…, max_train_sentences=…, seeds=…``; ``Cs``
            is accepted for ``cs``), the rest at their defaults.
        progress: ``(stage, done, total)`` callback; stages ``extract train|dev|test``, ``fit``.
        keep_probes: if given, filled with the fitted per-layer probes of the first seed
            (``{layer or "static": probe}``; tagging, edge, WSD and structural tasks).

    Raises:
        UnknownTaskError, TaskLabelsMissingError: a task or task/data-set pair that does
            not exist; InvalidArgumentError: a setting out of range; ValueError: a sentence
            task (use :func:`probing.probes.sentence.probe_sentences`).
    """
    from probing.models.registry import load_encoder

    settings = _settings(settings, dataset, values)
    task = settings.spec  # the one lookup of the task
    if task.kind == "sentence":  # pooled sentence vectors, not word features
        raise ValueError(
            f"{task.name!r} is a sentence task: use probing.probes.sentence.probe_sentences"
        )
    check_settings(settings)
    encoder = load_encoder(encoder_or_name) if isinstance(encoder_or_name, str) else encoder_or_name
    dataset = settings.dataset_name
    label = task.field_for(dataset)
    report = progress or (lambda stage, done, total: None)
    caps = dict(
        zip(
            SPLITS,
            (settings.max_train_sentences, settings.max_dev_sentences, settings.max_test_sentences),
            strict=True,
        )
    )
    t0 = time.perf_counter()
    feats: dict[str, Features] = {}
    for split in SPLITS:
        feats[split] = extract_features(
            encoder,
            dataset,
            split,
            label,
            layers=settings.layers,
            pooling=settings.pooling,
            progress=lambda done, total, split=split: report(f"extract {split}", done, total),
            max_sentences=caps[split],
        )
    t_extract = time.perf_counter() - t0
    results = task.runner()(
        task,
        feats,
        settings,
        model=encoder.info.name,
        dataset=dataset,
        progress=progress,
        type_keys=model_type_keys(encoder),
        keep_probes=keep_probes,
    )
    meta = results.meta
    meta.encoder = encoder.info.name
    meta.layer_names = list(encoder.info.layer_names)
    meta.label_field = label
    meta.settings = settings  # the run's one copy of its settings; the file shows these too:
    meta.record(pooling=settings.pooling, max_train_sentences=settings.max_train_sentences)
    meta.n_words_encoded = int(sum(f.n_words_total for f in feats.values()))
    meta.timing_s["extract"] = round(t_extract, 2)
    return results


def probe_features(
    feats: dict[str, Features],
    settings: ProbeSettings | str,
    *,
    model: str,
    dataset: str,
    progress: ProbeProgress | None = None,
    type_keys: TypeKeys | None = None,
    keep_probes: dict | None = None,
    **values: Any,
) -> ProbeResults:
    """The probes of :func:`probe_layers` on features already extracted (an upload, a sweep
    cell).

    Args:
        feats: ``train`` and ``test`` :class:`Features` (labels selected), and ``dev`` for
            a tagging task if there is one; without it each linear probe chooses C on 10 %
            of its training words and the scalar mix trains for its full epochs.
        settings: as in :func:`probe_layers` (its data-set, layer and sentence caps are
            what ``feats`` already hold).
        model, dataset: names recorded in the results.
        type_keys: word -> control-task type key (default: the word itself).
    """
    settings = _settings(settings, dataset, values)
    task = settings.spec
    check_settings(settings, sizes=False)
    results = task.runner()(
        task,
        feats,
        settings,
        model=model,
        dataset=dataset,
        progress=progress,
        type_keys=type_keys,
        keep_probes=keep_probes,
    )
    results.meta.settings = settings  # what it shows of them: the caller records (uploads, sweep)
    return results


def _settings(settings: ProbeSettings | str, dataset: str | None, values: dict) -> ProbeSettings:
    if isinstance(settings, ProbeSettings):
        if dataset is not None or values:
            settings = settings.replace(**({"dataset": dataset} if dataset else {}), **values)
        return settings
    return ProbeSettings.of(settings, dataset, **values)


def check_settings(settings: ProbeSettings, sizes: bool = True) -> None:
    """:func:`check_run_arguments` on ``settings``, and at least one seed."""
    caps = (
        (settings.max_train_sentences, settings.max_dev_sentences, settings.max_test_sentences)
        if sizes
        else ()
    )
    check_run_arguments(settings.n_boot, settings.Cs, *caps)
    if settings.spec.kind != "structural" and int(settings.seeds) < 1:  # structural: max(1, …)
        raise InvalidArgumentError(f"seeds must be at least 1, not {settings.seeds}.")


def check_run_arguments(n_boot: int, Cs: Sequence[float], *sizes: int | None) -> None:
    """Raise before any work when an argument is out of range.

    Raises:
        InvalidArgumentError: ``n_boot`` < 1, a C that is not a positive number, no Cs,
            or a sentence cap below 1.
    """
    if int(n_boot) < 1:
        raise InvalidArgumentError(
            f"n_boot (bootstrap replicates) must be at least 1, not {n_boot}."
        )
    if not len(Cs) or not all(math.isfinite(c) and c > 0 for c in map(float, Cs)):
        raise InvalidArgumentError(
            f"Cs (inverse regularisation strengths) must be positive numbers, not {list(Cs)}."
        )
    for size in sizes:
        if size is not None and int(size) < 1:
            raise InvalidArgumentError(f"sentence caps must be at least 1 (or none), not {size}.")
