"""Where probe runs made from the app are kept, so any session or server process finds them.

A run is identified by its settings (:class:`RunConfig`) plus the model's weight
fingerprint; its :class:`~probing.probes.run.ProbeResults` are stored as JSON under
``config.cache_dir()/probe_results/``, written atomically because another session may be
reading the same file.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import asdict, dataclass
from pathlib import Path

from probing import config
from probing.io import atomic_write
from probing.probes.run import ProbeResults


def output_stem(model: str, dataset: str, task: str) -> str:
    """``<model>__<dataset>__<task>`` with anything unsafe in a file name replaced."""
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", Path(model).name if "/" in model else model)
    return f"{safe}__{dataset}__{task}"


@dataclass(frozen=True)
class RunConfig:
    """What determines a run's results (with the model's weights)."""

    model: str
    task: str
    dataset: str
    layers: tuple[int, ...] | None  # None: all layers
    max_train_sentences: int
    max_eval_sentences: int | None  # dev and test caps; None: all

    def stored_path(self, fingerprint: str) -> Path:
        """Where this run's results live once made (any session, any server process)."""
        spec = json.dumps({**asdict(self), "weights": fingerprint}, sort_keys=True)
        digest = hashlib.sha256(spec.encode()).hexdigest()[:16]
        stem = output_stem(self.model, self.dataset, self.task)
        return config.cache_dir() / "probe_results" / f"{stem}__{digest}.json"


def save_results(results: ProbeResults, path: Path) -> None:
    """Write atomically: another session may be reading the same file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, results.to_json, suffix=".json")
