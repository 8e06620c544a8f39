"""A sweep's spec: a small TOML file read with :mod:`tomllib` and checked key by key.

Example (``docs/examples/sweep.toml``)::

    out = "sweeps/example"         # output folder (relative to the current directory)
    models = ["minilm-l6"]
    seeds = [0, 1]
    layers = "all"                 # or a list, e.g. [0, 3, 6] (negative counts from the top)

    [[tasks]]
    task = "pos"                   # dataset defaults to the task's own
    [[tasks]]
    task = "supersense"
    dataset = "semcor"

    [training]                     # every key optional; defaults as in `python -m probing probe`
                                   # (a ProbeSettings; Cs default 0.01,0.1,1)
    max_train_sentences = 300
    max_train_words = 5000
    max_dev_sentences = 200
    max_test_sentences = 300
    Cs = [0.01, 0.1, 1]
    n_boot = 200
    control = true

    [extraction]
    pooling = "first"
    dtype = "float32"
    cache_dir = ""                 # a feature-cache folder every node sees ("" = the default)

Every mistake raises :class:`~probing.errors.SweepError` naming the key and what it takes.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from probing import user_paths
from probing.encoders.batching import DTYPES as ENCODER_DTYPES
from probing.encoding import POOLINGS
from probing.errors import SweepError, UserFileError
from probing.probes.linear import DEFAULT_CS
from probing.probes.settings import ProbeSettings
from probing.probes.tasks import TASKS

# "auto" is left out: it resolves per machine, and the dtype is part of the extraction key
# that every node of a cluster must agree on.
DTYPES = tuple(d for d in ENCODER_DTYPES if d != "auto")

_TOP = {"out", "models", "seeds", "layers", "tasks", "training", "extraction"}
_TRAINING = {
    "max_train_sentences",
    "max_train_words",
    "max_dev_sentences",
    "max_test_sentences",
    "Cs",
    "n_boot",
    "control",
}
_EXTRACTION = {"pooling", "dtype", "cache_dir"}
MAX_SPEC_BYTES = 1024 * 1024  # a spec is a few hundred bytes; 10,000 seeds fit in 60 KB


@dataclass(frozen=True)
class TaskSpec:
    """One task of the grid and the data set it runs on."""

    task: str
    dataset: str


# How every (task, seed, layer) cell is fitted: the ``[training]`` keys of a run's
# ProbeSettings (None = no cap); the sweep's own C grid is the linear probe's default.
TRAINING_DEFAULTS = ProbeSettings(cs=tuple(DEFAULT_CS))


def training_dict(t: ProbeSettings) -> dict[str, Any]:
    """The ``[training]`` table of settings ``t`` (what spec.json and every cell record)."""
    return {
        "max_train_sentences": t.max_train_sentences,
        "max_train_words": t.max_train_words,
        "max_dev_sentences": t.max_dev_sentences,
        "max_test_sentences": t.max_test_sentences,
        "Cs": list(t.Cs),
        "n_boot": t.n_boot,
        "control": t.control,
    }


@dataclass(frozen=True)
class SweepSpec:
    """A validated sweep: models × tasks × seeds × layers, and how to extract and fit.

    ``layers`` None means every layer of each model (resolved per model after extraction).
    ``cache_dir`` None means the process's feature cache (``$CONTEXTLENS_CACHE_DIR``).
    """

    out: Path
    models: tuple[str, ...]
    tasks: tuple[TaskSpec, ...]
    seeds: tuple[int, ...] = (0,)
    layers: tuple[int, ...] | None = None
    training: ProbeSettings = TRAINING_DEFAULTS
    pooling: str = "first"
    dtype: str = "float32"
    cache_dir: Path | None = None

    def to_dict(self) -> dict:
        """JSON-ready copy (written into the sweep folder as ``spec.json``)."""
        return {
            "out": str(self.out),
            "models": list(self.models),
            "tasks": [{"task": x.task, "dataset": x.dataset} for x in self.tasks],
            "seeds": list(self.seeds),
            "layers": "all" if self.layers is None else list(self.layers),
            "training": training_dict(self.training),
            "extraction": {
                "pooling": self.pooling,
                "dtype": self.dtype,
                "cache_dir": "" if self.cache_dir is None else str(self.cache_dir),
            },
        }


def load_spec(path: str | os.PathLike[str]) -> SweepSpec:
    """Read and validate a TOML spec file.

    Raises:
        SweepError: unreadable file, not a regular file of at most :data:`MAX_SPEC_BYTES` (a
            FIFO or ``/dev/zero`` would block or read forever), TOML syntax error, or any
            invalid key or value.
    """
    path = Path(path)
    try:
        data = tomllib.loads(user_paths.read_text(path, "The sweep spec", MAX_SPEC_BYTES))
    except UserFileError as exc:
        raise SweepError(str(exc)) from None
    except OSError as exc:
        raise SweepError(f"cannot read the sweep spec {path}: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise SweepError(f"{path} is not UTF-8 text (byte {exc.start}): save it as UTF-8") from exc
    except tomllib.TOMLDecodeError as exc:
        raise SweepError(f"{path} is not valid TOML: {exc}") from exc
    except RecursionError:
        raise SweepError(
            f"{path} is nested too deeply to read (thousands of levels of brackets); a sweep "
            "spec is a few flat tables (see docs/examples/sweep.toml)."
        ) from None
    return parse_spec(data)


def parse_spec(data: dict[str, Any]) -> SweepSpec:
    """Validate a spec already parsed into a dict (see the module doc for the keys)."""
    _known(data, _TOP, "the spec")
    if "out" not in data:
        raise SweepError('the spec needs `out`, the output folder, e.g. out = "sweeps/mine"')
    out = _str(data["out"], "out")
    models = _models(data.get("models"))
    tasks = tuple(_task(t, i) for i, t in enumerate(_list(data.get("tasks"), "tasks")))
    if not tasks:
        raise SweepError('`tasks` is empty; add at least one [[tasks]] table with task = "pos"')
    seeds = tuple(_int(s, "seeds", minimum=0) for s in _list(data.get("seeds", [0]), "seeds"))
    if not seeds or len(set(seeds)) != len(seeds):
        raise SweepError(f"`seeds` must be a non-empty list of distinct integers, not {seeds}")
    training = _training(_table(data.get("training", {}), "training"))
    ext = _table(data.get("extraction", {}), "extraction")
    _known(ext, _EXTRACTION, "[extraction]")
    pooling = _choice(ext.get("pooling", "first"), POOLINGS, "extraction.pooling")
    dtype = _choice(ext.get("dtype", "float32"), DTYPES, "extraction.dtype")
    cache = _str(ext.get("cache_dir", ""), "extraction.cache_dir", empty=True)
    return SweepSpec(
        out=Path(out).expanduser(),
        models=models,
        tasks=tasks,
        seeds=seeds,
        layers=_layers(data.get("layers", "all")),
        training=training,
        pooling=pooling,
        dtype=dtype,
        cache_dir=Path(cache).expanduser() if cache else None,
    )


# -- one key each -------------------------------------------------------------------------


def _distinct(items: tuple, key: str, what: str, example: str) -> tuple:
    """``items`` when non-empty and without repeats; SweepError naming ``key`` otherwise."""
    if not items:
        raise SweepError(f"`{key}` is empty; {example}")
    if len(set(items)) != len(items):
        raise SweepError(f"`{key}` lists a {what} twice: {list(items)}")
    return items


def _models(value: Any) -> tuple[str, ...]:
    names = tuple(_str(m, "models") for m in _list(value, "models"))
    return _distinct(names, "models", "model", 'list at least one, e.g. models = ["minilm-l6"]')


def _task(value: Any, i: int) -> TaskSpec:
    where = f"tasks[{i}]"
    table = _table(value, where)
    _known(table, {"task", "dataset"}, where)
    if "task" not in table:
        raise SweepError(f'{where} needs `task`, e.g. task = "pos"')
    word_tasks = tuple(t for t, x in TASKS.items() if x.kind in ("tagging", "wsd"))
    if table["task"] in TASKS and table["task"] not in word_tasks:  # e.g. sentence genre
        raise SweepError(
            f"{where}: {table['task']!r} is not a word-level task; sweeps run "
            f"{', '.join(word_tasks)}"
        )
    name = _choice(table["task"], word_tasks, f"{where}.task")
    spec = TASKS[name]
    dataset = _str(table.get("dataset", spec.default_dataset), f"{where}.dataset")
    if dataset not in spec.fields:
        raise SweepError(
            f"{where}: task {name!r} runs on {', '.join(spec.fields)}, not {dataset!r}"
        )
    return TaskSpec(name, dataset)


def _layers(value: Any) -> tuple[int, ...] | None:
    if value == "all":
        return None
    layers = tuple(_int(x, "layers") for x in _list(value, "layers"))
    return _distinct(layers, "layers", "layer", 'give a list such as [0, 3, 6] or "all"')


def _training(table: dict[str, Any]) -> ProbeSettings:
    _known(table, _TRAINING, "[training]")
    kw: dict[str, Any] = {}
    for key in (
        "max_train_sentences",
        "max_train_words",
        "max_dev_sentences",
        "max_test_sentences",
    ):
        if key in table:  # 0 or "all": no cap, as on the command line
            raw = table[key]
            kw[key] = None if raw in (0, "all") else _int(raw, f"training.{key}", minimum=1)
    if "Cs" in table:
        cs = tuple(_float(c, "training.Cs") for c in _list(table["Cs"], "training.Cs"))
        if not cs or min(cs) <= 0:
            raise SweepError(f"training.Cs must be a non-empty list of positive numbers, not {cs}")
        kw["cs"] = cs
    if "n_boot" in table:
        kw["n_boot"] = _int(table["n_boot"], "training.n_boot", minimum=1)
    if "control" in table:
        if not isinstance(table["control"], bool):
            raise SweepError(f"training.control must be true or false, not {table['control']!r}")
        kw["control"] = table["control"]
    return TRAINING_DEFAULTS.replace(**kw)


# -- primitives ---------------------------------------------------------------------------


def _known(table: dict[str, Any], allowed: set[str], where: str) -> None:
    unknown = sorted(set(table) - allowed)
    if unknown:
        raise SweepError(
            f"unknown key(s) {', '.join(unknown)} in {where}; allowed: {', '.join(sorted(allowed))}"
        )


def _table(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise SweepError(f"`{where}` must be a table, not {type(value).__name__}")
    return value


def _list(value: Any, where: str) -> list:
    if value is None:
        raise SweepError(f"the spec needs `{where}`")
    if not isinstance(value, list):
        raise SweepError(f"`{where}` must be a list, not {value!r}")
    return value


def _str(value: Any, where: str, empty: bool = False) -> str:
    if not isinstance(value, str) or (not empty and not value.strip()):
        raise SweepError(f"`{where}` must be a non-empty string, not {value!r}")
    return value.strip()


def _int(value: Any, where: str, minimum: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise SweepError(f"`{where}` takes integers, not {value!r}")
    if minimum is not None and value < minimum:
        raise SweepError(f"`{where}` must be at least {minimum}, not {value}")
    return value


def _float(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise SweepError(f"`{where}` takes numbers, not {value!r}")
    return float(value)


def _choice(value: Any, allowed: tuple[str, ...], where: str) -> str:
    if value not in allowed:
        raise SweepError(f"`{where}` must be one of {', '.join(allowed)}, not {value!r}")
    return value
