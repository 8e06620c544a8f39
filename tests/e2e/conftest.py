"""The end-to-end fixtures, once for the folder: a real `streamlit run app.py` per test
module, headless Chromium, and a fresh 1400 px wide tab per test."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.browser import CHROMIUM, CHROMIUM_ARGS, streamlit_server

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    """The base URL of a fresh ``streamlit run app.py`` on 127.0.0.1 (one per module)."""
    with streamlit_server() as url:
        yield url


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """Debian's Chromium, headless, driven by Playwright."""
    from playwright.sync_api import sync_playwright

    assert Path(CHROMIUM).exists(), f"{CHROMIUM} missing: apt-get install chromium"
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield b
        b.close()


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    """A fresh browser context and tab, 1400 x 1000, two-minute default timeout."""
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    pg = ctx.new_page()
    pg.set_default_timeout(120_000)
    yield pg
    ctx.close()
