"""End-to-end: `streamlit run app.py` on 127.0.0.1 driven by Playwright in Debian's Chromium.

Each page is opened as a user would, exercised, checked for figures and for the absence of
exception boxes, and photographed into docs/screenshots/ (shown in the README).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.browser import CHROMIUM, CHROMIUM_ARGS, REPO, exception_texts, streamlit_server, wait_for_app

pytestmark = pytest.mark.browser
SHOTS = REPO / "docs" / "screenshots"


@pytest.fixture(scope="module")
def server():
    with streamlit_server() as url:
        yield url


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    assert Path(CHROMIUM).exists(), f"{CHROMIUM} missing: apt-get install chromium"
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield b
        b.close()


@pytest.fixture
def page(browser):
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    pg = ctx.new_page()
    pg.set_default_timeout(120_000)
    yield pg
    ctx.close()


def shoot(page, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


def test_home_page(server, page):
    page.goto(server)
    wait_for_app(page)
    assert page.locator("h1", has_text="ContextLens").first.is_visible()
    # the default model's provenance card, written once the model has loaded
    page.get_by_text("12-head uncased BERT", exact=False).first.wait_for()
    assert not exception_texts(page)
    shoot(page, "home")
