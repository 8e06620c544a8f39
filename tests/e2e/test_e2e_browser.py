"""End-to-end: `streamlit run app.py` on 127.0.0.1 driven by Playwright in Debian's Chromium.

Each page is opened as a user would, exercised, checked for figures and for the absence of
exception boxes, and photographed into $CONTEXTLENS_SCREENSHOTS (a temporary folder by
default; the README's screenshots are refreshed with
``CONTEXTLENS_SCREENSHOTS=docs/screenshots pytest -m browser``).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.browser import (
    exception_texts,
    plot_count,
    shoot,
    text_overlaps,
    unreadable,
    wait_for_app,
)

REPO = Path(__file__).resolve().parents[2]


def test_home_page(server, page):
    page.goto(server)
    wait_for_app(page)
    assert page.locator("h1", has_text="ContextLens").first.is_visible()
    nav = page.locator('[data-testid="stSidebar"] a').all_inner_texts()
    assert [t.strip() for t in nav][:2] == ["Home", "Static vs Contextual"], nav
    # the default model's provenance card, written once the model has loaded
    page.get_by_text("12-head uncased BERT", exact=False).first.wait_for()
    assert not exception_texts(page)
    assert not text_overlaps(page)
    assert not unreadable(page)
    shoot(page, "home")
    page.goto(f"{server}/Fill_Mask")  # a direct link still gets the app's page list
    wait_for_app(page)
    nav = page.locator('[data-testid="stSidebar"] a').all_inner_texts()
    assert [t.strip() for t in nav][0] == "Home", nav
    assert "app" not in [t.strip() for t in nav]


def type_into(page, label: str, text: str) -> None:
    """Replace a text area's content and apply it (Ctrl+Enter), as a user does."""
    box = page.get_by_label(label, exact=True).first
    box.click()
    box.fill(text)
    box.press("Control+Enter")
    page.wait_for_timeout(300)
    wait_for_app(page)


def test_static_vs_contextual_page(server, page):
    page.goto(f"{server}/Static_vs_Contextual")
    wait_for_app(page)
    type_into(
        page,
        "Sentences, one per line",
        "The bank raised interest rates.\nWe fished from the river bank.\nThe bank of fog rolled in.",
    )
    assert plot_count(page, 2) >= 2  # similarity by layer + pair heatmap
    body = page.inner_text("body")
    assert "S3" in body and "bank" in body
    assert not exception_texts(page)
    assert not text_overlaps(page)
    assert not unreadable(page)
    shoot(page, "static_vs_contextual")


def test_fill_mask_page(server, page):
    page.goto(f"{server}/Fill_Mask")
    wait_for_app(page)
    type_into(page, "Text", "I went [MASK] the store to buy some [MASK] .")
    assert plot_count(page, 4) >= 4  # per mask: top-k bars, layer heatmap, rank line
    assert "mask 2" in page.inner_text("body")
    assert not exception_texts(page)
    assert not text_overlaps(page)
    assert not unreadable(page)
    shoot(page, "fill_mask")


def test_fill_mask_bad_input_is_a_message(server, page):
    page.goto(f"{server}/Fill_Mask")
    wait_for_app(page)
    type_into(page, "Text", "There is no mask here.")
    assert "[MASK]" in page.inner_text('[data-testid="stAlert"]')
    assert not exception_texts(page)
    assert not text_overlaps(page)
    assert not unreadable(page)


def test_attention_page(server, page):
    page.goto(f"{server}/Attention")
    wait_for_app(page)
    type_into(page, "Sentence", "The animal didn't cross the street because it was too tired.")
    assert plot_count(page, 1) >= 1  # head view
    shoot(page, "attention_head_view")
    page.get_by_text("Model view", exact=True).click()
    wait_for_app(page)
    assert plot_count(page, 2) >= 2  # layers x heads grid + the selected head
    assert not exception_texts(page)
    assert not text_overlaps(page)
    assert not unreadable(page)
    shoot(page, "attention_model_view")


def test_probing_page_runs_a_small_probe(server, page):
    page.goto(f"{server}/Probing")
    wait_for_app(page)
    assert plot_count(page, 1) >= 1  # the precomputed UPOS curve, shown without computing
    assert "precomputed" in page.inner_text("body")
    shoot(page, "probing")
    # a small run: fewest training sentences, 60 dev/test sentences
    train = page.get_by_label("Training sentences", exact=True)
    train.fill("20")
    train.press("Enter")
    wait_for_app(page)
    page.get_by_text("Evaluation", exact=True).click()
    box = page.get_by_label("Dev and test sentences (0 = all)", exact=True)
    box.fill("60")
    box.press("Enter")
    wait_for_app(page)
    # "Run again" while the precomputed settings hold, "Run" once they differ
    page.get_by_role("button", name=re.compile(r"^Run( again)?$")).click()
    # the run goes on in the background; its bar refreshes until it ends and the page redraws
    page.get_by_text("run in this app with these settings", exact=False).first.wait_for(
        timeout=300_000
    )
    wait_for_app(page, timeout_ms=300_000)
    assert plot_count(page, 2) >= 2  # layer curves + scalar-mix weights
    assert "precomputed" not in page.inner_text("body").split("Your own data")[0]
    assert not exception_texts(page)
    assert not text_overlaps(page)
    assert not unreadable(page)


