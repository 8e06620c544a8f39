"""The app's page list for ``st.navigation``: the home page, then :data:`ui.navigation.PAGES`.

Apart from :mod:`ui.navigation` because the home page reads ``PAGES`` (its list of pages):
kept together, the two modules imported each other.
"""

from __future__ import annotations

import streamlit as st

from ui.common import guarded
from ui.navigation import PAGES
from ui.views import home


def navigation() -> list:
    """``st.Page`` objects for ``st.navigation``: the home page (``/``), then :data:`PAGES`."""
    home_page = st.Page(guarded(home.render, "Home"), title="Home", url_path="home", default=True)
    return [home_page] + [st.Page(p.script, title=p.title, url_path=p.url_path) for p in PAGES]
