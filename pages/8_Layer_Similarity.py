"""How alike layers are, within a model and across two (linear CKA).

The view lives in :mod:`ui.views.layer_similarity`."""

import streamlit as st

from ui.views.layer_similarity import render

st.set_page_config(page_title="Layer Similarity · ContextLens", page_icon="🔎", layout="wide")
render()
