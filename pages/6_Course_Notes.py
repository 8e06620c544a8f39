"""The Course Notes page (the app lists it in ui/navigation.py)."""

from ui.common import page_errors
from ui.views.course_notes import render

with page_errors("Course Notes"):
    render()
