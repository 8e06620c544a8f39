"""The Attention page (the app lists it in ui/navigation.py)."""

from ui.common import page_errors
from ui.views.attention import render

with page_errors("Attention"):
    render()
