"""The Course Notes page and the Fill Mask page's corruption section, driven by AppTest
(offline, real embedded models; a tiny random BertForPreTraining stands in for NSP)."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from tests.library.test_nsp import save_tiny_pretraining

PAGES = Path(__file__).resolve().parents[2] / "pages"
COURSE = str(PAGES / "6_Course_Notes.py")
FILL = str(PAGES / "2_Fill_Mask.py")


@pytest.fixture(scope="module")
def tiny_nsp(tmp_path_factory) -> str:
    return str(save_tiny_pretraining(tmp_path_factory.mktemp("nsp-page") / "tiny-pretraining"))


def _charts(at: AppTest) -> list[dict]:
    return [json.loads(el.proto.spec) for el in at.get("plotly_chart")]


def _arr(value) -> np.ndarray:
    """A plotly JSON array: a list, or plotly's typed-array form {dtype, bdata, shape}."""
    if isinstance(value, dict) and "bdata" in value:
        out = np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"])
        shape = value.get("shape")
        return out.reshape([int(n) for n in str(shape).split(",")]) if shape else out
    return np.asarray(value)


def _titles(charts: list[dict]) -> list[str]:
    return [c["layout"].get("title", {}).get("text", "") for c in charts]


def test_course_notes_with_minilm(tiny_nsp):
    at = AppTest.from_file(COURSE, default_timeout=300)
    at.session_state["models"] = ["minilm-l6"]
    at.session_state["nsp_model"] = tiny_nsp
    at.run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    charts = _charts(at)
    titles = _titles(charts)
    heat = [t for t in titles if t.startswith("minilm-l6 · ")]
    assert sorted(t.split(" · ")[1] for t in heat) == ["attention", "cls", "max", "mean"]
    sim = next(
        c
        for c in charts
        if c["layout"].get("title", {}).get("text", "").endswith("· mean · layer 6")
    )
    z = _arr(sim["data"][0]["z"])
    assert z.shape == (4, 4)
    np.testing.assert_allclose(np.diag(z), 1.0, atol=1e-5)
    # mean pooling (what all-MiniLM-L6-v2 was trained for): the two money-bank sentences are
    # closer to each other than to a river-bank one
    assert z[0, 1] > z[0, 2]
    lines = next(c for c in charts if "cosine similarity of" in _titles([c])[0])
    names = {t["name"] for t in lines["data"]}
    assert names == {
        "elmo-mini · forward",
        "elmo-mini · backward",
        "elmo-mini · both",
        "minilm-l6 · fused",
    }
    # the committed genre runs: one curve per pooling, with intervals
    genre = next(c for c in charts if "Brown genre" in _titles([c])[0])
    assert {t["name"] for t in genre["data"]} == {"cls", "mean", "attention", "max"}
    assert all("error_y" in t for t in genre["data"])
    bar = next(c for c in charts if c["data"][0]["type"] == "bar")
    assert bar["data"][0]["y"] == ["IsNext", "NotNext"]
    assert float(_arr(bar["data"][0]["x"]).sum()) == pytest.approx(1.0, abs=1e-6)


def test_course_notes_with_elmo_says_it_has_no_cls():
    at = AppTest.from_file(COURSE, default_timeout=300)
    at.session_state["models"] = ["elmo-mini"]
    at.session_state["nsp_model"] = "minilm-l6"  # a checkpoint without the NSP head
    at.run()
    assert not at.exception, at.exception
    assert any("no [CLS]" in i.value for i in at.info)
    heat = [t for t in _titles(_charts(at)) if t.startswith("elmo-mini · ")]
    assert sorted(t.split(" · ")[1] for t in heat) == ["max", "mean"]
    genre = next(c for c in _charts(at) if "Brown genre" in _titles([c])[0])
    assert {t["name"] for t in genre["data"]} == {"mean", "max"}
    errors = " ".join(e.value for e in at.error)
    assert "next-sentence head" in errors  # one readable message, no traceback


def test_fill_mask_page_corruption_section():
    from probing.models.embedded import MINILM_MLM_DELTA

    assert (MINILM_MLM_DELTA / "delta.safetensors").is_file()  # committed with the repo
    at = AppTest.from_file(FILL, default_timeout=300)
    at.session_state["models"] = ["minilm-l6-mlm"]
    at.session_state["fill_mask_layers"] = False
    at.session_state["corrupt_on"] = True
    at.run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    bars = [c for c in _charts(at) if c["data"][0]["type"] == "bar"]
    assert len(bars) == 2 + 3  # two fill-mask masks, then mask / random / kept
    captions = " ".join(c.value for c in at.caption)
    assert "P(“bag”)" in captions and "rank 1" in captions  # kept: the model echoes the word
    at.text_input(key="corrupt_target").set_value("suitcase").run()
    assert any("not a word" in e.value for e in at.error)
