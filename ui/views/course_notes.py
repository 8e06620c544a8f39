"""The Course Notes page: sentence pooling, ELMo's directions, next-sentence prediction,
what fine-tuning changes."""

from __future__ import annotations

import streamlit as st

from ui.common import model_picker, page_header
from ui.views import elmo_directions, finetuning, nsp, sentence_pooling


def render() -> None:
    """Draw the page (everything below the page config)."""
    page_header(
        "Course Notes",
        "What the course note teaches, made visible: sentence vectors and pooling, ELMo's two "
        "one-way LMs vs BERT's fused context, next-sentence prediction.",
    )
    models = model_picker()
    pooling, directions, pairs, tuning = st.tabs(
        ["Sentence pooling", "ELMo directions", "Next-sentence prediction", "Fine-tuning"]
    )
    with pooling:
        sentence_pooling.render(models)
    with directions:
        elmo_directions.render(models)
    with pairs:
        nsp.render()
    with tuning:
        finetuning.render()
