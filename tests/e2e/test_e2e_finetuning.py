"""The Course Notes fine-tuning tab in a real browser: the committed run's four per-layer
figures and the engine's sentences, with no error box."""

from __future__ import annotations

import json
from pathlib import Path

from tests.browser import exception_texts, plot_count, shoot, wait_for_app

RESULTS = Path(__file__).resolve().parents[2] / "results" / "finetune"


def test_course_notes_finetuning_tab(server, page):
    page.goto(f"{server}/Course_Notes")
    wait_for_app(page)
    page.get_by_role("tab", name="Fine-tuning").click()
    page.get_by_text("What the comparison engine says", exact=False).first.wait_for()
    wait_for_app(page)
    tab = page.locator('[data-testid="stTabPanel"]:visible, [role="tabpanel"]:visible').first
    text = tab.inner_text()
    comparisons = json.loads((RESULTS / "comparisons.json").read_text(encoding="utf-8"))
    for table in comparisons.values():
        for row in table["rows"]:
            assert f"first − second {100 * row['diff']:+.2f}" in text
    assert plot_count(page, 4) >= 4  # CKA, distance, and the two probes
    assert not page.locator('[data-testid="stAlertContentError"]:visible').count()
    assert not exception_texts(page)
    shoot(page, "course_notes_finetuning")
