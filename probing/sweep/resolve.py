"""Before a sweep's first cell: every model loads, its layers exist, every data set is there.

A spec naming ``../../etc`` as a model used to start a 30-seed grid and fail in the first
worker; now the driver resolves every model and data set first and refuses the whole spec
with one typed message, before anything is written or extracted.
"""

from __future__ import annotations

from dataclasses import dataclass

from probing.errors import ContextLensError, SweepError
from probing.sweep.spec import SweepSpec


@dataclass(frozen=True)
class Resolved:
    """What the grid will run: layers per model and the number of cells."""

    layers: dict[str, int]  # model -> n_contextual_layers (layers 0..that exist)
    n_cells: int


def resolve(spec: SweepSpec) -> Resolved:
    """Load every model (cached per process) and check every data set's files.

    Raises:
        SweepError: naming the key (``models``, ``layers``, ``tasks``) and the cause.
    """
    from probing.datasets.registry import dataset_path
    from probing.models.registry import load_encoder

    depth: dict[str, int] = {}
    for model in spec.models:
        try:
            depth[model] = int(load_encoder(model).info.n_contextual_layers)
        except ContextLensError as exc:
            raise SweepError(f"`models`: {model!r} cannot be used: {exc}") from exc
        n_all = depth[model] + 1
        bad = [x for x in spec.layers or () if not -n_all <= x < n_all]
        if bad:
            raise SweepError(
                f"`layers`: {model} has layers 0 to {depth[model]} (or -{n_all} to -1), "
                f"not {bad[0]}."
            )
    for dataset in dict.fromkeys(t.dataset for t in spec.tasks):
        try:
            dataset_path(dataset)
        except (ContextLensError, KeyError, ValueError) as exc:
            raise SweepError(f"`tasks`: data set {dataset!r} cannot be read: {exc}") from exc
    per_model = {m: len(spec.layers) if spec.layers else n + 1 for m, n in depth.items()}
    n_cells = sum(per_model.values()) * len(spec.tasks) * len(spec.seeds)
    return Resolved(depth, n_cells)
