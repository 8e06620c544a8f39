"""The commands of the analysis registry: one subcommand per entry, built from the entry.

For an :class:`~probing.analyses.registry.Analysis` this module makes the command's options
(its model options, one per field of its settings class and of its ``extras`` class, with
help and ranges checked while parsing, ``--out``, ``--quiet``, ``--overwrite``), and runs it:
the settings from the parsed line, the shipped-file guard on every file it will write
(:mod:`probing.shipped`) before any model is loaded, the output folder made, the models
loaded, the analysis run with progress on stderr, the result written by the entry's writer
and the command line that reproduces it recorded. A writer is a module with

    files(job: Job) -> list[Path]       # every file the run writes, known before it starts
    write(job: Job, result) -> None     # write them

named by the entry's ``writer``; an entry without one gets :class:`JsonWriter`'s one
``<name>.json``. So adding an analysis is its module and one registry line:
``python -m probing <name> --help`` then exists.

Standard library only at import: ``--help`` answers before any heavy import.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import json
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from probing import params as param_tools
from probing.analyses import registry
from probing.shipped import add_overwrite_argument, output_folder, refuse_shipped

if TYPE_CHECKING:
    from probing.analyses.registry import Analysis, Progress
    from probing.encoders.base import Encoder


@dataclass
class Job:
    """One command-line run of an analysis, as its writer sees it.

    Attributes:
        analysis: the registry entry.
        models: the model names as given (default ones included), in option order.
        params: the analysis's settings (an instance of ``analysis.params``).
        extras: the writer's own settings (of ``analysis.extras``), or None.
        out: the output folder.
        argv: the command line that reproduces the run (the command name first).
        quiet: no progress or summary on stderr.
        encoders: the loaded models (empty until they are loaded).
        progress: ``(stage, done, total)``, drawing on stderr unless ``quiet``.
    """

    analysis: Analysis
    models: list[str]
    params: Any
    extras: Any
    out: Path
    argv: list[str]
    quiet: bool = False
    encoders: list[Encoder] = field(default_factory=list)
    progress: Progress = field(default=lambda stage, done, total: None)

    def stem(self, name: str) -> str:
        """``name`` (a model's) as a file-name part: other characters become ``_``."""
        return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)


class JsonWriter:
    """The writer of an entry without one: ``<name>.json`` holding the command line, the
    settings and the result (its ``to_record()``, a dataclass's fields, or itself)."""

    @staticmethod
    def files(job: Job) -> list[Path]:
        return [job.out / f"{job.analysis.name}.json"]

    @staticmethod
    def write(job: Job, result: Any) -> None:
        from probing.io import atomic_write_json

        if hasattr(result, "to_record"):
            result = result.to_record()
        elif dataclasses.is_dataclass(result) and not isinstance(result, type):
            result = dataclasses.asdict(result)
        record = {"argv": job.argv, "settings": dataclasses.asdict(job.params), "result": result}
        atomic_write_json(JsonWriter.files(job)[0], json.loads(json.dumps(record, default=float)))


def commands(analyses: Mapping[str, Analysis] | None = None) -> dict[str, tuple[str, str]]:
    """``command -> (this module, its help)`` for every registry entry (the registry's, read
    now, unless ``analyses`` is given)."""
    analyses = registry.ANALYSES if analyses is None else analyses
    return {name: (__name__, a.summary) for name, a in analyses.items()}


def add_arguments(
    p: argparse.ArgumentParser, analysis: Analysis | str, analyses: Mapping | None = None
) -> None:
    """The options of ``analysis``'s command on ``p`` (an entry, or its name in ``analyses``,
    default the registry)."""
    if isinstance(analysis, str):
        analysis = (registry.ANALYSES if analyses is None else analyses)[analysis]
    for m in analysis.models:
        if m.repeat:
            p.add_argument(param_tools.option(m.name), dest=m.name, action="append", help=m.help)
        else:
            p.add_argument(param_tools.option(m.name), dest=m.name, default=m.default, help=m.help)
    param_tools.add_arguments(p, analysis.params)  # the settings, with their ranges
    if analysis.extras is not None:
        param_tools.add_arguments(p, analysis.extras)
    if analysis.out_default is None:
        p.add_argument(
            "--out", required=True, type=output_folder, help="output folder (created if missing)"
        )
    else:
        p.add_argument(
            "--out",
            type=output_folder,
            default=analysis.out_default,
            help=f"output folder (default ./{analysis.out_default})",
        )
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    add_overwrite_argument(p)
    p.set_defaults(_analysis=analysis)


