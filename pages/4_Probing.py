"""Probing: what each layer knows — linear probes for part of speech, supersense and word sense on every layer, with control tasks, baselines and the scalar mix.

The view lives in :mod:`ui.views.probing_page`."""

import streamlit as st

from ui.views.probing_page import render

st.set_page_config(page_title="Probing · ContextLens", page_icon="🔎", layout="wide")
render()
