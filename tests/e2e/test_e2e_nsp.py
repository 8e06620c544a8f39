"""The Course Notes NSP tab in a real browser: offline, it opens on the NSP head trained here,
names it, predicts and shows the NSP-vs-SOP measurement, with no error box."""

from __future__ import annotations

from tests.browser import exception_texts, plot_count, shoot, wait_for_app


def test_course_notes_nsp_tab_works_offline(server, page):
    page.goto(f"{server}/Course_Notes")
    wait_for_app(page)
    page.get_by_role("tab", name="Next-sentence prediction").click()
    page.get_by_text("trained here on a frozen minilm-l6", exact=False).first.wait_for()
    wait_for_app(page)
    tab = page.locator('[data-testid="stTabPanel"]:visible, [role="tabpanel"]:visible').first
    text = tab.inner_text()
    assert "[CLS] she opened the fridge . [SEP] it was empty . [SEP]" in text
    assert plot_count(page, 2) >= 2  # the prediction and the measurement
    assert not page.locator('[data-testid="stAlertContentError"]:visible').count()
    assert not exception_texts(page)
    shoot(page, "course_notes_nsp")
