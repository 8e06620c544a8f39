"""The layering at a glance: every probing task of a model on one figure, by relative depth.

The view lives in :mod:`ui.views.layering`."""

import streamlit as st

from ui.views.layering import render

st.set_page_config(page_title="Layering · ContextLens", page_icon="🔎", layout="wide")
render()
