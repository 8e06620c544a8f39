"""The Probing page (the app lists it in ui/navigation.py)."""

from ui.common import page_errors
from ui.views.probing_page import render

with page_errors("Probing"):
    render()
