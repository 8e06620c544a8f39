"""The Fill Mask page on mpnet-base-mlm (the fetched 12-layer all-mpnet-base-v2 with the head
trained here), and mpnet-base pointing to it (skipped where mpnet-base is not fetched)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from probing.models.embedded import MPNET_MLM_DIR
from probing.models.registry import needs_fetch

PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "2_Fill_Mask.py")

pytestmark = [
    pytest.mark.skipif(
        needs_fetch("mpnet-base"),
        reason="mpnet-base is not fetched (CONTEXTLENS_FETCHED_MODELS_DIR)",
    ),
    pytest.mark.skipif(
        not (MPNET_MLM_DIR / "head.safetensors").is_file(), reason="no mpnet-base-mlm head"
    ),
]


def _page(models: list[str]) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=300)
    at.session_state["models"] = models
    return at


def test_mpnet_base_mlm_fills_masks_with_a_12_layer_view(monkeypatch):
    monkeypatch.delenv("CONTEXTLENS_DEMO", raising=False)
    at = _page(["mpnet-base-mlm"]).run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    assert [s.value for s in at.subheader] == ["mpnet-base-mlm"]
    charts = [json.loads(el.proto.spec) for el in at.get("plotly_chart")]
    bars = [c for c in charts if c["data"][0]["type"] == "bar"]
    heatmaps = [c for c in charts if c["data"][0]["type"] == "heatmap"]
    assert len(bars) == 2 and len(heatmaps) == 2  # the default sentence has two masks
    # the layer view: the embeddings and all 12 layers
    rows = heatmaps[0]["data"][0]["y"]
    assert len(rows) == 13 and "12" in str(rows[-1])


def test_mpnet_base_without_head_points_to_mpnet_base_mlm(monkeypatch):
    monkeypatch.delenv("CONTEXTLENS_DEMO", raising=False)
    at = _page(["mpnet-base"]).run()
    assert not at.exception, at.exception
    info = " ".join(i.value for i in at.info)
    assert "mpnet-base** has no masked-language-model head" in info
    assert "**mpnet-base-mlm** is the same encoder" in info
