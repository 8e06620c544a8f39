"""Timing of each page script run, for the load test: ``CONTEXTLENS_RUN_LOG=FILE`` appends
one JSON line per run (page, monotonic start, wall seconds, the run thread's CPU seconds, how
it ended). Off unless the server's operator sets the variable; nothing here reads user input.

The load test's click latency is measured in browsers that, on one test machine, share the
cores with the server; this log gives the server's own part of each click.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
from collections.abc import Iterator

_LOCK = threading.Lock()


@contextlib.contextmanager
def timed(page: str) -> Iterator[None]:
    """Time the page script run inside the block (reruns and ``st.stop`` end it early too)."""
    path = os.environ.get("CONTEXTLENS_RUN_LOG")
    if not path:
        yield
        return
    start, cpu, ended = time.monotonic(), time.thread_time(), "finished"
    try:
        yield
    except BaseException as exc:  # Streamlit's stop/rerun exceptions: logged, then re-raised
        ended = type(exc).__name__
        raise
    finally:
        line = {
            "page": page,
            "start": start,
            "seconds": time.monotonic() - start,
            "thread_cpu_s": time.thread_time() - cpu,
            "ended": ended,
        }
        with _LOCK, open(path, "a", encoding="utf-8") as f:
            f.write(json.dumps(line) + "\n")
