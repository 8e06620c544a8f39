"""The Fill Mask page (the app lists it in ui/navigation.py)."""

from ui.views.fill_mask import render

render()
