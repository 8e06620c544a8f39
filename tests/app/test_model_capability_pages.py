"""The pages say why a model has no fill-mask (its config names a head its weights lack), and a
model fetched on request that cannot be fetched is one readable message (AppTest, offline)."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from tests.library.test_model_capabilities import _encoder_saved_as_masked_lm

PAGES = Path(__file__).resolve().parents[2] / "pages"
PAGE = str(PAGES / "2_Fill_Mask.py")
CUSTOM = "Other (hub id or local folder)…"


def _texts(at: AppTest) -> str:
    return " ".join(m.value for m in [*at.error, *at.warning, *at.info, *at.caption])


def test_fill_mask_page_says_why_a_headless_masked_lm_cannot_fill_masks(tmp_path):
    folder = _encoder_saved_as_masked_lm(tmp_path / "headless-bert")
    at = AppTest.from_file(PAGE, default_timeout=120)
    at.session_state["models"] = [CUSTOM]
    at.session_state["models_custom"] = str(folder)
    at.run()
    assert not at.exception, at.exception
    text = _texts(at).replace("\\", "")  # markdown escapes
    assert "no masked-language-model head" in text
    assert "weights hold no masked" in text and "cls.predictions" in text
    assert not at.get("plotly_chart")  # no bars from a random head


def test_an_unfetchable_model_is_one_message_not_a_traceback(tmp_path, monkeypatch):
    empty = tmp_path / "no-packages"
    empty.mkdir()
    # pip reads these: no index, an empty local folder (as offline).
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(empty))
    monkeypatch.setenv("CONTEXTLENS_FETCHED_MODELS_DIR", str(tmp_path / "models"))
    at = AppTest.from_file(str(PAGES / "3_Attention.py"), default_timeout=180)
    at.session_state["models"] = ["mpnet-base"]
    at.run()
    assert not at.exception, at.exception
    errors = " ".join(e.value for e in at.error)
    assert "mpnet-base" in errors and "could not be downloaded" in errors
    assert not (tmp_path / "models" / "mpnet-base").exists()


def test_fill_mask_page_says_why_mpnet_base_has_no_head():
    at = AppTest.from_file(PAGE, default_timeout=120)
    at.session_state["models"] = ["mpnet-base"]
    at.run()
    assert not at.exception, at.exception
    info = " ".join(m.value for m in at.info)
    assert "**mpnet-base** has no masked-language-model head" in info
    assert "encoder's weights only" in info and "at random" in info
