"""Committed result files read by the pages: parsed once per file version, shared by sessions."""

from __future__ import annotations

import json
from pathlib import Path

import streamlit as st


@st.cache_data(show_spinner=False)
def _parsed(path: str, mtime: float) -> dict | None:  # mtime: a changed file is read again
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def read_json(path: Path) -> dict | None:
    """The JSON object of ``path``; None when it is missing or unreadable."""
    try:
        return _parsed(str(path), path.stat().st_mtime)
    except OSError:
        return None
