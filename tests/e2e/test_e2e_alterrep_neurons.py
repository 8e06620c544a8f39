"""The Interventions page's "AlterRep" and "Neurons" tabs in Chromium at a laptop's 1280 px:
the committed runs' figures draw, no exception box, no overlapping text, figures large
enough to read."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tests.browser import (
    exception_texts,
    plot_count,
    shoot,
    text_overlaps,
    unreadable,
    wait_for_app,
)

if TYPE_CHECKING:
    from playwright.sync_api import Page


def _open_tab(server: str, page: Page, tab: str) -> None:
    page.set_viewport_size({"width": 1280, "height": 1000})
    page.goto(f"{server}/Interventions?model=minilm-l6-mlm")
    wait_for_app(page)
    page.get_by_role("tab", name=tab, exact=True).click()
    page.wait_for_timeout(1000)  # plotly lays out a figure when its tab is shown


def _readable(page: Page) -> None:
    assert not exception_texts(page)
    problems = [*text_overlaps(page), *unreadable(page)]
    assert not problems, problems


def test_alterrep_tab(server: str, page: Page) -> None:
    _open_tab(server, page, "AlterRep")
    page.get_by_text("agreement choices flipped by a push", exact=False).first.wait_for()
    assert plot_count(page, 1) >= 1
    body = page.inner_text("body")
    assert "Layer 1: " in body and "p_Holm" in body
    _readable(page)
    shoot(page, "interventions-alterrep")


def test_neurons_tab(server: str, page: Page) -> None:
    _open_tab(server, page, "Neurons")
    page.get_by_text("probe on k neurons of hidden state", exact=False).first.wait_for()
    page.get_by_text("masked-LM loss with k neurons", exact=False).first.wait_for()
    body = page.inner_text("body")
    assert "vs random 10" in body and "p_Holm" in body
    _readable(page)
    shoot(page, "interventions-neurons")
