"""Static vs Contextual: one vector per word type, or one per occurrence — compare a word's occurrences layer by layer, see its senses separate, measure contextuality.

The view lives in :mod:`ui.views.static_vs_contextual`."""

import streamlit as st

from ui.views.static_vs_contextual import render

st.set_page_config(page_title="Static vs Contextual · ContextLens", page_icon="🔎", layout="wide")
render()
