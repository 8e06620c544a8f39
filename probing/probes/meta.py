"""What a probe run records about itself: :class:`RunMeta`, the ``meta`` of ProbeResults.

Stored as a flat JSON object (the ``meta`` of ``results/*.json``); fields a run did not set
are left out, and keys this version does not know are kept in ``extra`` and written back.
The run's settings are one :class:`~probing.probes.settings.ProbeSettings`
(``RunMeta.settings``); the four of them stored runs have always shown as flat keys
(:data:`FROM_SETTINGS`) are read from it, not kept a second time, and a stored run's keys
become its settings again when it is read.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

from probing.probes.settings import ProbeSettings

# Written even when None: None means "no cap" (all sentences, all words).
_KEEP_NONE = frozenset({"max_train_sentences", "max_train_words"})

# Settings a run's meta shows as flat keys: views of ``RunMeta.settings``. A key is written
# once the run (or the file read) has recorded it, as runs always did: an upload records its
# pooling but no seed, a sentence run its seed but no pooling.
FROM_SETTINGS = ("pooling", "max_train_sentences", "seed", "n_boot")

# The flat JSON's key order (what runs have always written), settings keys in their places.
_ORDER = (
    "encoder",
    "layer_names",
    "label_field",
    "pooling",
    "max_train_sentences",
    "n_words_encoded",
    "split_rule",
    "n_sentences",
    "layers",
    "seed",
    "n_boot",
)


@dataclass
class RunMeta:
    """Settings, sizes and timings of one probe run.

    Attributes:
        settings: the run's :class:`ProbeSettings` (None: a run that recorded none of
            them); ``pooling`` (how pieces became words), ``max_train_sentences`` (the cap
            asked for, None = all), ``seed`` and ``n_boot`` (bootstrap replicates) are read
            from it, as properties.
        recorded: which of those the stored ``meta`` shows (:data:`FROM_SETTINGS`).
        encoder: the model's name; layer_names: its layers' names, input layer first.
        label_field: the data set's label column.
        max_train_words: the training-word cap the probes used (None = all).
        n_words_encoded: words through the encoder over all splits.
        split_rule, n_sentences: for an uploaded file, how it was split and its size.
        layers: the layers probed; bootstrap_unit:
            what the bootstrap resamples ("sentence"; "word" in runs stored before).
        n_train_sentences, n_dev_sentences, n_test_sentences; eval_split.
        timing_s: seconds per stage (``extract``, ``fit``).
        n_train_words … unseen_type_accuracy: tagging runs (sizes, the C chosen per layer
            and the dev scores behind it, accuracy on word types unseen in training).
        seeds … mdl: several-seed tagging runs (the seeds, how C was chosen on which grid and
            whether at its edge, the static baseline's C, dev accuracy per layer, the best
            layer chosen on dev with its test score, how control types were keyed, whether
            every seed trained on the same words, MDL codelengths per layer).
        n_train_instances … first_sense_coverage: word-sense runs.
        command: the command (or page settings) that made the run.
        extra: keys written by other versions, kept as they are.
    """

    settings: ProbeSettings | None = None
    recorded: frozenset[str] = frozenset()
    encoder: str | None = None
    layer_names: list[str] = field(default_factory=list)
    label_field: str | None = None
    n_words_encoded: int | None = None
    split_rule: str | None = None
    n_sentences: int | None = None
    layers: list[int] = field(default_factory=list)
    bootstrap_unit: str = "word"
    max_train_words: int | None = None
    n_train_sentences: int | None = None
    n_test_sentences: int | None = None
    n_dev_sentences: int | None = None
    eval_split: str | None = None
    timing_s: dict[str, float] = field(default_factory=dict)
    # tagging runs
    n_train_words: int | None = None
    n_dev_words: int | None = None
    n_test_words: int | None = None
    n_labels: int | None = None
    test_unseen_type_rate: float | None = None
    C: dict[str, float] | None = None
    dev_accuracy_by_C: dict[str, dict[str, float]] | None = None
    unseen_type_accuracy: dict[str, float] | None = None
    seeds: list[int] = field(default_factory=list)
    C_grid: list[float] | None = None
    C_selection: str | None = None
    C_at_grid_edge: bool | None = None
    C_static: float | None = None
    dev_accuracy: dict[str, float] | None = None
    best_layer: dict[str, Any] | None = None
    type_keys: str | None = None
    same_train_words_for_all_seeds: bool | None = None
    mdl: dict[str, Any] | None = None
    # word-sense runs
    n_train_instances: int | None = None
    n_test_instances: int | None = None
    n_train_senses: int | None = None
    test_seen_lemma_rate: float | None = None
    first_sense_coverage: float | None = None
    command: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    # -- the settings' flat keys: views of ``settings`` ---------------------------------

    def _setting(self, name: str) -> Any:
        return getattr(self.settings, name) if name in self.recorded else None

    def record(self, **values: Any) -> None:
        """Record settings (of :data:`FROM_SETTINGS`) in ``settings`` and show them."""
        base = self.settings if self.settings is not None else ProbeSettings()
        self.settings = base.replace(**values)
        self.recorded = self.recorded | set(values)

    pooling = property(
        lambda self: self._setting("pooling"), lambda self, v: self.record(pooling=v)
    )
    max_train_sentences = property(
        lambda self: self._setting("max_train_sentences"),
        lambda self, v: self.record(max_train_sentences=v),
    )
    seed = property(lambda self: self._setting("seed"), lambda self, v: self.record(seed=v))
    n_boot = property(lambda self: self._setting("n_boot"), lambda self, v: self.record(n_boot=v))

    @classmethod
    def from_dict(cls, d: dict[str, Any] | None, **run: Any) -> RunMeta:
        """Read a stored ``meta`` object (any version's); ``run``: the run's ``model``,
        ``task`` and ``dataset``, completing the settings its keys give."""
        d = d or {}
        meta = cls(**{k: v for k, v in d.items() if k in _FIELDS})
        given = {k: d[k] for k in FROM_SETTINGS if k in d}
        if given or run:
            meta.settings = ProbeSettings().replace(**run, **given)
            meta.recorded = frozenset(given)
        meta.extra = {k: v for k, v in d.items() if k not in _FIELD_NAMES}
        return meta

    def to_dict(self) -> dict[str, Any]:
        """The flat JSON object, keys in the order runs have always written them, unset
        ones left out."""
        out: dict[str, Any] = {}
        for name in _KEYS:
            value = getattr(self, name)
            if value is None and name not in _KEEP_NONE:
                continue
            if name in ("layer_names", "layers", "timing_s", "seeds") and not value:
                continue
            out[name] = value
        out.update(self.extra)
        return out

    def update(self, values: dict[str, Any]) -> None:
        """Set several fields at once (unknown names go to ``extra``)."""
        for k, v in values.items():
            self[k] = v

    # Dict-style access, for code written against the earlier plain-dict ``meta``.
    def __getitem__(self, key: str) -> Any:
        if key in self.extra:
            return self.extra[key]
        if key in _FIELD_NAMES:
            return getattr(self, key)
        raise KeyError(key)

    def __setitem__(self, key: str, value: Any) -> None:
        if key in _FIELD_NAMES:
            setattr(self, key, value)
        else:
            self.extra[key] = value

    def keys(self) -> list[str]:
        """The keys :meth:`to_dict` writes (so ``{**meta}`` and ``dict(meta)`` work too)."""
        return list(self.to_dict())

    def get(self, key: str, default: Any = None) -> Any:
        """Like ``dict.get``: the value, or ``default`` when unset."""
        value = self.to_dict().get(key)
        return default if value is None else value


# Stored fields (not the settings, the bookkeeping of which are shown, or ``extra``).
_FIELDS = frozenset(f.name for f in fields(RunMeta)) - {"settings", "recorded", "extra"}
# The flat keys, in the order written; and every key this version knows.
_KEYS = (*_ORDER, *(f.name for f in fields(RunMeta) if f.name in _FIELDS - set(_ORDER)))
_FIELD_NAMES = frozenset(_KEYS)
