"""Server-side caps of the shared demo, applied and checked when the app starts.

The page's own size check runs only after Streamlit has accepted an upload, so in demo mode
the *server* must refuse over-cap uploads: ``server.maxUploadSize`` (MB) is what Streamlit's
upload endpoint enforces. ``deploy/run_demo.sh`` launches with it; :func:`enforce` checks
the running server's value at start-up and, if the launch forgot it, lowers it to the cap
(Streamlit reads the option on every upload request) and logs a warning.

Streamlit keeps a session's uploaded files in memory until the session ends, and any
number of them: a visitor could PUT many capped files straight to the upload endpoint.
:func:`enforce` also bounds each session's stored uploads to ``2 x max_upload_bytes``,
dropping that session's oldest files first (the page needs only the newest one), and frees
the uploads of sessions that are gone: Streamlit drops a closed tab's session from its
reconnect store after ``server.disconnectedSessionTTL`` without removing its files, so
without this they would stay in memory until the server restarts.
"""

from __future__ import annotations

import logging
import math
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

import streamlit as st

from probing import config

if TYPE_CHECKING:
    from streamlit.runtime.uploaded_file_manager import UploadedFileManager, UploadedFileRec

log = logging.getLogger("contextlens.demo")
SESSION_UPLOAD_FACTOR = 2  # a session may hold this many cap-sized uploads at once


def upload_cap_mb() -> int:
    """The demo's upload cap in whole MB (Streamlit's unit)."""
    return max(1, math.ceil(config.limits().max_upload_bytes / (1024 * 1024)))


def enforce() -> None:
    """In demo mode: the server's upload cap and per-session upload memory (see module doc)."""
    if config.demo_mode():
        _enforce_once(upload_cap_mb(), SESSION_UPLOAD_FACTOR * config.limits().max_upload_bytes)
        from streamlit.runtime import Runtime

        if Runtime.exists():
            runtime = Runtime.instance()
            free_closed_sessions(runtime.uploaded_file_mgr, runtime.is_active_session)


@st.cache_resource(show_spinner=False)
def _enforce_once(cap_mb: int, session_bytes: int) -> bool:
    from streamlit import config as st_config

    configured = st_config.get_option("server.maxUploadSize")
    if configured > cap_mb:
        log.warning(
            "demo mode: server.maxUploadSize was %s MB; lowered to the demo cap of %s MB "
            "(launch with deploy/run_demo.sh)",
            configured,
            cap_mb,
        )
        st_config.set_option("server.maxUploadSize", cap_mb, where_defined="ContextLens demo")
    _bound_uploads(session_bytes)
    return True


def _bound_uploads(session_bytes: int) -> None:
    from streamlit.runtime import Runtime

    if Runtime.exists():
        bound_session_uploads(Runtime.instance().uploaded_file_mgr, session_bytes)


def free_closed_sessions(mgr: UploadedFileManager, is_active: Callable[[str], bool]) -> list[str]:
    """Remove the uploaded files of every session that is no longer connected; returns
    their session ids."""
    storage = getattr(mgr, "file_storage", None)
    if storage is None:
        return []
    gone = [sid for sid in list(storage) if not is_active(sid)]
    for sid in gone:
        mgr.remove_session_files(sid)
    if gone:
        log.info("freed the uploads of %d closed session(s)", len(gone))
    return gone


def bound_session_uploads(mgr: UploadedFileManager, session_bytes: int) -> bool:
    """Wrap ``mgr.add_file`` so that no session keeps more than ``session_bytes`` of uploads
    (its oldest files are dropped first; the newest is always kept). Returns False when the
    manager is not Streamlit's in-memory one (then nothing is changed)."""
    add = getattr(mgr, "add_file", None)
    if add is None or not hasattr(mgr, "file_storage"):
        return False
    if getattr(add, "_contextlens_bounded", False):
        return True
    lock = threading.Lock()

    def add_file(session_id: str, file: UploadedFileRec) -> None:
        with lock:
            add(session_id=session_id, file=file)
            stored = mgr.file_storage.get(session_id, {})
            total = sum(len(f.data) for f in stored.values())
            for file_id in list(stored):  # oldest first (insertion order)
                if total <= session_bytes:
                    break
                if file_id != file.file_id:
                    total -= len(stored[file_id].data)
                    mgr.remove_file(session_id, file_id)

    add_file._contextlens_bounded = True  # type: ignore[attr-defined]
    mgr.add_file = add_file
    return True
