"""Interventions: does the model use what the probe finds? Erasure, agreement, activation
patching and head ablation.

The view lives in :mod:`ui.views.interventions`."""

import streamlit as st

from ui.views.interventions import render

st.set_page_config(page_title="Interventions · ContextLens", page_icon="🔎", layout="wide")
render()
