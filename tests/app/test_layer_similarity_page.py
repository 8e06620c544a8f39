"""The Layer Similarity page: committed CKA results, a run on request, a damaged file."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "9_Layer_Similarity.py")


@pytest.fixture(autouse=True)
def local_mode(monkeypatch):
    monkeypatch.delenv("CONTEXTLENS_DEMO", raising=False)


def test_committed_results_and_a_run_on_request(minilm):
    at = AppTest.from_file(PAGE, default_timeout=300).run()
    assert not at.exception, at.exception
    assert not at.error
    charts = at.get("plotly_chart")
    assert len(charts) == 1  # the committed result; nothing computed yet
    options = at.radio(key="cka_shipped").options
    assert "minilm-l6 × elmo-mini" in options
    at.radio(key="cka_shipped").set_value("minilm-l6 × minilm-l6").run()
    assert not at.exception and not at.error
    at.number_input(key="cka_words").set_value(100).run()
    at.button(key="cka_run").click().run()
    assert not at.exception and not at.error
    assert len(at.get("plotly_chart")) == 2


def test_a_damaged_result_file_is_named_and_the_page_survives(tmp_path, monkeypatch):
    import ui.views.layer_similarity as view

    bad = tmp_path / "cka_x__y.json"
    bad.write_text('{"model_a": "x", "cka": [[1.0', encoding="utf-8")
    monkeypatch.setattr(view, "shipped_results", lambda: [bad])
    at = AppTest.from_file(PAGE, default_timeout=300).run()
    assert not at.exception
    assert len(at.error) == 1 and "cka_x__y.json" in at.error[0].value
    assert at.button(key="cka_run")  # the rest of the page is there
