"""The Layering page: every probing task of a model on one figure, by relative depth.

Reads the committed results (``results/*.json``, made by ``python -m probing probe``), so it
opens at once; the drawing is :mod:`probing.figures.layering`.
"""

from __future__ import annotations

import streamlit as st

from probing import config
from probing.claims.sources import layering_claim
from probing.figures.layering import TASKS, layering_figure, load_curves
from ui.common import model_picker, page_header

RESULTS_DIR = config.results_dir()


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
def curves_for(model: str, stamp: tuple) -> tuple[list, list[str]]:  # stamp: files' mtimes
    """The model's curves, and the names of its results files that could not be read."""
    unreadable: list[str] = []
    return load_curves(RESULTS_DIR, model, unreadable), unreadable


@st.cache_data(show_spinner=False)
def claim_for(model: str, stamp: tuple) -> tuple[dict | None, list[str]]:  # stamp: as curves_for
    """The model's task-ordering claim (as ``results/claims.json`` holds it) and the tasks
    left out for lack of per-sentence counts."""
    claim, unscored = layering_claim(RESULTS_DIR, model)
    return (claim.to_record() if claim else None), unscored


def picked_with_results(models: list[str]) -> list[str]:
    """The sidebar's models that have committed results; says which have none."""
    names = model_picker(default=models[:3], max_models=3, extra=models)
    picked = [m for m in names if m in models]
    if len(picked) < len(names) or not names:
        lacking = [m for m in names if m not in models]
        st.info(
            (
                f"No committed probing results for {', '.join(lacking)}. "
                if lacking
                else "Pick a model in the sidebar. "
            )
            + f"Models with results: {', '.join(models)}."
        )
    return picked


def render() -> None:
    """Draw the page (everything below the page config)."""
    page_header(
        "Layering",
        "Where in the model each probing task is found: every probing task of a model on one "
        "figure, each curve scaled to its own range, by relative depth; under it, the claims "
        "the comparison engine makes about the order of the tasks.",
    )
    models = models_with_results()
    if not models:
        st.info(
            "No probing results yet. Make them with `python -m probing probe --model M --task T "
            "--out results/ --overwrite` for the tasks pos, deprel, dep-distance, supersense and wsd."
        )
        return
    picked = picked_with_results(models)
    if not picked:
        return
    stamp = tuple(sorted((p.name, p.stat().st_mtime_ns) for p in RESULTS_DIR.glob("*.json")))
    loaded = {m: curves_for(m, stamp) for m in picked}
    curves = {m: c for m, (c, _) in loaded.items()}
    if bad := [name for _, names in loaded.values() for name in names]:
        st.warning(
            f"Could not read {', '.join(bad)} (truncated, or not a results file): the "
            "page shows the other results. Make the file again with `python -m probing "
            "probe`."
        )
    st.plotly_chart(layering_figure(curves), key="layering_chart")
    st.caption(
        "Top: each task's test score per layer, rescaled so that its worst layer is 0 and its "
        "best 1 (bands: 95 % sentence-bootstrap intervals, rescaled alike). The scaling hides "
        "how much a task gains: a flat curve and a steep one look equally tall. Bottom: each "
        "task's centre of gravity (Tenney et al. 2019: the expected layer over the gains from "
        "layer to layer) with its 95 % interval: the bootstrap of the run's stored per-sentence "
        "scores (results/sentence-scores/) where it has them, elsewhere a conservative "
        "approximation from the per-layer intervals. "
        "The order of two tasks is not read off two intervals: the sentences under the "
        "figure are the claims the comparison engine makes from the paired difference of "
        "the two centres of gravity (bootstrap over test sentences and seeds, Holm's "
        "correction over all of a model's task pairs), the same claims as docs/results.md."
    )
    for model, cs in curves.items():
        claim, unscored = claim_for(model, stamp)
        missing = [label for t, _, label, _ in TASKS if t not in {c.task for c in cs}]
        if claim:
            text = claim["text"]  # starts with the model's name: shown in bold
            st.markdown(f"**{model}**{text[len(model) :]}" if text.startswith(model) else text)
            st.caption(f"Family: {claim['family']}; correction: {claim['correction']}.")
        else:
            st.markdown(f"**{model}**: no pair of tasks has stored per-sentence counts to compare.")
        if missing:
            st.caption(f"{model}: no results yet for {', '.join(missing)}.")
        if unscored:
            st.caption(
                f"{model}: no per-sentence scores stored for {', '.join(unscored)}, "
                "so no comparison with them is stated."
            )