def test_sense_map_with_many_senses_reads_cleanly(server, page):
    # *line* has 17 senses in SemCor: more than any 10-colour palette
    page.goto(f"{server}/Static_vs_Contextual")
    wait_for_app(page)
    page.get_by_text("Sense geometry", exact=True).click()
    wait_for_app(page)
    box = page.get_by_label("Lemma (SemCor)", exact=True)
    box.fill("line")
    box.press("Enter")
    wait_for_app(page, timeout_ms=300_000)
    legend = page.locator(".legendtext").evaluate_all("els => els.map(e => e.textContent)")
    assert any(t.startswith("line (n.) 1: ") for t in legend), legend
    assert not any("%" in t for t in legend)
    assert not exception_texts(page)
    assert not text_overlaps(page)
    assert not unreadable(page)


def test_attention_heatmap_with_long_tokens_keeps_labels_off_the_title(server, page):
    page.goto(f"{server}/Attention")
    wait_for_app(page)
    type_into(
        page, "Sentence", "Internationalisation notwithstanding, counterrevolutionaries hesitated."
    )
    page.get_by_text("Model view", exact=True).click()
    wait_for_app(page)
    assert not exception_texts(page)
    assert not text_overlaps(page)
    assert not unreadable(page)


def test_model_view_tile_click_opens_that_head(server, page):
    page.goto(f"{server}/Attention")
    wait_for_app(page)
    page.get_by_text("Model view", exact=True).click()
    wait_for_app(page)
    # the invisible click target over tile (layer 2, head 3): row-major, 12 heads a layer
    grid = page.locator(".js-plotly-plot").first
    tile = grid.locator(".scatterlayer .point").nth(12 + 3)
    tile.hover(force=True)
    label = page.locator(".hovertext").first.text_content()  # "layer L, head H: click to open"
    layer, head = re.search(r"layer (\d+), head (\d+)", label).groups()
    tile.click(force=True)
    page.wait_for_timeout(500)
    wait_for_app(page)
    titles = page.locator(".gtitle").evaluate_all("els => els.map(e => e.textContent)")
    assert any(t.startswith(f"Layer {layer}, head {head}") for t in titles), (label, titles)
    assert (layer, head) != ("1", "0")  # not the default: the click opened it
    assert not exception_texts(page)


def test_head_view_focus_follows_the_mouse_without_a_rerun(server, page):
    page.goto(f"{server}/Attention")
    wait_for_app(page)
    frame = page.frame_locator("iframe").first
    lines = frame.locator("line")
    lines.first.wait_for(state="attached")
    visible = "ls => ls.filter(l => l.style.display !== 'none').length"
    total = lines.evaluate_all(visible)
    assert total > 20
    frame.locator("text[data-side='0']").nth(2).hover()
    shown = lines.evaluate_all(visible)
    assert 0 < shown < total
    ys = lines.evaluate_all(
        "ls => [...new Set(ls.filter(l => l.style.display !== 'none').map(l => l.getAttribute('y1')))]"
    )
    assert len(ys) == 1  # only the hovered token's own lines
    assert (
        page.evaluate(
            "() => document.querySelector('[data-testid=\"stApp\"]').getAttribute('data-test-script-state')"
        )
        != "running"
    )


def test_layering_page(server, page):
    page.goto(f"{server}/Layering")
    wait_for_app(page)
    assert plot_count(page) == 1  # curves + centres of gravity, from the committed results
    # issue 40: the page states the committed claims (results/claims.json), word for word.
    claims = json.loads((REPO / "results" / "claims.json").read_text(encoding="utf-8"))
    text = next(c["text"] for c in claims if c["id"] == "cog:elmo-mini")
    assert text in page.inner_text("body")
    assert not exception_texts(page)
    assert not text_overlaps(page)
    assert not unreadable(page)
    shoot(page, "layering")


def test_probe_lens_page(server, page):
    page.goto(f"{server}/Probe_Lens")
    wait_for_app(page)
    # the last grid (word sense: WordNet is read on first use) and the tree come last
    page.get_by_text("Structural probes: the tree per layer").wait_for(timeout=180_000)
    wait_for_app(page)
    body = page.inner_text("body")
    # minilm-l6's committed probes (results/probes/): a grid per labelling probe (UPOS,
    # relations on the gold arcs, supersense, word sense) and the structural probes' tree
    assert "No trained probes are saved" not in body
    for heading in ("part of speech (UPOS)", "dependency relation", "supersense", "word sense"):
        assert heading in body, heading
    assert plot_count(page, 5) >= 5
    assert not exception_texts(page)
    shoot(page, "probe_lens")


def test_course_notes_page(server, page):
    page.goto(f"{server}/Course_Notes")
    wait_for_app(page)
    # the sentence-similarity matrices per pooling strategy, side by side
    assert plot_count(page, 1) >= 1
    assert "[CLS]" in page.inner_text("body")
    assert not exception_texts(page)
    shoot(page, "course_notes")


def test_interventions_page(server, page):
    page.goto(f"{server}/Interventions?model=elmo-mini")
    wait_for_app(page)
    body = page.inner_text("body")
    # the committed elmo-mini sweep opens at once, with its caption
    assert "LEACE erasure fitted on" in body
    assert plot_count(page, 1) >= 1
    page.get_by_role("tab", name="Heads").click()
    # an LSTM has no heads: the tab says so (the toggles are for models with attention)
    page.get_by_text("it has no attention heads", exact=False).first.wait_for()
    wait_for_app(page)
    assert not exception_texts(page)
    shoot(page, "interventions")
