"""The Static vs Contextual page (the app lists it in ui/navigation.py)."""

from ui.common import page_errors
from ui.views.static_vs_contextual import render

with page_errors("Static vs Contextual"):
    render()
