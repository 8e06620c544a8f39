"""ContextLens: the entry point. Streamlit's navigation with "Home" first, then the pages.

Each page stays a short script in ``pages/`` (page config + one ``render()`` call), so a page
also runs on its own; here they are listed under the titles and addresses Streamlit's
``pages/`` folder gave them (``/Static_vs_Contextual``…), so direct links keep working.
"""

from __future__ import annotations

import streamlit as st

from ui.common import page_files
from ui.views import home

st.set_page_config(page_title="ContextLens", page_icon="🔎", layout="wide")
pages = [st.Page(home.render, title="Home", url_path="home", default=True)]
pages += [
    st.Page(str(path), title=title, url_path=path.stem.split("_", 1)[-1])
    for path, title in page_files()
]
st.navigation(pages).run()
