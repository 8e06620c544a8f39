"""The Interventions page (the app lists it in ui/navigation.py)."""

from ui.common import page_errors
from ui.views.interventions import render

with page_errors("Interventions"):
    render()
