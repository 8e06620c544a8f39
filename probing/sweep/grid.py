"""The grid a spec expands into: extraction jobs and fitting cells, each with a stable id.

Extraction runs once per (model, dataset, split, dtype); every (task, seed, layer) cell of
that model and data set then reads the cached features. A cell's id names it readably and
ends in a hash of everything that determines its numbers (settings and the feature-cache
keys, which cover the model's weights and the data's bytes), so a finished cell is reused
only when it would come out the same.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import asdict, dataclass

from probing.probes.tasks import get_task
from probing.sweep.spec import SweepSpec, training_dict


@dataclass(frozen=True)
class ExtractJob:
    """Features of one split: ``layers`` None = every layer."""

    model: str
    dataset: str
    split: str
    dtype: str
    pooling: str
    layers: tuple[int, ...] | None
    max_sentences: int | None

    @property
    def id(self) -> str:
        return f"{safe(self.model)}__{self.dataset}__{self.split}__{self.dtype}"


@dataclass(frozen=True)
class Cell:
    """One fit: a task's probe on one layer of one model, with one seed.

    ``features``: (split, cache folder, cache key, sample) of the extracted features; sample
    is the sentence cap when the split is a seeded sample viewed from a whole-split entry.
    """

    model: str
    task: str
    dataset: str
    seed: int
    layer: int
    features: tuple[tuple[str, str, str, int | None], ...]  # (split, folder, key, sample)
    settings: str  # JSON of the training settings (part of the id's hash)

    @property
    def id(self) -> str:
        spec = {**asdict(self), "features": [(s, k, n) for s, _, k, n in self.features]}
        digest = hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:12]
        return (
            f"{safe(self.model)}__{self.dataset}__{self.task}"
            f"__seed{self.seed}__layer{self.layer:02d}__{digest}"
        )


def safe(name: str) -> str:
    """A model name usable in a file name (hub ids and folders keep only their last part)."""
    name = name.rstrip("/").rsplit("/", 1)[-1] if "/" in name else name
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("._") or "model"


def splits_needed(spec: SweepSpec, dataset: str) -> tuple[str, ...]:
    """The splits the tasks on ``dataset`` read (WSD needs no dev split)."""
    wanted = {s for t in spec.tasks if t.dataset == dataset for s in get_task(t.task).splits}
    return tuple(s for s in ("train", "dev", "test") if s in wanted)


def extraction_jobs(spec: SweepSpec) -> list[ExtractJob]:
    """One job per (model, dataset, split) the grid needs, in spec order."""
    t = spec.training
    caps = {
        "train": t.max_train_sentences,
        "dev": t.max_dev_sentences,
        "test": t.max_test_sentences,
    }
    datasets = list(dict.fromkeys(x.dataset for x in spec.tasks))
    return [
        ExtractJob(model, ds, split, spec.dtype, spec.pooling, spec.layers, caps[split])
        for model in spec.models
        for ds in datasets
        for split in splits_needed(spec, ds)
    ]


def training_settings(spec: SweepSpec) -> str:
    """The settings every cell is fitted with, as canonical JSON."""
    t = training_dict(spec.training)
    return json.dumps({**t, "pooling": spec.pooling, "dtype": spec.dtype}, sort_keys=True)


def cells_for(
    spec: SweepSpec,
    model: str,
    dataset: str,
    features: dict[str, tuple[str, str, int | None]],
    layer_ids: tuple[int, ...],
) -> list[Cell]:
    """The (task, seed, layer) cells of one model and data set, once its features exist.

    Args:
        features: split -> (cache folder, cache key, sample), for every split of the data set.
        layer_ids: the layers extracted (the spec's, resolved against the model's depth).
    """
    settings = training_settings(spec)
    out = []
    for t in spec.tasks:
        if t.dataset != dataset:
            continue
        splits = get_task(t.task).splits
        feats = tuple((s, *features[s]) for s in splits)
        for seed in spec.seeds:
            for layer in layer_ids:
                out.append(Cell(model, t.task, dataset, seed, layer, feats, settings))
    return out


def n_cells(spec: SweepSpec) -> int | None:
    """How many cells the grid has, or None while ``layers = "all"`` is unresolved."""
    if spec.layers is None or any(x < 0 for x in spec.layers):
        return None
    return len(spec.models) * len(spec.tasks) * len(spec.seeds) * len(spec.layers)
