"""How alike layers are, within a model and across two: linear CKA heat maps.

Committed results first (``results/cka``, made by ``python -m probing cka``); the sidebar's
models on a UD-EWT sample on request. Computation in ``probing.analyses.cka``, drawing in
``probing.figures.cka``.
"""

from __future__ import annotations

import streamlit as st

from probing.analyses.cka import load_result, shipped_results
from probing.analyses.params import CkaParams
from probing.figures.cka import cka_figure
from ui import tasks
from ui.common import (
    friendly_errors,
    get_encoder,
    model_picker,
    page_header,
)
from ui.jobs import heavy_job, offload
from ui.settings_inputs import setting_number
from ui.state import one_of, persist


@st.cache_resource(show_spinner=False)
def computed() -> dict:
    """(model A, model B, words) -> CKAResult, shared by the sessions of this process."""
    return {}


def render() -> None:
    """Draw the page (everything below the page config)."""
    page_header(
        "Layer Similarity",
        "How alike the layers of one model are, and which layer of one model is like which "
        "layer of another: linear CKA (Kornblith et al. 2019) on the same UD-EWT words.",
    )
    st.markdown(
        "CKA compares two representations of the same words up to rotation and overall scale: "
        "1 means the same geometry, 0 unrelated. Unbiased HSIC estimator; 95 % intervals from "
        "resampling sentences (hover a cell)."
    )
    shipped_view()
    st.divider()
    on_request_view()


def shipped_view() -> None:
    """The committed results, one at a time."""
    # Two models first (the headline comparison), then each model with itself.
    paths = sorted(
        shipped_results(), key=lambda p: p.stem.split("__")[0][4:] == p.stem.split("__")[1]
    )
    if not paths:
        st.info(
            "No committed CKA results: run `python -m probing cka --out results/cka --overwrite`."
        )
        return
    names = [p.stem.removeprefix("cka_").replace("__", " × ") for p in paths]
    picked = st.radio(
        "Committed results",
        names,
        horizontal=True,
        key=persist("cka_shipped", names[0], "pair", valid=one_of(names)),
    )
    with friendly_errors("CKA result"):
        result = load_result(paths[names.index(picked)])
        st.plotly_chart(cka_figure(result), key="cka_shipped_chart", width="content")


def on_request_view() -> None:
    """CKA for the sidebar's model(s), computed when asked."""
    models = model_picker()
    if not models:
        st.info("Pick one or two models in the sidebar to compare their layers.")
        return
    pair = " × ".join(models if len(models) > 1 else [models[0], models[0]])
    st.markdown(
        f"**Your models:** {pair} (the sidebar's choice; one model is compared with itself)."
    )
    n_words = setting_number(
        CkaParams,
        "n_words",
        "Words (whole UD-EWT dev sentences)",
        key="cka_words",
        param="words",
        default=1000,
        step=100,
    )
    key = (models[0], models[-1] if len(models) > 1 else None, n_words)
    results = computed()
    if st.button(f"Compute CKA over {n_words} words", key="cka_run", type="primary"):
        if any(get_encoder(m) is None for m in models):  # a load failure is shown here
            return
        bar = st.progress(0.0, text="Encoding the words…")
        # In a worker process (its own copy of the models), not in the server's threads.
        with friendly_errors("CKA"), heavy_job("Layer similarity (CKA)"):
            results[key] = offload(
                tasks.cka_compare,
                models[0],
                models[1] if len(models) > 1 else None,
                n_words,
                200,
                progress=lambda d, t: bar.progress(d / t, text=f"{d}/{t} layer pairs"),
            )
        bar.empty()
    if key in results:
        st.plotly_chart(cka_figure(results[key]), key="cka_run_chart", width="content")
    else:
        st.caption("Press the button: encoding and 200 bootstrap draws take 10-60 s on a CPU.")
