"""A report's parts as tasks of the sweep's executors (``--executor ray``).

Each group of parts that share features (:func:`probing.report.plan.group_of`: the probes of
one data set) is one task, so that a data set is read and encoded once, in one worker; every
other part is a task of its own. A task loads the model by the id or folder the driver was
given, checks that its weights hash as the driver's did, runs its parts in the report's
order and returns, per part, the payload, the CSV text and the seconds it took. The driver
writes each part's files as its task arrives (:func:`probing.report.run.run_report`), so a
killed run resumes exactly as an in-process one does.

Tasks ask for a GPU when the cluster has one (the executor's ``extract`` kind: every part
encodes); the model is then loaded on ``cuda``.
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from probing.report.plan import group_of

if TYPE_CHECKING:
    from probing.report.plan import PlannedPart
    from probing.sweep.executors import RayExecutor


def model_reference(model: str) -> str:
    """What a worker loads: a local folder as an absolute path (a worker's working folder
    need not be the driver's), a registry name or hub id as given."""
    path = Path(model).expanduser()
    return str(path.resolve()) if path.exists() else model


def groups(todo: list[PlannedPart]) -> list[list[PlannedPart]]:
    """``todo`` cut into tasks: the parts of one group together, in the report's order."""
    out: dict[str, list[PlannedPart]] = {}
    for p in todo:
        out.setdefault(group_of(p.name), []).append(p)
    return list(out.values())


def settings_env() -> dict[str, str]:
    """The driver's ``CONTEXTLENS_*`` variables, the cache and data folders resolved."""
    from probing import config

    env = {k: v for k, v in os.environ.items() if k.startswith("CONTEXTLENS_")}
    env["CONTEXTLENS_CACHE_DIR"] = str(config.cache_dir().resolve())
    env["CONTEXTLENS_DATA_DIR"] = str(config.data_dir().resolve())
    return env


def run_group(
    model: str,
    weights: str,
    todo: list[tuple[str, dict[str, Any]]],
    env: dict[str, str],
    device: str,
) -> list[dict[str, Any]]:
    """Run parts ``todo`` (name, settings) of one group in this worker; a task.

    Args:
        model: the id or folder to load (:func:`model_reference`).
        weights: the driver's combined weights SHA-256 ("" when it hashed none).
        env: the driver's ``CONTEXTLENS_*`` settings (the feature cache, data and fetched
            models' folders; passed, not inherited, so that a node of a cluster reads the
            folders the driver was told about).
        device: ``cuda`` or ``cpu``.

    Returns:
        Per part ``{"part", "payload", "csv", "seconds", "worker"}``.

    Raises:
        ModelUnavailableError: the weights this worker finds differ from the driver's.
    """
    from probing.sweep.adapter import pin_threads

    pin_threads()
    os.environ.update(env)
    from probing.errors import ModelUnavailableError
    from probing.models.registry import load_encoder
    from probing.report import identity, parts

    encoder = load_encoder(model, device=device)
    found = identity.model_identity(model, encoder)["weights_combined_sha256"]
    if found != weights:
        raise ModelUnavailableError(
            f"The worker on {socket.gethostname()} finds other weights for {model} than the "
            "driver did; give every node the same checkpoint (or run with --executor local)."
        )
    out = []
    for name, settings in todo:
        t = time.perf_counter()
        payload, csv = parts.run_part(name, encoder, settings, lambda *a: None)
        out.append(
            {
                "part": name,
                "payload": payload,
                "csv": csv,
                "seconds": time.perf_counter() - t,
                "worker": socket.gethostname(),
            }
        )
    return out


def run_parts(
    executor: RayExecutor, model: str, weights: str, todo: list[PlannedPart]
) -> Iterator[dict[str, Any]]:
    """Submit ``todo`` as tasks (:func:`groups`) and yield each part's result as its task
    ends (a task's typed error is raised here). Unfinished tasks are cancelled when the
    caller stops early."""
    device = "cuda" if executor.gpu else "cpu"
    ref = model_reference(model)
    pending = {}
    for group in groups(todo):
        handle = executor.submit(
            "extract",
            run_group,
            ref,
            weights,
            [(p.name, p.settings) for p in group],
            settings_env(),
            device,
        )
        pending[handle] = group
    try:
        while pending:
            handle, results = executor.next_done(pending)
            del pending[handle]
            yield from results
    finally:  # stopped early (an error, Ctrl-C): the tasks still out are not wanted
        executor.cancel(list(pending))
