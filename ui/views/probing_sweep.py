"""Probing page section: open a sweep's output folder (``python -m probing sweep``).

Outside the demo a folder path can be typed; in the demo only sweeps committed under
``results/`` can be picked (no server paths from the UI there). The library does the reading
(:func:`probing.sweep.load_sweep`); this draws one task and seed at a time, all models.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import streamlit as st

from probing import config
from probing.probes.results import ProbeResults
from probing.sweep.merge import is_sweep, load_sweep
from ui.state import persist

RESULTS_DIR = config.results_dir()


@st.cache_data(max_entries=8, show_spinner=False)
def _load(folder: str, version: int) -> list[ProbeResults]:
    """ProbeResults of a sweep folder, cached per (folder, state of its cells/ folder)."""
    return load_sweep(folder)


def committed_sweeps() -> list[Path]:
    """Sweep folders under ``results/`` (the only ones the shared demo offers)."""
    if not RESULTS_DIR.is_dir():
        return []
    return sorted(p for p in RESULTS_DIR.iterdir() if p.is_dir() and is_sweep(p))


def pick_folder() -> Path | None:
    """A committed sweep from the list, or (outside the demo) a typed folder."""
    sweeps = committed_sweeps()
    if not config.demo_mode():
        typed = st.text_input(
            "Sweep folder",
            key="sweep_folder",
            placeholder="sweeps/example",
            help="The `out` folder of `python -m probing sweep SPEC`.",
        )
        if typed.strip():
            return Path(typed.strip()).expanduser()
    if not sweeps:
        return None
    by_name = {p.name: p for p in sweeps}
    picked = st.selectbox(
        "Sweep under results/",
        list(by_name),
        index=None,
        key=persist("sweep_pick", None, "sweep", valid=lambda n: n is None or n in by_name),
    )
    return None if picked is None else by_name[picked]


def render(
    show_results: Callable[[Sequence[ProbeResults], str, str], None],
    friendly_errors: Callable,
) -> None:
    """The section: folder, then task and seed, then the page's usual results view."""
    st.subheader("A sweep: models × tasks × seeds")
    st.caption(
        "`python -m probing sweep SPEC` fits every (model, task, seed, layer) of a grid, "
        "here or on a Ray cluster (see docs/scaling.md), and writes one folder; open it "
        "here to see its curves as for a single run."
    )
    folder = pick_folder()
    if folder is None:
        return
    runs = None
    with friendly_errors("Opening the sweep"):
        cells = folder / "cells"
        version = cells.stat().st_mtime_ns if cells.is_dir() else 0
        runs = _load(str(folder), version)
    if not runs:
        return
    pairs = list(dict.fromkeys((r.task, r.dataset) for r in runs))
    a, b = st.columns(2)
    task, dataset = a.selectbox(
        "Task", pairs, format_func=lambda p: f"{p[0]} · {p[1]}", key="sweep_task"
    )
    seeds = sorted({r.meta.seed or 0 for r in runs if (r.task, r.dataset) == (task, dataset)})
    seed = b.selectbox("Seed", seeds, key="sweep_seed")
    chosen = [r for r in runs if (r.task, r.dataset, r.meta.seed or 0) == (task, dataset, seed)]
    n_cells = sum(len(r.meta.layers) for r in runs)
    st.markdown(
        f"**{folder.name}**: {len(runs)} runs, {n_cells} cells finished; "
        f"showing {task} on {dataset}, seed {seed}, {len(chosen)} model(s)."
    )
    stem = f"{folder.name}__{task}__{dataset}__seed{seed}"
    with friendly_errors("Drawing the sweep"):
        show_results(chosen, stem, "sweep")
