"""Texts that said something their figures did not (issue 46), driven by AppTest offline.

Each test reads the figure the page drew and checks the words next to it against it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from streamlit.testing.v1 import AppTest

PAGES = Path(__file__).resolve().parents[2] / "pages"


def charts(at: AppTest) -> list[dict]:
    return [json.loads(el.proto.spec) for el in at.get("plotly_chart")]


def title(chart: dict) -> str:
    return chart["layout"].get("title", {}).get("text", "")


def test_elmo_directions_say_what_layer_0_is_for_bert():
    # "Layer 0 is context-free (similarity 1)" over a BERT curve starting at 0.97
    from tests.app.test_course_pages import _arr

    at = AppTest.from_file(str(PAGES / "6_Course_Notes.py"), default_timeout=300)
    at.session_state["models"] = ["minilm-l6"]
    at.run()
    assert not at.exception, at.exception
    (lines,) = [c for c in charts(at) if title(c).startswith("cosine similarity of")]
    fused = next(t for t in lines["data"] if t["name"] == "minilm-l6 · fused")
    layer0 = float(_arr(fused["y"])[0])
    assert layer0 < 0.999  # "bank" sits at different positions in the two default sentences
    caption = next(c.value for c in at.caption if "layer 0" in c.value.lower())
    assert "context-free (similarity 1" not in caption
    assert "position" in caption and "not context-free" in caption and f"{layer0:.3f}" in caption
    assert "elmo-mini's layer 0 is its character-CNN token vector" in caption


def test_sentence_pooling_counts_its_matrices_and_has_a_colour_scale():
    # "three ways to pool" over four matrices with no colour bar
    at = AppTest.from_file(str(PAGES / "6_Course_Notes.py"), default_timeout=300)
    at.session_state["models"] = ["minilm-l6"]
    at.run()
    assert not at.exception, at.exception
    maps = [c for c in charts(at) if title(c).startswith("minilm-l6 · ")]
    numbers = {2: "Two", 3: "Three", 4: "Four"}
    caption = next(c.value for c in at.caption if "to get one vector per sentence" in c.value)
    assert caption.startswith(f"{numbers[len(maps)]} ways"), (len(maps), caption)
    assert all(m["data"][0].get("showscale", True) is not False for m in maps)
    assert all("colorbar" in m["data"][0] for m in maps)


def test_layering_subtitle_describes_the_method_not_a_finding():
    at = AppTest.from_file(str(PAGES / "5_Layering.py"), default_timeout=120).run()
    assert not at.exception, at.exception
    subtitle = at.caption[0].value
    assert "relative depth" in subtitle
    assert not re.search(r"syntax low|semantics higher", subtitle, re.IGNORECASE)


def test_fill_mask_banner_names_the_model_it_shows_instead():
    # "... minilm-l6-mlm is the same embedded encoder ... This page uses it instead.": the
    # "it" read as the refused model
    at = AppTest.from_file(str(PAGES / "2_Fill_Mask.py"), default_timeout=120)
    at.session_state["models"] = ["minilm-l6"]
    at.run()
    assert not at.exception, at.exception
    (info,) = at.info
    last = re.split(r"(?<=\.) ", info.value.strip())[-1]
    assert "minilm-l6-mlm" in last, last
    assert not re.search(r"\b(uses|pick) it\b", info.value, re.IGNORECASE)


def test_interventions_agreement_bars_count_every_case_of_the_table():
    # the bars by attractors summed to 928 where the table said 939: "0", "1", "2+" on a
    # number axis dropped the "2+" bar
    at = AppTest.from_file(str(PAGES / "8_Interventions.py"), default_timeout=300).run()
    assert not at.exception, at.exception
    by_attractors = next(c for c in charts(at) if title(c).endswith("by attractors"))
    assert by_attractors["layout"]["xaxis"]["type"] == "category"
    table = next(
        d.value for d in at.dataframe if "accuracy (95 % CI)" in d.value.columns
    ).set_index(["model", "source"])
    for bars in by_attractors["data"]:
        counted = sum(int(t.removeprefix("n=")) for t in bars["text"])
        assert counted == table.loc[(table.index[0][0], bars["name"]), "n"], bars["name"]
