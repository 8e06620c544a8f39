"""Plotly figure builders shared by the pages and the CLI (one module per analysis).

Figure code takes the library's results (arrays, dataclasses) and returns
``plotly.graph_objects.Figure`` objects; it never imports Streamlit.
"""
