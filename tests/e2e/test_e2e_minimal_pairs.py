"""The Interventions page's "Minimal pairs" tab in Chromium: the committed run's accuracy per
paradigm draws, and a typed pair is scored piece by piece without an error."""

from __future__ import annotations

from tests.browser import exception_texts, plot_count, shoot, wait_for_app


def test_minimal_pairs_tab(server, page):
    page.goto(f"{server}/Interventions?model=minilm-l6-mlm")
    wait_for_app(page)
    page.get_by_role("tab", name="Minimal pairs").click()
    page.get_by_text("Minimal pairs: accuracy per paradigm", exact=False).first.wait_for()
    page.get_by_role("button", name="Score the pair").click()
    page.get_by_text("Your pair: log-probability of each piece", exact=False).first.wait_for()
    wait_for_app(page)
    assert plot_count(page, 2) >= 2
    assert "nats (difference" in page.inner_text("body")
    assert not exception_texts(page)
    shoot(page, "interventions-minimal-pairs")
