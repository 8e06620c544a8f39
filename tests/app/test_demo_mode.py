"""Demo mode (the shared deployment): registry models only, caps, no server paths."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from probing import config

REPO = Path(__file__).resolve().parents[2]
PAGES = sorted((REPO / "pages").glob("*.py"))
EMBEDDED = {"minilm-l6", "minilm-l6-mlm", "elmo-mini"}


@pytest.fixture
def demo(monkeypatch):
    monkeypatch.setenv("CONTEXTLENS_DEMO", "1")


def test_limits_are_stricter_in_demo(monkeypatch):
    monkeypatch.delenv("CONTEXTLENS_DEMO", raising=False)
    local = config.limits()
    monkeypatch.setenv("CONTEXTLENS_DEMO", "1")
    demo = config.limits()
    assert demo.max_chars < local.max_chars and demo.max_chars == 2_000
    assert demo.max_probe_train_sentences < local.max_probe_train_sentences
    assert demo.max_upload_bytes < local.max_upload_bytes
    assert demo.heavy_jobs == 1


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.stem)
def test_every_page_offers_only_registry_models_and_no_path_box(demo, page):
    at = AppTest.from_file(str(page), default_timeout=180).run()
    assert not at.exception, at.exception
    # The Layering page only reads committed results files (no model is loaded), so it also
    # offers the models that have them (mpnet-base); every other page only embedded ones.
    allowed = set(EMBEDDED)
    if page.stem == "5_Layering":
        from ui.views.layering import models_with_results

        allowed |= set(models_with_results())
    for picker in at.sidebar.multiselect:  # pages that read shipped results have none
        assert set(picker.options) <= allowed
    assert not at.sidebar.text_input  # no box to type a hub id or a folder
    for box in at.text_area:  # typed text is capped
        assert box.max_chars is not None and box.max_chars <= 2_000


@pytest.mark.parametrize(
    "name", ["/etc", "../shared/data/allennlp-elmo-fixture", "google-bert/bert-base-cased"]
)
def test_typed_paths_and_hub_ids_are_refused(demo, name):
    # a crafted session state naming one is dropped by the picker ...
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=180)
    at.session_state["models"] = [name]
    at.run()
    assert not at.exception
    assert name not in at.sidebar.multiselect[0].value
    # ... and the loader behind every page refuses it outright
    at = AppTest.from_function(_load_by_name, args=(name,), default_timeout=180).run()
    assert not at.exception
    assert len(at.error) == 1 and "only offers" in at.error[0].value
    assert not at.json


def _load_by_name(name: str) -> None:
    import streamlit as st

    from ui.common import get_encoder

    encoder = get_encoder(name)
    if encoder is not None:
        st.json({"loaded": encoder.info.name})


def test_error_messages_show_no_server_paths(demo, monkeypatch, tmp_path):
    monkeypatch.setenv("CONTEXTLENS_DATA_DIR", str(tmp_path / "srv" / "data"))
    at = AppTest.from_file(str(REPO / "pages" / "1_Static_vs_Contextual.py"), default_timeout=180)
    at.run().radio(key="sc_view").set_value("Sense geometry").run()
    assert not at.exception
    shown = " ".join(e.value for e in at.error)
    assert "data download" in shown  # the how-to survives
    assert str(tmp_path) not in shown and "<server path>" in shown


def test_local_mode_keeps_paths_in_messages(monkeypatch, tmp_path):
    monkeypatch.delenv("CONTEXTLENS_DEMO", raising=False)
    monkeypatch.setenv("CONTEXTLENS_DATA_DIR", str(tmp_path / "data"))
    at = AppTest.from_file(str(REPO / "pages" / "1_Static_vs_Contextual.py"), default_timeout=180)
    at.run().radio(key="sc_view").set_value("Sense geometry").run()
    assert str(tmp_path) in " ".join(e.value for e in at.error)
