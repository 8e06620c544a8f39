"""Next-sentence prediction: P(IsNext) from BERT's pre-training head, with the caveat."""

from __future__ import annotations

import streamlit as st

from probing import config
from probing.analyses.nsp import (
    NSP_CAVEAT,
    load_nsp_model,
    next_sentence_probability,
    nsp_available,
)
from probing.figures.course import nsp_bar
from ui.common import friendly_errors
from ui.state import persist

DEFAULT_CHECKPOINT = "google-bert/bert-base-uncased"
DEMO_NEEDS = (
    f"Next-sentence prediction needs a checkpoint that kept BERT's pre-training heads, such as "
    f"{DEFAULT_CHECKPOINT} (BertForPreTraining, about 440 MB). This demo does not carry one "
    "and does not download models. To try it, run ContextLens on your own machine (see the "
    "README) with that checkpoint in the Hugging Face cache, or give a local folder holding it."
)


@st.cache_resource(show_spinner=False, max_entries=2)
def _nsp_model(name: str):
    return load_nsp_model(name, allow_paths=not config.demo_mode())


def render() -> None:
    """The NSP section: a checkpoint box, two sentences, P(IsNext)."""
    st.subheader("Next-sentence prediction (BERT's second pre-training task)")
    st.caption(NSP_CAVEAT)
    limit = config.limits().max_chars
    if config.demo_mode():
        # The demo loads no checkpoint a visitor names: it offers the default when it has
        # it, and otherwise says what the tab needs instead of a box that cannot work.
        if not nsp_available(DEFAULT_CHECKPOINT):
            st.info(DEMO_NEEDS)
            return
        name = DEFAULT_CHECKPOINT
        st.caption(f"Checkpoint: {DEFAULT_CHECKPOINT} (BertForPreTraining).")
    else:
        name = st.text_input(
            "Checkpoint with BERT's pre-training heads (BertForPreTraining)",
            key=persist("nsp_model", DEFAULT_CHECKPOINT, "nsp_model"),
            help="A hub id (loaded from the local cache when offline) or a local folder.",
        ).strip()
    a = st.text_input(
        "Sentence A", key=persist("nsp_a", "She opened the fridge.", "nsp_a"), max_chars=limit
    )
    b = st.text_input("Sentence B", key=persist("nsp_b", "It was empty.", "nsp_b"), max_chars=limit)
    if not name:
        st.info("Give a checkpoint.")
        return
    with friendly_errors("Next-sentence prediction"):
        with st.spinner(f"Loading {name}…"):
            model = _nsp_model(name)
        res = next_sentence_probability(model, a, b)
        st.plotly_chart(nsp_bar(res.is_next, res.not_next), key="nsp-bar")
        st.caption("What the model reads: " + " ".join(res.pieces))
