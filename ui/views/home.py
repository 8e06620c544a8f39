"""Home: what each page shows, the model picker, the model's card and the embedded models."""

from __future__ import annotations

import streamlit as st

from probing.models.registry import ENTRIES
from ui.common import get_encoder, model_picker, page_header, provenance_card
from ui.navigation import PAGES

INTRO = """
A **static** embedding gives *bank* one vector whatever the sentence; a **contextual** encoder
gives every occurrence its own vector, layer by layer. ContextLens lets you look, page by page:
"""
OUTRO = """
Pick a model in the sidebar; every page uses the same choice. The embedded defaults work
offline; real checkpoints load by Hugging Face hub id or from a local folder.
"""


def render() -> None:
    """Draw the home page (everything below the page config)."""
    page_header("ContextLens", "See how ELMo and BERT-family encoders represent words in context.")
    st.markdown(INTRO)
    for page in PAGES:
        st.markdown(f"- **{page.title}** — {page.blurb}")
    st.markdown(OUTRO)
    names = model_picker()
    if not names:
        st.info("Pick a model in the sidebar.")
    for name in names:
        encoder = get_encoder(name)
        if encoder is not None:
            provenance_card(encoder)

    others = [e for e in ENTRIES.values() if e.embedded and e.name not in names]
    if others:
        st.subheader("Also shipped with ContextLens")
        st.caption(
            "The embedded models work offline. Two were trained here, by ContextLens's own code, "
            "on a few million words: they show the methods, not what large pretrained models know."
        )
        for col, e in zip(st.columns(len(others)), others, strict=True):
            with col.container(border=True):
                st.markdown(f"**{e.name}**")
                st.caption(e.provenance)
                if e.how_to_get_real:
                    st.caption(f"The real thing: {e.how_to_get_real}")
