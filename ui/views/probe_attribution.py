"""The Probe Lens's "Which words does a label rest on?" section: per-word attributions of a
linear probe's label on one word of the sentence, at one layer, for a chosen method.

Computation in ``probing.attribution.probe_attribution``; drawing in
``probing.figures.probe_attribution``. Off until asked (IG costs a second or so).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import streamlit as st

from probing.attribution.integrated_gradients import DEFAULT_STEPS
from probing.attribution.probe_attribution import (
    probe_gradient_x_input,
    probe_integrated_gradients,
)
from probing.attribution.probe_case import prepare_probe_case
from probing.figures.probe_attribution import METHOD_LABELS, probe_word_bars_figure
from ui.common import friendly_errors, md_text
from ui.state import as_bool, one_of, persist

if TYPE_CHECKING:
    import numpy as np

    from probing.probes.saved import SavedProbes

# method -> (attribution, IG baseline)
METHODS: dict[str, tuple[str, str]] = {
    "integrated_gradients": ("integrated_gradients", "mask"),
    "integrated_gradients_pad": ("integrated_gradients", "pad"),
    "gradient_x_input": ("gradient_x_input", ""),
}


def word_probes(probes: dict[str, SavedProbes], dim: int) -> list[str]:
    """Tasks whose saved probe is linear on one word's vector (not an edge probe)."""
    return [
        t
        for t, p in probes.items()
        if p.kind == "linear" and p.layers and p.tensors[f"{p.layers[0]}.coef"].shape[1] == dim
    ]


@st.cache_data(max_entries=32, show_spinner=False)
def _scores(
    model: str,
    task: str,
    words: tuple[str, ...],
    word: int,
    layer: int,
    method: str,
    _encoder: object,
    _probes: SavedProbes,
) -> tuple[str, np.ndarray, str]:
    """(label, word scores, a note on f) for one case, cached per (model, case, method)."""
    case = prepare_probe_case(_encoder, list(words), word, _probes, layer)
    kind, baseline = METHODS[method]
    if kind == "integrated_gradients":
        ig = probe_integrated_gradients(_encoder, case, baseline=baseline, steps=DEFAULT_STEPS)
        note = (
            f"Integrated Gradients ({DEFAULT_STEPS} steps, every word replaced by "
            f"[{baseline.upper()}] at the path's start): f(x) − f(x′) = "
            f"{ig.f_input - ig.f_baseline:.3f}, completeness gap {ig.delta:+.1e}."
        )
        return case.label, ig.words, note
    return case.label, case.to_words(probe_gradient_x_input(_encoder, case)), "x · ∂f/∂x."


def attribution_section(encoder, name: str, words: list[str], probes: dict) -> None:
    """The toggle, the controls (all in the address) and the bars."""
    tasks = word_probes(probes, int(encoder.info.dim)) if encoder.info.objective == "masked" else []
    if not tasks or not words:
        return
    st.subheader("Which words does a label rest on?")
    if not st.toggle(
        "Attribute a probe's label to the input words",
        key=persist("lens_why_on", False, "why", as_bool),
        help="Integrated Gradients or gradient × input of the probe's logit for its answer on "
        "one word, through the model up to the probe's layer, to every input word.",
    ):
        return
    a, b, c, d = st.columns([1, 1, 2, 2])
    task = a.selectbox(
        "Probe",
        tasks,
        key=persist("lens_why_task", tasks[0], "why_task", valid=one_of(tasks)),
    )
    layers = probes[task].layers
    layer = b.selectbox(
        "Layer",
        layers,
        key=persist("lens_why_layer", layers[len(layers) // 2], "why_layer", int, one_of(layers)),
    )
    indices = list(range(len(words)))
    first = next((i for i, w in enumerate(words) if w.isalpha()), 0)
    word = c.selectbox(
        "Word",
        indices,
        format_func=lambda i: f"{i}: {words[i]}",
        key=persist("lens_why_word", first, "why_word", int, one_of(indices)),
    )
    methods = list(METHODS)
    method = d.selectbox(
        "Method",
        methods,
        format_func=METHOD_LABELS.get,
        key=persist("lens_why_method", methods[0], "why_method", valid=one_of(methods)),
    )
    with friendly_errors("Attribution"), st.spinner("Attributing…"):
        label, scores, note = _scores(
            name, task, tuple(words), word, layer, method, encoder, probes[task]
        )
        base = METHODS[method][1]
        st.plotly_chart(
            probe_word_bars_figure(words, scores, word, label, layer, method, base),
            key="lens_why_bars",
            width="content",
        )
        st.caption(
            f"Explained: the {task} probe's logit for its answer “{md_text(label)}” on "
            f"“{md_text(words[word])}”, read at layer {layer}; the model runs up to that layer "
            f"only. A word's score is the sum over its pieces. {note} Faithfulness of the "
            "methods on UD-EWT: `results/attribution/probe/probe_faithfulness.json`."
        )
