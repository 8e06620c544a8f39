"""Every page survives hostile input: one readable message, never an exception or traceback.

Pages are driven with streamlit's AppTest on the real embedded models.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

PAGES = Path(__file__).resolve().parents[2] / "pages"

# page file -> key of its main text box, and a suffix the page needs to do real work
TEXT_PAGES = {
    "1_Static_vs_Contextual.py": ("sc_text", ""),
    "2_Fill_Mask.py": ("fill_mask_text", " [MASK] ."),
    "3_Attention.py": ("attn_text", ""),
}

BAD_INPUTS = {
    "empty": "",
    "whitespace": "   \n\t ",
    "very long": "The bank was closed on Sunday . " * 700,  # ~4,900 words: over 512 pieces
    "cjk": "我去了银行。\n银行 bank 关门了。",
    "emoji": "I 😀 love the 🏦 bank !\nThe bank 🌊 flooded .",
    "combining marks": "The cafe\u0301 by the bank .\nA bank of e\u0300\u0301\u0302 lights .",
    "rtl": "ذهبت إلى البنك bank .\nהבנק bank סגור .",
    "control characters": "The bank\x00\x07 opened .\nA bank\x1b[31m account \x7f.",
    "zero-width": "bank\u200b\u200b account\ufeff .\nriver\u200d bank .",
}


def _texts(at: AppTest) -> str:
    parts = [e.value for e in at.error] + [w.value for w in at.warning] + [i.value for i in at.info]
    parts += [m.value for m in at.markdown]
    return "\n".join(str(p) for p in parts)


@pytest.mark.parametrize("page", sorted(TEXT_PAGES))
@pytest.mark.parametrize("case", sorted(BAD_INPUTS))
def test_page_handles_bad_text(page, case):
    key, suffix = TEXT_PAGES[page]
    at = AppTest.from_file(str(PAGES / page), default_timeout=180).run()
    assert not at.exception, at.exception
    text = BAD_INPUTS[case]
    at.text_area(key=key).set_value(text + (suffix if text.strip() else "")).run()
    assert not at.exception, (page, case, at.exception)
    shown = _texts(at)
    assert "Traceback" not in shown
    if case in {"empty", "whitespace", "very long"}:
        # something tells the user what is wrong
        assert at.error or at.warning or at.info, (page, case)


def test_missing_data_folder_is_one_message(monkeypatch, tmp_path):
    monkeypatch.setenv("CONTEXTLENS_DATA_DIR", str(tmp_path / "nowhere"))
    at = AppTest.from_file(str(PAGES / "1_Static_vs_Contextual.py"), default_timeout=180).run()
    at.radio(key="sc_view").set_value("Sense geometry").run()
    assert not at.exception
    messages = " ".join(e.value for e in at.error)
    assert "data download" in messages or "CONTEXTLENS_DATA_DIR" in messages


def test_model_that_fails_to_load_is_one_message(tmp_path):
    broken = tmp_path / "broken-model"
    broken.mkdir()
    (broken / "config.json").write_text('{"model_type": "bert", "hidden_size": 8}')
    at = AppTest.from_file(str(PAGES / "3_Attention.py"), default_timeout=180).run()
    at.sidebar.multiselect[0].set_value(["Other (hub id or local folder)…"]).run()
    at.sidebar.text_input[0].input(str(broken)).run()
    assert not at.exception
    assert len(at.error) == 1 and "has a config but no weights" in at.error[0].value
