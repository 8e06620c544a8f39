"""Helpers for end-to-end tests: a real `streamlit run app.py` and Debian's headless Chromium."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CHROMIUM = os.environ.get("CONTEXTLENS_CHROMIUM", "/usr/bin/chromium")
# Without the background-networking flags Chromium keeps dialling out, which this closed
# network refuses; without --no-sandbox it will not start as root.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def streamlit_server(env: dict[str, str] | None = None, timeout: float = 90) -> Iterator[str]:
    """Start ``streamlit run app.py`` on 127.0.0.1 and yield its base URL."""
    port = free_port()
    full_env = {**os.environ, "OMP_WAIT_POLICY": "PASSIVE", "HF_HUB_OFFLINE": "1", **(env or {})}
    log = open(Path(tempfile.gettempdir()) / f"streamlit-e2e-{port}.log", "w")  # noqa: SIM115
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "streamlit",
            "run",
            "app.py",
            "--server.address",
            "127.0.0.1",
            "--server.port",
            str(port),
            "--server.headless",
            "true",
            "--browser.gatherUsageStats",
            "false",
        ],
        cwd=REPO,
        env=full_env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.time() + timeout
        while time.time() < deadline:
            if proc.poll() is not None:
                raise RuntimeError(f"streamlit exited early; see {log.name}")
            try:
                with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                time.sleep(0.5)
        else:
            raise TimeoutError("streamlit did not start")
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()
        Path(log.name).unlink(missing_ok=True)


BUSY_JS = """() => {
    const app = document.querySelector('[data-testid="stApp"]');
    return !app || app.getAttribute('data-test-script-state') === 'running'
        || !!document.querySelector('[data-testid="stSpinner"], [data-stale="true"]');
}"""


def wait_for_app(page, timeout_ms: int = 180_000) -> None:
    """Wait until the script run has finished: Streamlit marks its root with the script
    state; idle (and no spinner or stale element) for 1.5 s counts as finished."""
    page.wait_for_selector('[data-testid="stMainBlockContainer"]', timeout=timeout_ms)
    deadline = time.time() + timeout_ms / 1000
    quiet = 0
    while quiet < 3:
        if time.time() > deadline:
            raise TimeoutError("the app kept running")
        quiet = 0 if page.evaluate(BUSY_JS) else quiet + 1
        page.wait_for_timeout(500)


def exception_texts(page) -> list[str]:
    """Texts of Streamlit exception boxes (must be none) and raw tracebacks on the page."""
    boxes = page.locator('[data-testid="stException"]').all_inner_texts()
    body = page.inner_text("body")
    if "Traceback (most recent call last)" in body:
        boxes.append("traceback text in page")
    return boxes
