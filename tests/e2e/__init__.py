"""A real `streamlit run app.py` server, most tests in headless Chromium (marked browser, slow)."""
