"""The Report page (the app lists it in ui/navigation.py)."""

from ui.common import page_errors
from ui.views.report import render

with page_errors("Report"):
    render()
