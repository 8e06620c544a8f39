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


def committed_claim(results_dir: Path, claim_id: str) -> dict | None:
    """One claim of ``results/claims.json`` (written by ``results/write_results.py``) by id,
    as docs/results.md states it; None when there is none."""
    claims = read_json(Path(results_dir) / "claims.json")
    if not isinstance(claims, list):
        return None
    return next((c for c in claims if c.get("id") == claim_id), None)
