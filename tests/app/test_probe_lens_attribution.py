"""The Probe Lens's "Which words does a label rest on?" section (issue 44) with the committed
minilm-l6 probes: its controls live in the address and the bars follow them."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np
from streamlit.testing.v1 import AppTest

PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "7_Probe_Lens.py")


def _values(y: list | dict) -> list[float]:
    """A trace's numbers, also when plotly sent them base64-packed (``bdata``)."""
    if isinstance(y, dict):
        return np.frombuffer(base64.b64decode(y["bdata"]), dtype=y["dtype"]).tolist()
    return list(y)


def _bars(at: AppTest) -> dict:
    specs = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    found = [s for s in specs if "rest on" in s["layout"]["title"]["text"]]
    assert len(found) == 1, [s["layout"].get("title") for s in specs]
    return found[0]


def test_probe_attribution_controls_are_in_the_address_and_drive_the_bars():
    at = AppTest.from_file(PAGE, default_timeout=300)
    at.session_state["models"] = ["minilm-l6"]
    at.run()
    assert not at.exception, at.exception
    n_charts = len(at.get("plotly_chart"))
    at.toggle(key="lens_why_on").set_value(True).run()
    assert not at.exception and not at.error, (at.exception, [e.value for e in at.error])
    assert len(at.get("plotly_chart")) == n_charts + 1
    assert at.selectbox(key="lens_why_task").value == "pos"  # the first word-level probe
    assert "deprel" not in at.selectbox(key="lens_why_task").options  # an edge probe
    words = [o.split(": ", 1)[1] for o in at.selectbox(key="lens_why_word").options]
    first = _bars(at)
    assert [t.split(": ", 1)[1] for t in first["data"][0]["x"]] == words
    # Another word, layer 0 and gradient × input: the address holds them, and at layer 0 only
    # the probed word itself has a score (no other word reaches the embedding layer's output).
    at.selectbox(key="lens_why_word").set_value(2).run()
    at.selectbox(key="lens_why_layer").set_value(0).run()
    at.selectbox(key="lens_why_method").set_value("gradient_x_input").run()
    assert not at.exception and not at.error
    bars = _bars(at)
    y = _values(bars["data"][0]["y"])
    assert y[2] != 0 and all(v == 0 for i, v in enumerate(y) if i != 2), y
    title = bars["layout"]["title"]["text"]
    assert f"on “{words[2]}”" in title and "layer 0" in title and "Gradient × input" in title
    link = {k: at.query_params[k] for k in at.query_params}
    assert link["why"] == "True" and link["why_word"] == "2" and link["why_layer"] == "0"
    assert link["why_method"] == "gradient_x_input" and link["why_task"] == "pos"
    # The address opens the same view in a fresh session.
    fresh = AppTest.from_file(PAGE, default_timeout=300)
    for k, v in link.items():
        fresh.query_params[k] = v
    fresh.run()
    assert not fresh.exception, fresh.exception
    assert fresh.selectbox(key="lens_why_word").value == 2
    assert _values(_bars(fresh)["data"][0]["y"]) == y
