"""ContextLens entry point: the navigation over the pages, and the home page.

The home page says what each page shows and carries the model picker and the model's card.
The pages in ``pages/`` are listed explicitly (``st.navigation``) so the home page is
called "Home" in the sidebar, not after this file.
"""

from __future__ import annotations

import streamlit as st

from ui.common import (
    get_encoder,
    list_pages,
    model_picker,
    page_files,
    page_header,
    provenance_card,
)

INTRO = """
A **static** embedding gives *bank* one vector whatever the sentence; a **contextual** encoder
gives every occurrence its own vector, layer by layer. ContextLens lets you look, page by page:
"""
OUTRO = """
Pick a model in the sidebar; every page uses the same choice. The embedded defaults work
offline; real checkpoints load by Hugging Face hub id or from a local folder.
"""


def home() -> None:
    """The home page."""
    page_header("ContextLens", "See how ELMo and BERT-family encoders represent words in context.")
    st.markdown(INTRO)
    for title, blurb in list_pages():
        st.markdown(f"- **{title}** — {blurb}")
    st.markdown(OUTRO)
    names = model_picker()
    if not names:
        st.info("Pick a model in the sidebar.")
    for name in names:
        encoder = get_encoder(name)
        if encoder is not None:
            provenance_card(encoder)


st.set_page_config(page_title="ContextLens", page_icon="🔎", layout="wide")
pages = [st.Page(home, title="Home", default=True)]
pages += [st.Page(str(path), title=title) for path, title in page_files()]
st.navigation(pages).run()
