"""The Static vs Contextual page (the app lists it in ui/navigation.py)."""

from ui.views.static_vs_contextual import render

render()
