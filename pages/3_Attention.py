"""The Attention page (the app lists it in ui/navigation.py)."""

from ui.views.attention import render

render()
