"""The Layer Similarity page (the app lists it in ui/navigation.py)."""

from ui.common import page_errors
from ui.views.layer_similarity import render

with page_errors("Layer Similarity"):
    render()
