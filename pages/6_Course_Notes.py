"""The Course Notes page (the app lists it in ui/navigation.py)."""

from ui.views.course_notes import render

render()
