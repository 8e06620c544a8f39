"""The Layer Similarity page (the app lists it in ui/navigation.py)."""

from ui.views.layer_similarity import render

render()
