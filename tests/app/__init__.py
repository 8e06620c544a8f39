"""The pages through streamlit.testing AppTest, and the ui/ helpers (marked slow)."""
