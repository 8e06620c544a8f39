"""The Course Notes NSP tab offline: it opens on the NSP head trained here (no red box), names
it honestly, predicts, switches to the SOP heads (frozen encoder, or top 2 layers tuned), and
shows the committed measurement."""

from __future__ import annotations

import json

import pytest
from streamlit.testing.v1 import AppTest

from probing.models.pair_heads import PAIR_HEADS


def _nsp_tab() -> None:
    from ui.views import nsp

    nsp.render()


def _charts(at: AppTest) -> list[dict]:
    return [json.loads(el.proto.spec) for el in at.get("plotly_chart")]


def _bar(at: AppTest) -> dict:
    return next(
        c
        for c in _charts(at)
        if c["data"][0]["type"] == "bar" and c["data"][0]["orientation"] == "h"
    )


@pytest.fixture(autouse=True)
def _shipped_heads():
    for _name, (_task, folder) in PAIR_HEADS.items():
        assert (folder / "head.safetensors").is_file(), f"{folder} is committed with the repo"


def test_the_tab_opens_on_the_nsp_head_trained_here():
    at = AppTest.from_function(_nsp_tab, default_timeout=120).run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    captions = " ".join(c.value for c in at.caption)
    assert "trained here on a frozen minilm-l6" in captions and "not the original" in captions
    bar = _bar(at)
    assert bar["data"][0]["y"] == ["IsNext", "NotNext"]
    p_next, p_not = bar["data"][0]["x"]
    assert p_next + p_not == pytest.approx(1.0, abs=1e-6) and 0 < p_next < 1
    assert "[CLS] she opened the fridge . [SEP] it was empty . [SEP]" in captions
    # the committed measurement: three heads, three sets each, every bar with its interval
    acc = next(c for c in _charts(at) if c["layout"].get("barmode") == "group")
    assert {t["name"] for t in acc["data"]} == {
        "NSP head",
        "SOP head",
        "SOP head with top 2 layers tuned",
    }
    assert all(len(t["x"]) == 3 and "error_y" in t for t in acc["data"])


def test_the_sop_head_answers_in_its_own_classes_and_order_matters():
    at = AppTest.from_function(_nsp_tab, default_timeout=120)
    at.session_state["nsp_model"] = "minilm-l6-sop"
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    forward = _bar(at)["data"][0]
    assert forward["y"] == ["In order", "Swapped"]
    at.text_input(key="nsp_a").set_value("It was empty.")
    at.text_input(key="nsp_b").set_value("She opened the fridge.")
    at.run()
    backward = _bar(at)["data"][0]
    assert backward["x"][0] != pytest.approx(forward["x"][0], abs=1e-6)


def test_the_sop_head_with_tuned_layers_is_named_for_what_it_is():
    at = AppTest.from_function(_nsp_tab, default_timeout=120)
    at.session_state["nsp_model"] = "minilm-l6-sop-top2"
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    captions = " ".join(c.value for c in at.caption)
    assert "minilm-l6-sop-top2: an SOP head trained here together with minilm-l6's top 2" in (
        captions
    )
    assert "not the original BERT or ALBERT head" in captions
    forward = _bar(at)["data"][0]
    assert forward["y"] == ["In order", "Swapped"]
    at.text_input(key="nsp_a").set_value("It was empty.")
    at.text_input(key="nsp_b").set_value("She opened the fridge.")
    at.run()
    assert _bar(at)["data"][0]["x"][0] != pytest.approx(forward["x"][0], abs=1e-6)


def test_the_demo_offers_the_heads_trained_here(monkeypatch):
    monkeypatch.setenv("CONTEXTLENS_DEMO", "1")
    at = AppTest.from_function(_nsp_tab, default_timeout=120).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert "nsp_model" not in {w.key for w in at.text_input}  # no free-text checkpoint
    assert set(PAIR_HEADS) <= set(at.selectbox(key="nsp_demo_model").options)
    assert _bar(at)["data"][0]["y"] == ["IsNext", "NotNext"]
