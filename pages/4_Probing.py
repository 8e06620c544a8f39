"""The Probing page (the app lists it in ui/navigation.py)."""

from ui.views.probing_page import render

render()
