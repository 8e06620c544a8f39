"""The Interventions page (the app lists it in ui/navigation.py)."""

from ui.views.interventions import render

render()
