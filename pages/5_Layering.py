"""The Layering page (the app lists it in ui/navigation.py)."""

from ui.views.layering import render

render()
