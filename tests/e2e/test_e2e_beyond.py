"""Issue 30's figures in a real browser: the Attention page's weightings and Rollout & flow
view, several focus tokens in the head view, the Layer Similarity page and the Fill Mask
page's lens comparison; no exception box, no overlapping text. Screenshots go where
tests/test_e2e_browser.py puts them."""

from __future__ import annotations

import pytest

from tests.browser import exception_texts, plot_count, shoot, text_overlaps, wait_for_app


def _clean(page) -> None:
    assert not exception_texts(page)
    assert not text_overlaps(page), text_overlaps(page)


@pytest.mark.parametrize("weights", ["norm-weighted", "rollout"])
def test_attention_weightings_in_the_model_view(server, page, weights):
    page.goto(f"{server}/Attention?view=Model%20view&weights={weights}")
    wait_for_app(page)
    assert plot_count(page, 2) >= 2
    _clean(page)
    shoot(page, f"attention_model_view_{weights}")


def test_rollout_and_flow_view(server, page):
    page.goto(f"{server}/Attention?view=Rollout%20%26%20flow")
    wait_for_app(page)
    assert plot_count(page, 2) >= 2
    assert "Which input tokens feed" in page.inner_text("body") or plot_count(page, 2) == 2
    _clean(page)
    shoot(page, "attention_rollout_flow")


def test_several_focus_tokens_draw_summed_bars(server, page):
    page.goto(f"{server}/Attention?view=Head%20view&focus=2,6")
    wait_for_app(page)
    frame = page.frame_locator("iframe").first
    frame.locator("rect").first.wait_for(state="attached")
    assert frame.locator("rect").count() > 5  # one bar per attended token
    assert "Selected:" in frame.locator("#hint").inner_text()
    _clean(page)
    shoot(page, "attention_head_view_two_tokens")


def test_layer_similarity_page(server, page):
    page.goto(f"{server}/Layer_Similarity")
    wait_for_app(page)
    assert plot_count(page, 1) >= 1
    _clean(page)
    shoot(page, "layer_similarity")


def test_fill_mask_lens_comparison(server, page):
    page.goto(f"{server}/Fill_Mask")
    wait_for_app(page)
    assert plot_count(page, 4) >= 4
    assert "Logit lens vs tuned lens" in page.inner_text("body")
    _clean(page)
    shoot(page, "fill_mask_lenses")
