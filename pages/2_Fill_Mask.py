"""The Fill Mask page (the app lists it in ui/navigation.py)."""

from ui.common import page_errors
from ui.views.fill_mask import render

with page_errors("Fill Mask"):
    render()
