"""One probe run's settings: :class:`ProbeSettings`, the one place they are declared.

Its fields are the run's settings; each field's metadata says its command-line flag and
help, and when :meth:`~ProbeSettings.to_argv` writes it. From those follow the options of
``python -m probing probe`` (:meth:`~ProbeSettings.add_arguments`; their ranges are
:data:`probing.cli.bounds.BOUNDS` ``["probe"]``, applied after), the settings of a parsed
command line (:meth:`~ProbeSettings.from_args`), the command a run records
(:meth:`~ProbeSettings.to_argv`), the sweep spec's ``[training]`` table and the key of a
run stored from the app (:meth:`~ProbeSettings.stored_key`).

Standard library only: ``probe --help`` builds its parser from here without scikit-learn,
pandas or torch.
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, fields
from functools import cached_property
from typing import Any

from probing.encoding import POOLINGS
from probing.probes.defaults import DEFAULT_MAX_TRAIN_SENTENCES, DEFAULT_MAX_TRAIN_WORDS, PROBE_CS
from probing.probes.tasks import TASKS, Task, get_task

ALWAYS, NON_DEFAULT = "always", "non-default"  # when to_argv writes a field


def _int_or_all(text: str) -> int | None:
    """``N`` or ``all``/``0`` (no cap)."""
    if text.lower() in {"all", "none", "0"}:
        return None
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError("must be a positive number or 'all'")
    return value


def _layers(text: str) -> list[int]:
    try:
        return [int(x) for x in text.replace(" ", "").split(",") if x]
    except ValueError:
        raise argparse.ArgumentTypeError("layers are comma-separated numbers, e.g. 0,3,6") from None


def _floats(text: str) -> tuple[float, ...]:
    return tuple(float(x) for x in text.split(",") if x)


def _cap(value: int | None) -> str:
    return "all" if value is None else str(value)


def option(
    flag: str,
    help: str,  # argparse's name
    *,
    argv: str = NON_DEFAULT,
    write: Callable[[Any], str] = str,
    when: Callable[[ProbeSettings], bool] | None = None,
    **argparse_kwargs: Any,
) -> dict[str, Any]:
    """A field's metadata: its ``flag`` and ``help``; ``argv`` (:data:`ALWAYS` or
    :data:`NON_DEFAULT`) and ``when`` say when :meth:`ProbeSettings.to_argv` writes it,
    ``write`` how; the rest goes to ``add_argument`` (``type``, ``choices``). A boolean field
    whose default is True gets a ``--no-…`` flag that clears it."""
    return {
        "flag": flag,
        "help": help,
        "argv": argv,
        "write": write,
        "when": when,
        "argparse": argparse_kwargs,
    }


@dataclass(frozen=True)
class ProbeSettings:
    """What determines one probe run's results (with the model's weights and the data).

    Field order is the order :meth:`to_argv` writes them (the ``command`` recorded in every
    result file keeps its committed form). ``cs`` None: the task's default grid
    (:data:`~probing.probes.defaults.PROBE_CS`; the sentence probe's own).
    """

    model: str = field(
        default="minilm-l6",
        metadata=option("--model", "registry name, folder or hub id", argv=ALWAYS),
    )
    task: str = field(
        default="pos", metadata=option("--task", "probing task", argv=ALWAYS, choices=list(TASKS))
    )
    dataset: str | None = field(
        default=None,
        metadata=option("--dataset", "data set (default: the task's own: pos->ud-ewt, ...)"),
    )
    layers: tuple[int, ...] | None = field(
        default=None,
        metadata=option(
            "--layers",
            "comma-separated layers (default: all)",
            type=_layers,
            write=lambda v: ",".join(map(str, v)),
        ),
    )
    max_train_sentences: int | None = field(
        default=DEFAULT_MAX_TRAIN_SENTENCES,
        metadata=option(
            "--max-train-sentences",
            f"training sentences to encode, a fixed seeded sample (default "
            f"{DEFAULT_MAX_TRAIN_SENTENCES}; 'all' for the whole split)",
            argv=ALWAYS,
            type=_int_or_all,
            write=_cap,
        ),
    )
    max_train_words: int | None = field(
        default=DEFAULT_MAX_TRAIN_WORDS,
        metadata=option(
            "--max-train-words",
            f"training words per probe fit (default {DEFAULT_MAX_TRAIN_WORDS}; 'all')",
            argv=ALWAYS,
            type=_int_or_all,
            write=_cap,
        ),
    )
    max_dev_sentences: int | None = field(
        default=None,
        metadata=option(
            "--max-dev-sentences", "default: all", argv=ALWAYS, type=_int_or_all, write=_cap
        ),
    )
    max_test_sentences: int | None = field(
        default=None,
        metadata=option(
            "--max-test-sentences", "default: all", argv=ALWAYS, type=_int_or_all, write=_cap
        ),
    )
    cs: tuple[float, ...] | None = field(
        default=None,
        metadata=option(
            "--cs",
            "grid of inverse regularisation strengths C tried on dev (default "
            + ",".join(f"{c:g}" for c in PROBE_CS)
            + ")",
            type=_floats,
            write=lambda v: ",".join(f"{c:g}" for c in v),
        ),
    )
    pooling: str = field(
        default="first", metadata=option("--pooling", "subword pooling", choices=list(POOLINGS))
    )
    seed: int = field(default=0, metadata=option("--seed", "first seed", argv=ALWAYS, type=int))
    seeds: int = field(
        default=1,
        metadata=option(
            "--seeds",
            "runs with seeds SEED..SEED+N-1 (own control labels, training sample, MDL "
            "order); scores are means with sd across seeds (committed results: 3)",
            argv=ALWAYS,
            type=int,
        ),
    )
    per_layer_c: bool = field(
        default=False,
        metadata=option(
            "--per-layer-c",
            "choose C per layer on dev (default: one C for all layers, equal capacity)",
        ),
    )
    mdl: bool = field(
        default=False,
        metadata=option(
            "--mdl", "also the online codelength (Voita & Titov 2020) of task and control labels"
        ),
    )
    scalar_mix: bool = field(
        default=True, metadata=option("--no-scalar-mix", "skip the scalar-mix probe")
    )
    control: bool = field(default=True, metadata=option("--no-control", "skip the control task"))
    cumulative_mix: bool = field(
        default=True,
        metadata=option(
            "--no-cumulative-mix",
            "skip the cumulative scalar mixes (Tenney et al.'s centre of gravity)",
        ),
    )
    mdl_seeds: int | None = field(
        default=None,
        metadata=option(
            "--mdl-seeds",
            "seeds that also get an MDL measurement, the first N (default: every seed of "
            "the run, like the probes' scores; ~10 fits each)",
            type=int,
            when=lambda s: s.mdl,
        ),
    )
    n_boot: int = field(
        default=1000, metadata=option("--n-boot", "bootstrap replicates (default 1000)", type=int)
    )
    sentence_pooling: str | None = field(
        default=None,
        metadata=option(
            "--sentence-pooling",
            "sentence tasks (genre): comma-separated cls,mean,attention,max (default: all the "
            "model offers; ELMo: mean,max)",
        ),
    )
    per_doc: str | None = field(
        default=None,
        metadata=option(
            "--per-doc", "sentence tasks: sentences per document, train,dev,test (default 20,20,50)"
        ),
    )

    # -- derived -----------------------------------------------------------------------

    @cached_property
    def spec(self) -> Task:
        """The task's registry entry (UnknownTaskError if there is none), looked up once per
        settings object (``cached_property`` writes the instance's ``__dict__``, which a
        frozen dataclass allows; fields, equality and ``replace`` do not see it)."""
        return get_task(self.task)

    @property
    def dataset_name(self) -> str:
        """The data set the run reads: ``dataset``, else the task's own."""
        return self.dataset or self.spec.default_dataset

    @property
    def Cs(self) -> tuple[float, ...]:  # the name scikit-learn and the probes use
        """The C grid of the word-level probes."""
        return tuple(self.cs) if self.cs else PROBE_CS

    @property
    def max_eval_sentences(self) -> int | None:
        """The dev and test cap when they are one (the app sets them together)."""
        return self.max_test_sentences

    def replace(self, **changes: Any) -> ProbeSettings:
        """A copy with ``changes`` (lists become tuples)."""
        return dataclasses.replace(self, **_normalised(changes))

    @classmethod
    def of(cls, task: str = "pos", dataset: str | None = None, **values: Any) -> ProbeSettings:
        """Settings from keyword values (``Cs`` is accepted for ``cs``; lists become tuples)."""
        if "Cs" in values:
            values["cs"] = values.pop("Cs")
        return cls(task=task, dataset=dataset, **_normalised(values))

    # -- command line --------------------------------------------------------------------

    @classmethod
    def add_arguments(cls, parser: argparse.ArgumentParser, skip: Iterable[str] = ()) -> None:
        """One option per field (except ``skip``); dests are the field names."""
        for f in fields(cls):
            if f.name in skip:
                continue
            m = f.metadata
            if f.type in (bool, "bool"):
                action = "store_false" if f.default else "store_true"
                parser.add_argument(m["flag"], dest=f.name, action=action, help=m["help"])
                continue
            kwargs = dict(m["argparse"])
            parser.add_argument(m["flag"], dest=f.name, default=f.default, help=m["help"], **kwargs)

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> ProbeSettings:
        """The settings of a parsed command line (fields it lacks keep their defaults)."""
        names = {f.name for f in fields(cls)}
        return cls(**_normalised({k: v for k, v in vars(args).items() if k in names}))

    def to_argv(self, only: Sequence[str] | None = None) -> list[str]:
        """The options that give these settings again (``probe`` parses them back to an
        equal ProbeSettings); ``only``: just these fields, in field order."""
        out: list[str] = []
        for f in fields(self):
            if only is not None and f.name not in only:
                continue
            m, value = f.metadata, getattr(self, f.name)
            if m["when"] is not None and not m["when"](self):
                continue
            if isinstance(value, bool):
                if value != f.default:
                    out.append(m["flag"])
                continue
            if m["argv"] == ALWAYS or (value is not None and value != f.default):
                out += [m["flag"], m["write"](value)]
        return out

    # -- stored runs ---------------------------------------------------------------------

    def stored_key(self) -> dict[str, Any]:
        """What names a run kept by the app (:func:`probing.probes.store.find_stored`): the
        fields the Probing page sets, in the form the store has always hashed."""
        return {
            "model": self.model,
            "task": self.task,
            "dataset": self.dataset_name,
            "layers": self.layers,
            "max_train_sentences": self.max_train_sentences,
            "max_eval_sentences": self.max_eval_sentences,
        }


def _normalised(values: dict[str, Any]) -> dict[str, Any]:
    """Lists as tuples (settings are hashable and compare equal however they were given)."""
    return {k: tuple(v) if isinstance(v, list) else v for k, v in values.items()}


def numeric_fields() -> list[str]:
    """Fields that take numbers (each must have a range in ``bounds.BOUNDS["probe"]``)."""
    numeric = {int, float, _int_or_all, _layers, _floats}
    return [f.name for f in fields(ProbeSettings) if f.metadata["argparse"].get("type") in numeric]
