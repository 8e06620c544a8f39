"""ContextLens home page: what each page shows, the model picker, the model's card and what
the embedded models are (drawn by :mod:`ui.views.home`).

The pages in ``pages/`` are Streamlit's multipage pages. The sidebar's page list is drawn by
:func:`ui.common.page_header` on every page (Streamlit's own list is turned off in
``.streamlit/config.toml``), so that it reads "Home" first however a page was reached: a
direct link to a page runs that page's script, not this one.
"""

from __future__ import annotations

import streamlit as st

from ui.views import home

st.set_page_config(page_title="ContextLens", page_icon="🔎", layout="wide")
home.render()
