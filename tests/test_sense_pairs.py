"""Same-sense vs different-sense pairs, SemCor examples and a sense-tagged neighbour pool
(real SemCor, WordNet and the embedded minilm-l6)."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from probing.analyses.contextual import compare_occurrences
from probing.analyses.sense_pairs import (
    DIFFERENT,
    SAME,
    semcor_examples,
    semcor_vocabulary,
    sense_neighbours,
    sense_pair_table,
    split_sense_labels,
)
from probing.datasets.wordnet import sense_gloss

PAGE = str(Path(__file__).resolve().parent.parent / "pages" / "1_Static_vs_Contextual.py")


def test_labels_come_off_the_lines():
    text, labels = split_sense_labels(
        "The river bank. | river\n\nThe bank lent money.|money\nA bank."
    )
    assert text == "The river bank.\nThe bank lent money.\nA bank."
    assert labels == ["river", "money", None]


def test_semcor_senses_separate_with_depth(minilm, data_dir):
    text = semcor_examples("bank", "n", per_sense=3, max_senses=2, data_dir=data_dir)
    assert text.count("| 1: a financial institution") == 3 and text.count("| 2: sloping land") == 3
    clean, labels = split_sense_labels(text)
    comp = compare_occurrences(minilm, clean, "bank")
    table = sense_pair_table(comp, labels)
    top = table[table["layer"] == comp.n_layers].set_index("relation")
    # the point of the page: a word's senses drift apart while one sense stays close
    assert top.loc[SAME, "cosine"] > top.loc[DIFFERENT, "cosine"] + 0.02
    assert top.loc[SAME, "n_pairs"] + top.loc[DIFFERENT, "n_pairs"] == len(comp.pairs())
    assert top.loc[DIFFERENT, "static_cosine"] == pytest.approx(1.0)  # one word form: one vector


def test_semcor_pool_neighbours_carry_sense_and_gloss(minilm, data_dir):
    pool = semcor_vocabulary(minilm, 1500, data_dir=data_dir)
    assert len(pool.senses) == len(pool) and sum(bool(s) for s in pool.senses) > len(pool) / 3
    comp = compare_occurrences(minilm, "He sat on the river bank.\nThe bank lent money.", "bank")
    table = sense_neighbours(comp, pool, k=5, exclude=["bank"])
    assert set(table["rank"]) == {1, 2, 3, 4, 5} and not (table["word"].str.lower() == "bank").any()
    tagged = table[table["sense"] != ""]
    assert len(tagged)
    for key, gloss in zip(tagged["sense"][:20], tagged["gloss"][:20], strict=True):
        assert gloss == sense_gloss(key, data_dir)


def test_page_shows_same_vs_different_sense_and_semcor_glosses(minilm, monkeypatch):
    import ui.views.static_vs_contextual as view

    monkeypatch.setattr(view, "SEMCOR_POOL", 1500)
    at = AppTest.from_file(PAGE, default_timeout=300).run()
    at.button(key="sc_semcor").click().run()
    assert not at.exception, at.exception
    assert "| 2: sloping land" in at.text_area(key="sc_text").value
    assert at.radio(key="sc_lines").value == "same vs different sense"
    import json

    title = json.loads(at.get("plotly_chart")[0].proto.spec)["layout"]["title"]["text"]
    assert title.startswith("Same sense vs different senses")
    assert at.radio(key="sc_nn_pool").value == "SemCor (sense-tagged)"
    cells = " ".join(str(v) for v in at.dataframe[0].value.to_numpy().ravel())
    assert "(" in cells  # neighbours with their sense's gloss
