"""Where each attention head looks: head view, model view, word-level maps, head statistics.

The view lives in :mod:`ui.views.attention`."""

import streamlit as st

from ui.views.attention import render

st.set_page_config(page_title="Attention · ContextLens", page_icon="🔎", layout="wide")
render()
