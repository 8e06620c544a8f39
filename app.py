"""ContextLens (``streamlit run app.py``): the navigation, then the page the address names.

The pages and their order are :data:`ui.navigation.PAGES`; ``/`` is the home page
(:mod:`ui.views.home`). Every page runs through this script, so the sidebar's page list
(Streamlit's own) reads "Home" first however a page was reached.
"""

from __future__ import annotations

import streamlit as st

from ui import jobs, run_log
from ui.common import page_errors
from ui.site import navigation

jobs.prestart_worker()  # the first heavy job then finds its worker started
page = st.navigation(navigation(), expanded=True)
title = "ContextLens" if page.url_path == "" else f"{page.title} · ContextLens"
st.set_page_config(page_title=title, page_icon="🔎", layout="wide")
# page_errors: each page guards its own render too; this catches what a page script does
# before its guard (its imports), so that no page ever shows a traceback.
with run_log.timed(page.url_path), page_errors(page.title):  # timed: the load test's figures
    page.run()
