"""Sentence vectors by [CLS], mean and attention pooling; ELMo's forward and backward halves
next to BERT's layers; next-sentence prediction.

The view lives in :mod:`ui.views.course_notes`."""

import streamlit as st

from ui.views.course_notes import render

st.set_page_config(page_title="Course Notes · ContextLens", page_icon="🔎", layout="wide")
render()
