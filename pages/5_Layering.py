"""The Layering page (the app lists it in ui/navigation.py)."""

from ui.common import page_errors
from ui.views.layering import render

with page_errors("Layering"):
    render()
