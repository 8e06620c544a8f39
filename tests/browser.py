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
# Screenshots of the end-to-end tests (``CONTEXTLENS_SCREENSHOTS=docs/screenshots`` refreshes
# the README's).
SHOTS = Path(
    os.environ.get("CONTEXTLENS_SCREENSHOTS")
    or Path(tempfile.gettempdir()) / "contextlens-screenshots"
)
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


APP_LAUNCH = [
    sys.executable,
    "-m",
    "streamlit",
    "run",
    "app.py",
    "--server.headless",
    "true",
    "--browser.gatherUsageStats",
    "false",
]


@contextlib.contextmanager
def streamlit_server(
    env: dict[str, str] | None = None,
    timeout: float = 90,
    launch: list[str] | None = None,
    log_path: Path | None = None,
) -> Iterator[str]:
    """Start ``launch`` (default ``streamlit run app.py``) on 127.0.0.1 and yield its base URL.

    The server's output goes to ``log_path`` when given (kept), else to a temporary file.
    """
    port = free_port()
    full_env = {**os.environ, "OMP_WAIT_POLICY": "PASSIVE", "HF_HUB_OFFLINE": "1", **(env or {})}
    log = open(log_path or Path(tempfile.gettempdir()) / f"streamlit-e2e-{port}.log", "w")  # noqa: SIM115
    proc = subprocess.Popen(
        [*(launch or APP_LAUNCH), "--server.address", "127.0.0.1", "--server.port", str(port)],
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
        if log_path is None:
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


def shoot(page, name: str) -> None:
    """Screenshot the whole page into :data:`SHOTS` as ``name.png``: Streamlit scrolls inside
    its main section, so the viewport is first made as tall as that section's content."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    height = page.evaluate(
        """() => Math.max(...Array.from(document.querySelectorAll(
            '[data-testid="stMain"], [data-testid="stAppViewContainer"], section.main'))
            .map(e => e.scrollHeight), document.body.scrollHeight)"""
    )
    width = page.viewport_size["width"]
    page.set_viewport_size({"width": width, "height": min(int(height) + 40, 6000)})
    page.wait_for_timeout(800)  # plotly re-lays out on resize
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)
    page.set_viewport_size({"width": width, "height": 1000})


def plot_count(page, at_least: int = 1, timeout_ms: int = 30_000) -> int:
    """Plotly figures on the page, waiting up to ``timeout_ms`` for ``at_least`` of them:
    plotly draws after Streamlit's script run has ended, so a count taken the moment the
    app turns idle can miss a figure still being drawn (seen once in a full CI run)."""
    deadline = time.time() + timeout_ms / 1000
    while True:
        n = page.locator(".js-plotly-plot").count()
        if n >= at_least or time.time() > deadline:
            return n
        page.wait_for_timeout(250)


def exception_texts(page) -> list[str]:
    """Texts of Streamlit exception boxes (must be none) and raw tracebacks on the page."""
    boxes = page.locator('[data-testid="stException"]').all_inner_texts()
    body = page.inner_text("body")
    if "Traceback (most recent call last)" in body:
        boxes.append("traceback text in page")
    return boxes


# Text of a plotly figure that must not overlap: titles, subplot titles and annotations,
# legend entries, axis titles and tick labels (heatmap cell texts are inside the plot area
# by design and are not checked).
OVERLAP_JS = """() => {
    const sel = ['.gtitle', '.g-xtitle text', '.g-ytitle text', '.xtick text', '.ytick text',
                 '.legendtext', '.annotation-text', '.cbtitle text', '.cbaxis text'];
    const out = [];
    document.querySelectorAll('.js-plotly-plot').forEach((plot, p) => {
        const items = [];
        sel.forEach((s) => plot.querySelectorAll(s).forEach((el) => {
            const r = el.getBoundingClientRect();
            const text = (el.textContent || '').trim();
            if (r.width > 0 && r.height > 0 && text) items.push({s, text, r});
        }));
        const shrink = 1;  // a pixel of anti-aliasing is no overlap
        for (let i = 0; i < items.length; i++) for (let j = i + 1; j < items.length; j++) {
            // neighbouring tick labels of one axis are plotly's to space (it rotates them);
            // their axis-aligned boxes overlap when rotated although the text does not
            if (items[i].s === items[j].s && items[i].s.endsWith('tick text')) continue;
            const a = items[i].r, b = items[j].r;
            const w = Math.min(a.right, b.right) - Math.max(a.left, b.left);
            const h = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
            if (w > shrink && h > shrink) out.push(
                `plot ${p}: ${items[i].s} "${items[i].text}" overlaps ${items[j].s} "${items[j].text}"`);
        }
        // labels written inside the plot must not sit on the data's markers either
        const points = Array.from(plot.querySelectorAll('.scatterlayer .point'))
            .map((el) => el.getBoundingClientRect()).filter((r) => r.width > 0);
        items.filter((it) => it.s === '.annotation-text').forEach((it) => {
            if (points.some((b) => Math.min(it.r.right, b.right) - Math.max(it.r.left, b.left) > 1
                    && Math.min(it.r.bottom, b.bottom) - Math.max(it.r.top, b.top) > 1))
                out.push(`plot ${p}: annotation "${it.text}" sits on a data marker`);
        });
    });
    return out;
}"""


def text_overlaps(page) -> list[str]:
    """Pairs of text elements of the page's plotly figures whose boxes overlap."""
    return page.evaluate(OVERLAP_JS)


# Figures too small to read: a plot narrower or shorter than a person can read, any text of
# it (tick labels, titles, legend, heatmap cell labels) under 9 px, a data area squeezed by
# its labels (Course Notes' heatmaps were ~60 px wide) or by its legend (a single plot under
# 80 px high or 35 % of its figure's height), or a label cut off at the figure's edge (their
# row labels read "eposited cash at the ban…").
MIN_SIZE_JS = """([minWidth, minHeight, minFont]) => {
    const out = [];
    document.querySelectorAll('.js-plotly-plot').forEach((plot, p) => {
        const box = plot.getBoundingClientRect();
        if (box.width === 0 || box.height === 0) return;  // in a closed expander or tab
        if (box.width < minWidth || box.height < minHeight)
            out.push(`plot ${p}: ${Math.round(box.width)} x ${Math.round(box.height)} px`);
        // the data area itself: labels must not squeeze the cells to a sliver
        const areas = plot.querySelectorAll('.nsewdrag');
        areas.forEach((area) => {
            const a = area.getBoundingClientRect();
            if (a.width > 0 && (a.width < 120 || a.width < 0.25 * box.width))
                out.push(`plot ${p}: data area ${Math.round(a.width)} px wide of ${Math.round(box.width)}`);
            // nor squash a single plot flat (a 28-entry legend left a line chart 118 px high
            // of 420; subplots stacked in rows are each a fraction of the figure by design)
            if (areas.length === 1 && a.height > 0
                    && (a.height < 80 || a.height < 0.35 * box.height))
                out.push(`plot ${p}: data area ${Math.round(a.height)} px high of ${Math.round(box.height)}`);
        });
        plot.querySelectorAll('text').forEach((el) => {
            const text = (el.textContent || '').trim();
            const r = el.getBoundingClientRect();
            if (!text || r.width === 0) return;
            const size = parseFloat(getComputedStyle(el).fontSize);
            if (size < minFont) out.push(`plot ${p}: "${text.slice(0, 30)}" at ${size} px`);
            if (r.left < box.left - 1 || r.right > box.right + 1 || r.top < box.top - 1
                    || r.bottom > box.bottom + 1)
                out.push(`plot ${p}: "${text.slice(0, 30)}" cut at the figure's edge`);
        });
    });
    return out;
}"""


def unreadable(page, min_width: int = 250, min_height: int = 150, min_font: float = 9) -> list[str]:
    """Figures (or their texts) too small to read, and labels cut at a figure's edge."""
    return page.evaluate(MIN_SIZE_JS, [min_width, min_height, min_font])
