"""Issue 44's views in a real browser at 1280 px: the Attention page's "Context mixing" heat
maps and the Fill Mask page's "Which words did it use?" bars; no exception box, no
overlapping text, figures large enough to read."""

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


def _clean(page: Page) -> None:
    assert not exception_texts(page)
    assert not text_overlaps(page), text_overlaps(page)
    assert not unreadable(page), unreadable(page)


def test_context_mixing_view(server: str, page: Page) -> None:
    page.set_viewport_size({"width": 1280, "height": 1000})
    page.goto(f"{server}/Attention?view=Context%20mixing")
    wait_for_app(page)
    assert plot_count(page, 2) >= 2
    assert "Value Zeroing at layer 1" in page.inner_text("body")
    _clean(page)
    shoot(page, "attention_context_mixing")


def test_fill_mask_which_words(server: str, page: Page) -> None:
    page.set_viewport_size({"width": 1280, "height": 1000})
    page.goto(f"{server}/Fill_Mask?sentence=The%20capital%20of%20France%20is%20%5BMASK%5D%20.")
    wait_for_app(page)
    page.get_by_text("Which words did it use?").first.click()
    page.get_by_text("Which words did it use for").first.wait_for()
    assert not exception_texts(page)
    # Every figure on the page, the top-k bars included (their long piece note once ran
    # past the chart's height into its title at 1280 px).
    problems = [*text_overlaps(page), *unreadable(page)]
    assert not problems, problems
    shoot(page, "fill_mask_which_words")
