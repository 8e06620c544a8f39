"""End-to-end (issue 33): every page opened from a permalink in a fresh Chromium, at 1400 px
and at a laptop's 1280 px: the page opens the view the link describes (the address it
writes back keeps every parameter of the link), and every figure reads: no overlapping
text, nothing too small, no label cut at a figure's edge.

Screenshots go to $CONTEXTLENS_SCREENSHOTS (a temporary folder by default) as
``link_<page>_<width>.png``.
"""

from __future__ import annotations

import urllib.parse

import pytest

from tests.browser import SHOTS, exception_texts, text_overlaps, unreadable, wait_for_app

WIDTHS = (1400, 1280)  # a wide screen and a laptop

LABELLED = (
    "She sat on the river bank. | river\nThe canoe hit the muddy bank. | river\n"
    "He deposited cash at the bank. | money\nThe bank raised its rates. | money"
)
# page path -> (link parameters, text the opened view must show)
LINKS = {
    "Static_vs_Contextual": (
        {"sentence": LABELLED, "target": "bank", "lines": "same vs different sense",
         "neighbours": "False", "hm_layer": "3"},
        ["same sense (2 pairs)", "different senses (4 pairs)", "layer 3"],
    ),
    "Fill_Mask": (
        {"model": "minilm-l6-mlm", "sentence": "The capital of France is [MASK] .",
         "follow": "paris", "top_k": "5"},
        ["“paris” by layer"],
    ),
    "Attention": (
        {"model": "minilm-l6", "sentence": "The keys to the cabinet are on the table.",
         "view": "Model view", "layer": "5", "head": "7"},
        ["Layer 5, head 7", "cabinet"],
    ),
    "Probing": ({"task": "supersense"}, ["Supersense · SemCor"]),
    "Layering": ({"model": "elmo-mini,minilm-l6"}, ["elmo-mini", "minilm-l6"]),
    "Course_Notes": (
        {"pool_sentences": "He deposited cash at the bank.\nThe bank raised its rates.\n"
         "We sat on the river bank.", "pool_layer": "3"},
        ["1. He deposited cash at the bank.", "layer 3"],
    ),
    "Probe_Lens": (
        {"source": "type one", "sentence": "The old man saw the boats on the river."},
        ["supersense", "boats"],
    ),
}  # fmt: skip


def _params(url: str) -> dict[str, str]:
    return dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(url).query))


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("path", list(LINKS))
def test_a_link_reopens_its_view_and_every_figure_reads(server, browser, path, width):
    params, shown = LINKS[path]
    ctx = browser.new_context(viewport={"width": width, "height": 1000})  # a fresh browser
    page = ctx.new_page()
    page.set_default_timeout(240_000)
    try:
        page.goto(f"{server}/{path}?{urllib.parse.urlencode(params)}")
        wait_for_app(page, 300_000)
        page.wait_for_timeout(1500)  # plotly draws after the script run
        assert not exception_texts(page)
        # the view is the link's: the address the page writes from its state keeps the link
        written = _params(page.url)
        assert {k: written.get(k) for k in params} == params
        body = page.inner_text("body") + " ".join(  # a selectbox shows its value in an input
            page.locator("input").evaluate_all("(els) => els.map((e) => e.value)")
        )
        plots = page.evaluate(
            "() => Array.from(document.querySelectorAll('.js-plotly-plot'))"
            ".map((e) => e.textContent).join(' ')"
        )
        for text in shown:
            assert text in body or text in plots, text
        assert not text_overlaps(page)
        assert not unreadable(page)
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / f"link_{path.lower()}_{width}.png"), full_page=True)
    finally:
        ctx.close()
