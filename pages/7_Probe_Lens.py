"""The Probe Lens page (the app lists it in ui/navigation.py)."""

from ui.common import page_errors
from ui.views.probe_lens import render

with page_errors("Probe Lens"):
    render()
