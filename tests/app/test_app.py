"""The app shell renders with the real default model (streamlit's AppTest, no browser)."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).resolve().parents[2] / "app.py")


def test_home_page_renders_default_model():
    at = AppTest.from_file(APP, default_timeout=120).run()
    assert not at.exception, at.exception
    assert at.title[0].value == "ContextLens"
    assert at.sidebar.multiselect[0].value == ["minilm-l6"]
    text = " ".join(m.value for m in at.markdown)
    assert "minilm-l6" in text and "384 dims" in text
    assert not at.error
    # Every embedded model is named with what it is; the trained ones with their measured
    # held-out quality (read from their training logs, see probing.models.embedded.training_summary).
    captions = " ".join(c.value for c in at.caption)
    assert "held-out perplexity on UD-EWT dev" in captions  # elmo-mini
    assert "top-1/top-5 guess is right" in captions  # minilm-l6-mlm
    assert captions.count("The real thing:") == 2  # minilm-l6 itself has the card above


def test_unknown_custom_model_gives_one_message_not_a_traceback():
    at = AppTest.from_file(APP, default_timeout=120).run()
    at.sidebar.multiselect[0].set_value(["Other (hub id or local folder)…"]).run()
    at.sidebar.text_input[0].input("definitely-not-a-model").run()
    assert not at.exception
    assert len(at.error) == 1 and "Unknown model" in at.error[0].value


def test_demo_mode_offers_only_embedded_models(monkeypatch):
    monkeypatch.setenv("CONTEXTLENS_DEMO", "1")
    at = AppTest.from_file(APP, default_timeout=120).run()
    assert not at.exception
    options = at.sidebar.multiselect[0].options
    assert not any("Other" in o for o in options)
    assert set(options) == {"minilm-l6", "minilm-l6-mlm", "elmo-mini"}
    assert not at.sidebar.text_input
