"""The probe lens: every trained probe applied to your sentence, at every layer.

The view lives in :mod:`ui.views.probe_lens`."""

import streamlit as st

from ui.views.probe_lens import render

st.set_page_config(page_title="Probe Lens · ContextLens", page_icon="🔎", layout="wide")
render()
