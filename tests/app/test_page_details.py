"""Issue 33's smaller page fixes, with the real embedded models: heads-as-parsers drawn on the
typed sentence, the upload button naming the task sensibly, Course Notes saying what it
leaves out."""

from __future__ import annotations

import json
from pathlib import Path

from streamlit.testing.v1 import AppTest

from probing.analyses.attention import attention_from_encoding
from probing.analyses.attention_parsers import (
    DIRECTIONS,
    head_predictions,
    sentence_arcs,
    words_only,
)

PAGES = Path(__file__).resolve().parents[2] / "pages"


def test_sentence_arcs_read_the_head_as_the_corpus_scoring_does(minilm):
    enc = minilm.encode([["The", "keys", "to", "the", "cabinet", "are", "here"]], attentions=True)
    amap = attention_from_encoding(enc[0])
    to, frm = head_predictions(words_only(amap))
    for layer, head in ((1, 0), (4, 7), (6, 11)):
        words, arcs = sentence_arcs(amap, layer, head, DIRECTIONS[0])
        assert words == ["The", "keys", "to", "the", "cabinet", "are", "here"]
        assert [j for _, j in arcs] == to[layer - 1, head].tolist()
        assert all(i != j for i, j in arcs)  # self-attention ignored
        _, back = sentence_arcs(amap, layer, head, DIRECTIONS[1])
        assert [j for _, j in back] == frm[layer - 1, head].tolist()


def test_heads_as_parsers_draws_the_picked_head_on_the_typed_sentence(minilm):
    at = AppTest.from_file(str(PAGES / "3_Attention.py"), default_timeout=300)
    at.query_params["view"] = "Heads as parsers"
    at.run()
    at.text_area(key="attn_text").input("My sister bought a red bicycle yesterday.").run()
    assert not at.exception, at.exception
    charts = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    arcs = [c for c in charts if "on your sentence" in c["layout"]["title"]["text"]]
    assert len(arcs) == 1
    hovers = " ".join(t.get("hovertemplate", "") for t in arcs[0]["data"])
    assert "bicycle" in hovers and "sister" in hovers
    words = next(t for t in arcs[0]["data"] if t.get("mode") == "text")["text"]
    assert list(words) == ["My", "sister", "bought", "a", "red", "bicycle", "yesterday", "."]


def test_upload_task_labels_name_the_column_not_ud_ewt():
    from ui.views.probing_page import upload_task_label, upload_task_name

    assert upload_task_name("pos") == "UPOS"
    assert upload_task_label("pos") == "UPOS · UPOS, 4th column"
    assert upload_task_label("dep-distance").endswith("HEAD, 7th column")
    for task in ("pos", "xpos", "deprel", "dep-distance", "dep-depth"):
        assert "UD-EWT" not in upload_task_label(task) + upload_task_name(task)


def test_course_notes_says_when_it_keeps_eight_sentences_and_the_first_model():
    at = AppTest.from_file(str(PAGES / "6_Course_Notes.py"), default_timeout=300)
    at.session_state["models"] = ["minilm-l6", "elmo-mini"]
    at.run()
    lines = "\n".join(f"Sentence number {i} about a bank." for i in range(1, 11))
    at.text_area(key="pool_sentences").input(lines).run()
    assert not at.exception, at.exception
    infos = " ".join(i.value for i in at.info)
    assert "Only the first 8 of your 10 sentences are used." in infos
    assert "first picked model, minilm-l6; elmo-mini is left out" in infos
    layouts = [json.loads(c.proto.spec)["layout"] for c in at.get("plotly_chart")]
    titles = [lay.get("title", {}).get("text", "") for lay in layouts]  # other tabs' untitled too
    heat = [t for t in titles if " · " in t and "minilm-l6" in t]
    assert heat, titles
