"""The Layering page: every probing task of a model on one figure, by relative depth.

Reads the committed results (``results/*.json``, made by ``python -m probing probe``), so it
opens at once; the drawing is :mod:`probing.figures.layering`.
"""

from __future__ import annotations

import streamlit as st

from probing import config
from probing.figures.layering import TASKS, layering_figure, load_curves, supported_orderings
from ui.common import page_header

RESULTS_DIR = config.REPO_ROOT / "results"


def models_with_results() -> list[str]:
    """Models with at least one task of the figure in ``results/``, ELMo first."""
    tasks = {t for t, *_ in TASKS}
    found = set()
    for path in RESULTS_DIR.glob("*__*__*.json"):
        model, _, task = path.stem.split("__", 2)
        if task in tasks:
            found.add(model)
    return sorted(found, key=lambda m: (not m.startswith("elmo"), m))


@st.cache_data(show_spinner=False)
def curves_for(model: str, stamp: tuple) -> list:  # stamp: results files' mtimes
    return load_curves(RESULTS_DIR, model)


def render() -> None:
    """Draw the page (everything below the page config)."""
    page_header(
        "Layering",
        "Syntax low, semantics higher: every probing task of a model on one figure, each "
        "curve scaled to its own range, by relative depth.",
    )
    models = models_with_results()
    if not models:
        st.info(
            "No probing results yet. Make them with `python -m probing probe --model M --task T "
            "--out results/` for the tasks pos, deprel, dep-distance, supersense and wsd."
        )
        return
    picked = st.multiselect("Models", models, default=models[:2], key="layer_models")
    if not picked:
        st.info("Pick at least one model.")
        return
    stamp = tuple(sorted((p.name, p.stat().st_mtime_ns) for p in RESULTS_DIR.glob("*.json")))
    curves = {m: curves_for(m, stamp) for m in picked}
    st.plotly_chart(layering_figure(curves), key="layering_chart")
    st.caption(
        "Top: each task's test score per layer, rescaled so that its worst layer is 0 and its "
        "best 1 (bands: 95 % sentence-bootstrap intervals, rescaled alike). The scaling hides "
        "how much a task gains: a flat curve and a steep one look equally tall. Bottom: each "
        "task's centre of gravity (Tenney et al. 2019: the expected layer over the gains from "
        "layer to layer) with its 95 % interval: the run's own sentence bootstrap for the "
        "structural probe, elsewhere a conservative approximation from the per-layer intervals. "
        "Only intervals that do not overlap support saying one task peaks lower than another; "
        "overlapping ones support no order."
    )
    for model, cs in curves.items():
        pairs = supported_orderings(cs)
        missing = [label for t, _, label, _ in TASKS if t not in {c.task for c in cs}]
        text = "; ".join(f"{a} < {b}" for a, b in pairs) or "no ordering of tasks"
        st.markdown(f"**{model}**: the intervals support {text}.")
        if missing:
            st.caption(f"{model}: no results yet for {', '.join(missing)}.")
