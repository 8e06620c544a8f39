"""What a probe run records about itself: :class:`RunMeta`, the ``meta`` of ProbeResults.

Stored as a flat JSON object (the ``meta`` of ``results/*.json``); fields a run did not set
are left out, and keys this version does not know are kept in ``extra`` and written back.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

# Written even when None: None means "no cap" (all sentences, all words).
_KEEP_NONE = frozenset({"max_train_sentences", "max_train_words"})


@dataclass
class RunMeta:
    """Settings, sizes and timings of one probe run.

    Attributes:
        encoder: the model's name; layer_names: its layers' names, input layer first.
        label_field: the data set's label column; pooling: how pieces became words.
        max_train_sentences, max_train_words: the caps asked for (None = all).
        n_words_encoded: words through the encoder over all splits.
        split_rule, n_sentences: for an uploaded file, how it was split and its size.
        layers: the layers probed; seed; n_boot: bootstrap replicates; bootstrap_unit:
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

    encoder: str | None = None
    layer_names: list[str] = field(default_factory=list)
    label_field: str | None = None
    pooling: str | None = None
    max_train_sentences: int | None = None
    n_words_encoded: int | None = None
    split_rule: str | None = None
    n_sentences: int | None = None
    layers: list[int] = field(default_factory=list)
    seed: int | None = None
    n_boot: int | None = None
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

    @classmethod
    def from_dict(cls, d: dict[str, Any] | None) -> RunMeta:
        """Read a stored ``meta`` object (any version's)."""
        known = {f.name for f in fields(cls)} - {"extra"}
        d = d or {}
        meta = cls(**{k: v for k, v in d.items() if k in known})
        meta.extra = {k: v for k, v in d.items() if k not in known}
        return meta

    def to_dict(self) -> dict[str, Any]:
        """The flat JSON object, fields in declaration order, unset ones left out."""
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name == "extra" or (value is None and f.name not in _KEEP_NONE):
                continue
            if f.name in ("layer_names", "layers", "timing_s", "seeds") and not value:
                continue
            out[f.name] = value
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


_FIELD_NAMES = frozenset(f.name for f in fields(RunMeta)) - {"extra"}
