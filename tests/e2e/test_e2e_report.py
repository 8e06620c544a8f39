"""End-to-end: the Report page in Chromium. The plan of a small report of minilm-l6 is shown,
the report runs as a background job with its progress, and its page appears inline (the
report's own figures drawn inside it). Screenshots: ``report_plan.png``, ``report_done.png``
in $CONTEXTLENS_SCREENSHOTS."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.browser import exception_texts, shoot, streamlit_server, wait_for_app


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[str]:
    """A server with a cache of its own (the report is written there)."""
    cache = tmp_path_factory.mktemp("cache")
    with streamlit_server(env={"CONTEXTLENS_CACHE_DIR": str(cache)}) as url:
        yield url


@pytest.mark.slow
def test_a_report_is_planned_run_in_the_background_and_shown(server, page):
    page.goto(f"{server}/Report?model=minilm-l6&budget=5m&parts=contextuality,cka,cloze")
    wait_for_app(page, 300_000)
    assert not exception_texts(page)
    page.get_by_role("button", name="Plan the report").click()
    page.get_by_text("Plan:", exact=False).first.wait_for(timeout=240_000)
    wait_for_app(page, 300_000)
    body = page.inner_text("body")
    assert "Run the report" in body and not exception_texts(page)
    shoot(page, "report_plan")
    page.get_by_role("button", name="Run the report (a background job)").click()
    # the progress bar while it runs, then the report inline with a download button
    # (the committed report above has its own page and button: wait for the run's, the second)
    page.wait_for_function("document.querySelectorAll('iframe').length >= 2", timeout=480_000)
    page.get_by_role("button", name="Download the report").nth(1).wait_for(timeout=60_000)
    wait_for_app(page, 120_000)
    # the committed reports come first (their pages rebuilt from report.json), the run last
    shipped = page.frame_locator("iframe").first
    shipped.locator("h1").wait_for(timeout=60_000)
    assert "Layer report: elmo-mini" in shipped.locator("h1").inner_text()
    frame = page.frame_locator("iframe").last
    frame.locator("h1").wait_for(timeout=60_000)
    assert "Layer report: minilm-l6" in frame.locator("h1").inner_text()
    frame.locator(".js-plotly-plot").first.wait_for(timeout=60_000)
    assert frame.locator(".js-plotly-plot").count() == 2  # CKA and contextuality
    assert "not run" in frame.locator("#plan").locator("xpath=..").inner_text()
    assert not exception_texts(page)
    shoot(page, "report_done")
