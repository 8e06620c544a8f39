"""Every control that shapes a view round-trips through the address (issue 33): set the
controls, take the address the page wrote, open it in a fresh session, compare the state.
And inputs kept across pages: Probe Lens's sentence, Course Notes' sentences, Attention's
heads. Driven by AppTest with the real embedded models; the browser test opens such links in
Chromium (tests/test_e2e_browser.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

PAGES = Path(__file__).resolve().parents[2] / "pages"
APP = str(PAGES.parent / "app.py")

# page -> controls set in order: (kind, key, value); a control may appear only after the
# ones before it (e.g. the model view's layer after the view is chosen).
CASES = {
    "3_Attention.py": [
        ("text_area", "attn_text", "The keys to the cabinet are on the table."),
        ("radio", "attn_level", "piece"),
        ("toggle", "attn_special", False),
        ("radio", "attn_view", "Model view"),
        ("selectbox", "attn_mv_layer", 5),
        ("selectbox", "attn_mv_head", 7),
        ("selectbox", "attn_mv_focus", 2),
    ],
    "3_Attention.py#head-view": [
        ("radio", "attn_view", "Head view"),
        ("selectbox", "attn_hv_layer", 4),
        ("multiselect", "attn_hv_heads", [2, 7]),
        ("multiselect", "attn_focus", [3, 5]),
        ("radio", "attn_weights", "norm-weighted"),
    ],
    "3_Attention.py#statistics": [
        ("radio", "attn_view", "Head statistics"),
        ("multiselect", "attn_stats_names", ["entropy", "cls"]),
        ("radio", "attn_stats_source", "a sample of UD-EWT dev sentences"),
        ("number_input", "attn_n", 60),
    ],
    "2_Fill_Mask.py": [
        ("text_area", "fill_mask_text", "Paris is the [MASK] of France."),
        ("slider", "fill_mask_top_k", 5),
        ("text_input", "fill_mask_follow", "capital"),
    ],
    "2_Fill_Mask.py#no-layers": [("toggle", "fill_mask_layers", False)],
    "1_Static_vs_Contextual.py": [
        ("toggle", "sc_nn", False),
        ("text_input", "sc_target", "bank"),
        ("radio", "sc_lines", "mean over pairs"),
        ("select_slider", "sc_hm_minilm-l6", 3),
        ("radio", "sc_nn_pool", "UD-EWT"),
    ],
    "1_Static_vs_Contextual.py#contextuality": [
        ("radio", "sc_view", "Contextuality"),
        ("number_input", "sc_ctx_n", 70),
    ],
    "4_Probing.py": [
        ("selectbox", "probe_task", "supersense"),
        ("multiselect", "probe_layers", [0, 3]),
        ("number_input", "probe_train", 110),  # not the shipped run's size (issue 46)
        ("number_input", "probe_eval", 300),
    ],
    "6_Course_Notes.py": [
        ("text_area", "pool_sentences", "A cat sat.\nA dog ran.\nThe bank rose."),
        ("select_slider", "pool_layer", 2),
        ("text_input", "dir_target", "bat"),
        ("text_input", "nsp_a", "It rained all day."),
    ],
    "7_Probe_Lens.py": [
        ("radio", "lens_source", "type one"),
        ("text_input", "lens_text", "The old man the boats."),
        ("select_slider", "lens_layer", 2),
    ],
}


def _widget(at: AppTest, kind: str, key: str):
    return getattr(at, kind)(key=key)


def _set(at: AppTest, kind: str, key: str, value) -> None:
    widget = _widget(at, kind, key)
    (widget.input(value) if kind in {"text_area", "text_input"} else widget.set_value(value)).run()
    assert not at.exception, (key, at.exception)


@pytest.mark.parametrize("case", list(CASES))
def test_a_pages_address_reopens_its_view(case, minilm):
    page = str(PAGES / case.split("#")[0])
    at = AppTest.from_file(page, default_timeout=300).run()
    assert not at.exception, at.exception
    for kind, key, value in CASES[case]:
        _set(at, kind, key, value)
    at.run()  # one more run, as after any interaction: the address is up to date
    link = {k: at.query_params[k] for k in at.query_params}
    fresh = AppTest.from_file(page, default_timeout=300)
    for k, v in link.items():
        fresh.query_params[k] = v[0] if isinstance(v, list) and len(v) == 1 else v
    fresh.run()
    assert not fresh.exception, fresh.exception
    for _, key, value in CASES[case]:  # (a control hidden by a later one keeps its value)
        assert fresh.session_state[key] == value, (key, link)


def test_attention_layer_and_head_link_opens_that_head_in_the_head_view(minilm):
    # the link: ?layer=5&head=7 opened layer 5 with heads 0-3
    at = AppTest.from_file(str(PAGES / "3_Attention.py"), default_timeout=300)
    at.query_params["layer"] = "5"
    at.query_params["head"] = "7"
    at.run()
    assert not at.exception, at.exception
    assert at.radio(key="attn_view").value == "Head view"
    assert at.selectbox(key="attn_hv_layer").value == 5
    assert at.multiselect(key="attn_hv_heads").value == [7]


def test_inputs_are_kept_across_pages(minilm):
    at = AppTest.from_file(APP, default_timeout=300).run()
    at.switch_page("pages/7_Probe_Lens.py").run()
    at.radio(key="lens_source").set_value("type one").run()
    at.text_input(key="lens_text").input("Dogs chase cats.").run()
    at.switch_page("pages/6_Course_Notes.py").run()
    at.text_area(key="pool_sentences").input("One cat.\nTwo dogs.").run()
    at.text_input(key="nsp_b").input("Then it snowed.").run()
    at.switch_page("pages/3_Attention.py").run()
    at.multiselect(key="attn_hv_heads").set_value([1, 5]).run()
    at.switch_page("pages/2_Fill_Mask.py").run()
    at.switch_page("pages/7_Probe_Lens.py").run()
    assert not at.exception, at.exception
    assert at.radio(key="lens_source").value == "type one"
    assert at.text_input(key="lens_text").value == "Dogs chase cats."
    at.switch_page("pages/6_Course_Notes.py").run()
    assert at.text_area(key="pool_sentences").value == "One cat.\nTwo dogs."
    assert at.text_input(key="nsp_b").value == "Then it snowed."
    at.switch_page("pages/3_Attention.py").run()
    assert at.multiselect(key="attn_hv_heads").value == [1, 5]
