"""CLI command ``report``: a layer report of one model within a time budget.

    python -m probing report --model minilm-l6 --budget 10m --out /tmp/report-minilm

plans the parts the model can do (linear probes on every layer for UPOS, dependency
relations, supersenses and the structural probe's tree distance; word senses by 1-NN to
SemCor sense centroids; CKA between layers; contextuality; attention head statistics where
the model has attention; where it has a masked-LM head, fill-mask cloze accuracy per layer
and the tuned lens; with any LM head, subject-verb agreement), sizes each to fit
the budget (30 s to 24 h: ``90s``, ``10m``, ``1h``, ``1h30m``) and writes, in OUT:

- ``report.html``: one self-contained page (opens offline);
- ``report.json``: the plan, per part the estimate and the measured seconds, the model's
  identity (weights' SHA-256, config), the data, seeds, software versions and the claims;
- ``parts/<part>.json`` and ``.csv``: each part's result, written as it ends; a re-run with
  the same model, budget and parts skips the finished ones (``plan.json`` keeps the plan).

``--executor ray`` runs the parts as Ray tasks (a local Ray instance, or the cluster at
``--address``): one task per group of parts that share features, each loading the model by
the same id or folder; the files are the same, and ``report.json`` records the executor.

Bad input (an unknown model, a folder that is not a checkpoint, a budget too small for the
smallest plan, an unwritable or shipped ``--out``) stops with one line and exit code 2
before anything is written.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from probing.cli.sweep import add_executor_arguments
from probing.report.plan import PARTS
from probing.shipped import add_overwrite_argument, output_folder, refuse_shipped

PART_NAMES = PARTS  # in the report's order


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--model", required=True, help="registry name, folder or hub id")
    p.add_argument(
        "--budget", default="10m", help="time budget, 30s to 24h: 90s, 10m, 1h, 1h30m (default 10m)"
    )
    p.add_argument(
        "--out", required=True, type=output_folder, help="output folder (created if missing)"
    )
    p.add_argument(
        "--tasks",
        default=None,
        help="comma-separated parts (default all): " + ", ".join(PART_NAMES),
    )
    add_executor_arguments(
        p, "the parts one after the other in this process", "CPUs of a local Ray instance"
    )
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    add_overwrite_argument(p)


def parse_parts(text: str | None) -> tuple[str, ...]:
    """The parts asked for, in the report's order.

    Raises:
        InvalidArgumentError: an unknown part (naming the choices) or none.
    """
    from probing.errors import InvalidArgumentError

    if text is None:
        return PART_NAMES
    asked = [t.strip() for t in text.split(",") if t.strip()]
    unknown = [t for t in asked if t not in PART_NAMES]
    if unknown or not asked:
        raise InvalidArgumentError(
            f"--tasks {text!r}: unknown part {', '.join(unknown) or '(none given)'}; choose "
            f"from {', '.join(PART_NAMES)}."
        )
    return tuple(n for n in PART_NAMES if n in asked)


def check_writable(out: Path) -> None:
    """Refuse an ``--out`` that cannot be written, without creating anything: it must be a
    folder we may write, or not exist under a writable folder.

    Raises:
        OutputNotWritableError: naming the folder and why.
    """
    from probing.errors import OutputNotWritableError

    path = Path(out).expanduser().absolute()
    probe = path
    while not probe.exists():
        probe = probe.parent
    if not probe.is_dir():
        raise OutputNotWritableError(
            f"Cannot write the report to {out}: {probe} is a file, not a folder. Pick another "
            "--out folder."
        )
    if not os.access(probe, os.W_OK | os.X_OK):
        raise OutputNotWritableError(
            f"Cannot write the report to {out}: {probe} is not writable. Pick another --out folder."
        )


def check_executor(args: argparse.Namespace) -> None:
    """Refuse ``--address``/``--workers`` without Ray, and Ray when it is not installed,
    before anything is loaded or written.

    Raises:
        InvalidArgumentError: ``--address`` or ``--workers`` with ``--executor local``.
        OptionalDependencyError: ``--executor ray`` without Ray, saying how to install it.
    """
    from probing.errors import InvalidArgumentError
    from probing.sweep.executors import import_ray

    if args.executor != "ray":
        for flag, value in (("--address", args.address), ("--workers", args.workers)):
            if value is not None:
                raise InvalidArgumentError(
                    f"{flag} is for --executor ray (--executor local runs the parts here, one "
                    "after the other)."
                )
        return
    import_ray()


def run(args: argparse.Namespace) -> int:
    from probing.report.plan import parse_budget

    start = time.perf_counter()
    budget_s = parse_budget(args.budget)
    names = parse_parts(args.tasks)
    out = Path(args.out)
    refuse_shipped([], args.overwrite, folders=[out, out / "parts"])
    check_writable(out)
    check_executor(args)
    # Everything that can refuse does so before the first file is written.
    from probing.models.registry import load_encoder
    from probing.report.run import prepare, run_report

    encoder = load_encoder(args.model)
    prepared = prepare(args.model, encoder, out, budget_s, names)  # the budget check
    log = None if args.quiet else sys.stderr
    executor = None
    if args.executor == "ray":
        from probing.sweep.executors import make_executor

        executor = make_executor("ray", workers=args.workers, address=args.address)
    try:
        report = run_report(
            args.model,
            encoder,
            out,
            budget_s,
            names,
            prepared=prepared,
            started=start,
            log=log,
            executor=executor,
        )
    finally:
        if executor is not None:
            executor.close(cancel=True)
    if log:
        print(
            f"total {report['total_s_this_run']:.0f} s of a {budget_s:.0f} s budget "
            "(loading, calibration and parts)",
            file=log,
        )
    return 0
