"""Streamlit helpers shared by the pages (the library in ``probing`` never imports this)."""
