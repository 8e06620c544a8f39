"""The Attention page on the shipped 12-layer mpnet-base (an MPNet: its attention keeps its
parts under other names than BERT's): norm-weighted maps and head statistics, as for BERT."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from probing.models.registry import needs_fetch

PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "3_Attention.py")

pytestmark = pytest.mark.skipif(
    needs_fetch("mpnet-base"), reason="mpnet-base is not fetched (CONTEXTLENS_FETCHED_MODELS_DIR)"
)


def test_mpnet_base_gets_norm_weighted_attention_and_head_statistics(monkeypatch):
    monkeypatch.delenv("CONTEXTLENS_DEMO", raising=False)
    at = AppTest.from_file(PAGE, default_timeout=240)
    at.session_state["models"] = ["mpnet-base"]
    at.run()
    assert not at.exception and not at.error, (at.exception, [e.value for e in at.error])
    at.radio(key="attn_weights").set_value("norm-weighted").run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert any("Norm-weighted" in c.value for c in at.caption)
    at.radio(key="attn_view").set_value("Model view").run()
    assert not at.exception and not at.error and len(at.get("plotly_chart")) == 2
    at.radio(key="attn_view").set_value("Head statistics").run()
    assert not at.exception and not at.error and len(at.get("plotly_chart")) == 1
    at.radio(key="attn_weights").set_value("raw").run()
    assert not at.exception and not at.error and len(at.get("plotly_chart")) == 1
