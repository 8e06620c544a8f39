"""Next-sentence prediction: P(B follows A) from a pair head — the NSP and SOP heads trained
here on the frozen minilm-l6, the SOP head trained with minilm-l6's top 2 layers, or BERT's
own head from a BertForPreTraining checkpoint — and the NSP-vs-SOP measurement."""

from __future__ import annotations

import json

import streamlit as st

from probing import config
from probing.analyses.nsp import (
    NSP_CAVEAT,
    load_nsp_model,
    next_sentence_probability,
    nsp_available,
)
from probing.figures.course import nsp_bar
from probing.figures.nsp_sop import pair_head_accuracy_figure
from probing.models.pair_heads import PAIR_HEADS
from ui.common import friendly_errors
from ui.state import persist

DEFAULT_CHECKPOINT = "google-bert/bert-base-uncased"
DEFAULT_HEAD = "minilm-l6-nsp"
TRAINED_HERE = list(PAIR_HEADS)
DEMO_NEEDS = (
    f"BERT's own next-sentence head comes with a checkpoint that kept its pre-training heads, "
    f"such as {DEFAULT_CHECKPOINT} (BertForPreTraining, about 440 MB). This demo does not "
    "carry one and does not download models. To try it, run ContextLens on your own machine "
    "(see the README) with that checkpoint in the Hugging Face cache, or give a local folder "
    "holding it."
)
CLASS_LABELS = {"nsp": ("IsNext", "NotNext"), "sop": ("In order", "Swapped")}
SUMMARY = "nsp-sop/summary.json"


@st.cache_resource(show_spinner=False, max_entries=3)
def _nsp_model(name: str):
    return load_nsp_model(name, allow_paths=not config.demo_mode())


def _choose_model() -> str:
    """The head to use: a pick among what the demo can load, or a box for any name."""
    if config.demo_mode():
        # The demo loads no checkpoint a visitor names: it offers the heads trained here and
        # BERT's own when it has it, and says what BERT's own needs when it does not.
        options = TRAINED_HERE + ([DEFAULT_CHECKPOINT] if nsp_available(DEFAULT_CHECKPOINT) else [])
        if DEFAULT_CHECKPOINT not in options:
            st.info(DEMO_NEEDS)
        return st.selectbox("Pair head", options, key="nsp_demo_model")
    return st.text_input(
        "Pair head: minilm-l6-nsp or minilm-l6-sop (trained here on the frozen encoder), "
        "minilm-l6-sop-top2 (trained here with the encoder's top 2 layers), or a checkpoint "
        "with BERT's pre-training heads (BertForPreTraining)",
        key=persist("nsp_model", DEFAULT_HEAD, "nsp_model"),
        help=f"{', '.join(TRAINED_HERE)} work offline. For BERT's own head give a hub "
        f"id such as {DEFAULT_CHECKPOINT} (loaded from the local cache when offline) or a "
        "local folder.",
    ).strip()


def _measurement() -> None:
    """The committed NSP-vs-SOP measurement (``results/nsp-sop``), when present."""
    path = config.results_dir() / SUMMARY
    try:
        summary = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return
    st.markdown("**How the heads trained here fare on other kinds of negative** (test documents)")
    st.plotly_chart(pair_head_accuracy_figure(summary["accuracies"]), key="nsp-sop-accuracy")
    st.caption(
        "Each set is the same positives (a sentence and the next one) with one kind of "
        "negative; 95 % intervals from a bootstrap over test documents. The NSP and SOP "
        "heads read the frozen encoder; the SOP head with top 2 layers tuned was trained "
        "together with minilm-l6's layers 4 and 5 (models/minilm-l6-sop-top2/README.md). "
        "The differences, with Holm's correction, are in docs/course_objectives.md."
    )


def render() -> None:
    """The NSP section: a head, two sentences, P(B continues A); then the measurement."""
    st.subheader("Next-sentence prediction (BERT's second pre-training task)")
    st.caption(NSP_CAVEAT)
    limit = config.limits().max_chars
    name = _choose_model()
    a = st.text_input(
        "Sentence A", key=persist("nsp_a", "She opened the fridge.", "nsp_a"), max_chars=limit
    )
    b = st.text_input("Sentence B", key=persist("nsp_b", "It was empty.", "nsp_b"), max_chars=limit)
    if not name:
        st.info("Give a pair head or a checkpoint.")
        return
    with friendly_errors("Next-sentence prediction"):
        with st.spinner(f"Loading {name}…"):
            model = _nsp_model(name)
        if model.description:
            st.caption(f"{name}: {model.description} (see models/{name}/README.md).")
        elif name == DEFAULT_CHECKPOINT:
            st.caption(f"Checkpoint: {DEFAULT_CHECKPOINT} (BertForPreTraining).")
        res = next_sentence_probability(model, a, b)
        labels = CLASS_LABELS.get(model.task, CLASS_LABELS["nsp"])
        st.plotly_chart(nsp_bar(res.is_next, res.not_next, labels), key="nsp-bar")
        st.caption("What the model reads: " + " ".join(res.pieces))
    _measurement()
