"""One gate for heavy work (feature extraction, probe fitting, UMAP) across all sessions.

Streamlit runs every session's script in its own thread of one process; without a gate, a
handful of users starting probes at once would each load features into memory together.
The gate is a process-wide semaphore sized by ``config.limits().heavy_jobs``; a session that
has to wait is told how many jobs are ahead of it.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

import streamlit as st

from probing.config import limits


@st.cache_resource(show_spinner=False)
def _gate() -> tuple[threading.BoundedSemaphore, list[int]]:
    # cache_resource: one semaphore per server process, shared by every session.
    return threading.BoundedSemaphore(limits().heavy_jobs), [0]


@contextlib.contextmanager
def heavy_job(label: str) -> Iterator[None]:
    """Run the body when a heavy-job slot is free; show a waiting message meanwhile."""
    sem, waiting = _gate()
    if sem.acquire(blocking=False):
        acquired = True
    else:
        waiting[0] += 1
        with st.spinner(f"{label}: waiting for {waiting[0]} other job(s) on this server…"):
            acquired = sem.acquire(timeout=600)
        waiting[0] -= 1
    if not acquired:
        st.error("The server is busy; please try again in a few minutes.")
        st.stop()
    try:
        yield
    finally:
        sem.release()
