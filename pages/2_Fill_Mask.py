"""What a masked-language model guesses for each [MASK], and at which layer it knows.

The view lives in :mod:`ui.views.fill_mask`."""

import streamlit as st

from ui.views.fill_mask import render

st.set_page_config(page_title="Fill Mask · ContextLens", page_icon="🔎", layout="wide")
render()