def command(name: str) -> tuple[Callable[[argparse.ArgumentParser], None], Callable[..., int]]:
    """``(add_arguments(p), run(args))`` of the registered command ``name``, for a module that
    names its own parser (``probing.cli.cka.add_arguments``)."""

    def add(p: argparse.ArgumentParser) -> None:
        add_arguments(p, registry.get(name))

    return add, run


def job_of(args: argparse.Namespace, analysis: Analysis | None = None) -> Job:
    """The :class:`Job` a parsed command line describes (nothing loaded yet)."""
    analysis = analysis or args._analysis
    models: list[str] = []
    argv = [analysis.name]
    for m in analysis.models:
        given = getattr(args, m.name)
        names = (given or ([m.default] if m.default else [])) if m.repeat else [given]
        for model in (n for n in names if n is not None):
            models.append(model)
            argv += [param_tools.option(m.name), model]
    settings = param_tools.from_args(analysis.params, args)
    argv += param_tools.argv_of(settings)
    extras = None
    if analysis.extras is not None:
        extras = param_tools.from_args(analysis.extras, args)
        argv += param_tools.argv_of(extras)
    quiet = bool(getattr(args, "quiet", False))
    return Job(analysis, models, settings, extras, Path(args.out), argv, quiet)


def writer_of(analysis: Analysis) -> Any:
    """The entry's writer module, or :class:`JsonWriter`."""
    return JsonWriter if analysis.writer is None else importlib.import_module(analysis.writer)


def run(args: argparse.Namespace, analysis: Analysis | None = None) -> int:
    """Run a parsed registered command: guard, folder, models, analysis, files.

    Raises:
        ShippedFilesError: a file it would write ships with the repository (no --overwrite).
        InvalidArgumentError: settings, model count or a model the analysis cannot run on.
        OSError: the output folder cannot be made or written (the CLI names the path).
    """
    from probing.errors import InvalidArgumentError
    from probing.models import registry as models

    job = job_of(args, analysis)
    writer = writer_of(job.analysis)
    files = writer.files(job)
    refuse_shipped(files, bool(getattr(args, "overwrite", False)))
    lo, hi = job.analysis.n_models
    if not lo <= len(job.models) <= hi:  # before any model is loaded
        count = str(lo) if lo == hi else f"{lo} to {hi}"
        raise InvalidArgumentError(
            f"{job.analysis.name} takes {count} models, not {len(job.models)}."
        )
    _writable(job.out)  # before the run, so that a long run is not lost at its end
    job.encoders = [models.load_encoder(name) for name in job.models]
    job.progress = progress_line(job.quiet)
    start = time.perf_counter()
    result = job.analysis.run(job.encoders, job.params, job.progress)
    writer.write(job, result)
    if not job.quiet:
        print(
            f"wrote {', '.join(p.name for p in files)} to {job.out} "
            f"({time.perf_counter() - start:.1f} s)",
            file=sys.stderr,
        )
    return 0


def _writable(out: Path) -> None:
    """Make ``out`` and check it takes a file (an OSError names the path and the reason)."""
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=out, prefix=".write-test-"):
        pass


def progress_line(quiet: bool, every_s: float = 0.2) -> Progress:
    """A ``(stage, done, total)`` callback that redraws one stderr line, at most every
    ``every_s`` seconds and at each stage's end."""
    last = [0.0]

    def progress(stage: str, done: int, total: int) -> None:
        now = time.monotonic()
        if quiet or (done < total and now - last[0] < every_s):
            return
        last[0] = now
        print(f"\r{done}/{total} {stage}", end="" if done < total else "\n", file=sys.stderr)

    return progress
