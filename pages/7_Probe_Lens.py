"""The Probe Lens page (the app lists it in ui/navigation.py)."""

from ui.views.probe_lens import render

render()
