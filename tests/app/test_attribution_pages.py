"""Issue 44's views through AppTest: the Attention page's "Context mixing" view (Value
Zeroing and ALTI beside raw attention, under the level and [CLS]/[SEP] controls) and the Fill
Mask page's "Which words did it use?" bars."""

from __future__ import annotations

import json

import numpy as np

from probing.analyses.attention import attention_view, encode_attention
from probing.attribution.mixing import mixing_maps
from tests.app.test_attention_page import local_mode, page  # noqa: F401
from tests.app.test_course_pages import _arr
from tests.app.test_fill_mask_page import CUSTOM, _charts, _page, tiny_folder  # noqa: F401


def test_context_mixing_view_shows_the_methods_maps(page, minilm):  # noqa: F811
    page.radio(key="attn_view").set_value("Context mixing").run()
    assert not page.exception and not page.error, [e.value for e in page.error]
    charts = [json.loads(c.proto.spec) for c in page.get("plotly_chart")]
    assert len(charts) == 2 and all(c["data"][0]["type"] == "heatmap" for c in charts)
    assert "Value Zeroing at layer 1" in charts[0]["layout"]["title"]["text"]
    # the map drawn is the library's, at the page's word level with [CLS]/[SEP] shown
    text = page.text_area[0].value
    amap = encode_attention(minilm, text)
    want = attention_view(mixing_maps(minilm, amap)["value_zeroing"], "word", True)
    np.testing.assert_allclose(_arr(charts[0]["data"][0]["z"]), want.weights[0, 0], atol=1e-5)
    assert len(_arr(charts[1]["data"][0]["z"])) == want.n_tokens  # raw attention beside it
    page.radio(key="attn_mix_method").set_value("alti").run()
    page.toggle(key="attn_mix_rolled").set_value(True).run()
    page.toggle(key="attn_special").set_value(False).run()
    assert not page.exception and not page.error
    charts = [json.loads(c.proto.spec) for c in page.get("plotly_chart")]
    assert "ALTI at layer 1 (rolled out" in charts[0]["layout"]["title"]["text"]
    z = _arr(charts[0]["data"][0]["z"])
    assert z.shape[0] == want.n_tokens - 2  # [CLS] and [SEP] hidden
    np.testing.assert_allclose(z.sum(-1), 1.0, atol=1e-5)  # rows renormalised


def test_fill_mask_page_shows_which_words_it_used(tiny_folder):  # noqa: F811
    at = _page([CUSTOM], tiny_folder).run()
    at.text_area[0].set_value("The doctor picked up her [MASK] and left .").run()
    toggle = next(t for t in at.toggle if t.label == "Which words did it use?")
    toggle.set_value(True).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    bars = [c for c in _charts(at) if "Which words did it use" in c["layout"]["title"]["text"]]
    assert len(bars) == 1
    x = bars[0]["data"][0]["x"]
    assert len(x) == 9 and x[5] == "5: [MASK]" and _arr(bars[0]["data"][0]["y"])[5] == 0
    assert any("completeness gap" in c.value for c in at.caption)
