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

PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "1_Static_vs_Contextual.py")


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
    top = table[table["layer"] == comp.n_contextual_layers].set_index("relation")
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
    from ui import background  # the pool is built in the background (issue 46)

    for run in list(background._runs().values()):
        assert run.done.wait(600), run.label
    at.run()
    cells = " ".join(str(v) for v in at.dataframe[0].value.to_numpy().ravel())
    assert "(" in cells  # neighbours with their sense's gloss


# -- pair counts against hand counts (issue 33: the labels were overwritten on the page) --------

LABELLED = """She sat on the river bank. | river
The canoe hit the muddy bank. | river
He deposited cash at the bank. | money
The bank raised its rates. | money"""


def pair_counts(table) -> dict[str, int]:
    return table.groupby("relation")["n_pairs"].first().astype(int).to_dict()


def hand_counts(senses: list[str | None]) -> dict[str, int]:
    """Same / different pairs among the labelled occurrences, counted pair by pair."""
    same = diff = 0
    for i, a in enumerate(senses):
        for b in senses[i + 1 :]:
            if a is not None and b is not None:
                same, diff = (same + 1, diff) if a == b else (same, diff + 1)
    return {k: v for k, v in {SAME: same, DIFFERENT: diff}.items() if v}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (LABELLED, {SAME: 2, DIFFERENT: 4}),
        # river, river, unlabelled, money: the unlabelled line's 3 pairs are left out
        (
            LABELLED.replace(" | money\nThe bank raised", "\nThe bank raised"),
            {SAME: 1, DIFFERENT: 2},
        ),
        (LABELLED.replace(" | river", "").replace(" | money", ""), {}),
    ],
)
def test_pair_counts_match_hand_counts(minilm, text, expected):
    clean, labels = split_sense_labels(text)
    comp = compare_occurrences(minilm, clean, "bank")
    assert len(comp.occurrences) == 4
    assert pair_counts(sense_pair_table(comp, labels)) == expected


def test_semcor_pair_counts_match_hand_counts(minilm, data_dir):
    text = semcor_examples("bank", "n", data_dir=data_dir)
    clean, labels = split_sense_labels(text)
    comp = compare_occurrences(minilm, clean, "bank")
    # each occurrence carries its own line's label (a line could hold the word twice)
    senses = [labels[o.sentence] for o in comp.occurrences]
    expected = hand_counts(senses)
    assert sum(expected.values()) == len(comp.pairs())  # every SemCor line is labelled
    assert expected[SAME] > 1 and expected[DIFFERENT] > expected[SAME]
    assert pair_counts(sense_pair_table(comp, labels)) == expected


def sim_chart_traces(at: AppTest) -> list[str]:
    import json

    chart = at.get("plotly_chart")[0]  # the similarity chart comes first
    return [t.get("name", "") for t in json.loads(chart.proto.spec)["data"]]


def page_without_neighbours(text: str | None = None) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=300)
    at.session_state["sc_nn"] = False
    at.run()
    if text is not None:
        at.text_area(key="sc_text").input(text).run()
    assert not at.exception, at.exception
    return at


def test_page_counts_labelled_pairs():
    at = page_without_neighbours(LABELLED)
    assert at.radio(key="sc_lines").value == "same vs different sense"
    names = sim_chart_traces(at)
    assert "minilm-l6: same sense (2 pairs)" in names
    assert "minilm-l6: different senses (4 pairs)" in names
    assert any("2 same-sense and 4 different-sense pairs" in c.value for c in at.caption)
    assert any("[river]" in o for o in at.multiselect[0].options)


def test_page_does_not_call_unlabelled_pairs_different_senses():
    at = page_without_neighbours(LABELLED.replace(" | river", "").replace(" | money", ""))
    assert "same vs different sense" not in at.radio(key="sc_lines").options
    assert not any("senses" in n or "sense (" in n for n in sim_chart_traces(at))
    assert any("No sense labels" in c.value for c in at.caption)


def test_page_semcor_button_counts_pairs_by_sense(data_dir):
    at = page_without_neighbours()
    at.button(key="sc_semcor").click().run()
    assert not at.exception, at.exception
    clean, labels = split_sense_labels(at.text_area(key="sc_text").value)
    from probing import load_encoder

    comp = compare_occurrences(load_encoder("minilm-l6"), clean, "bank")
    expected = hand_counts([labels[o.sentence] for o in comp.occurrences])
    names = sim_chart_traces(at)
    assert f"minilm-l6: same sense ({expected[SAME]} pairs)" in names
    assert f"minilm-l6: different senses ({expected[DIFFERENT]} pairs)" in names


def test_semcor_pool_is_kept_on_disk_and_read_back(minilm, data_dir, tmp_path, monkeypatch):
    # issue 33: the pool was rebuilt (~58 s) on every server start
    import numpy as np

    import probing.analyses.sense_pairs as sense_pairs
    from probing.analyses import pool_store

    monkeypatch.setenv("CONTEXTLENS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(sense_pairs, "_pool_cache", {})
    seen = []
    built = semcor_vocabulary(minilm, 600, progress=lambda d, t: seen.append((d, t)))
    assert seen and seen[-1][0] == seen[-1][1] > 1  # encoding progress, to the end
    assert len(list(pool_store.pool_dir().glob("*.safetensors"))) == 1
    monkeypatch.setattr(sense_pairs, "_pool_cache", {})  # a new server process

    def no_encoding(*args, **kwargs):
        raise AssertionError("the stored pool was encoded again")

    monkeypatch.setattr(sense_pairs, "build_vocabulary", no_encoding)
    read = semcor_vocabulary(minilm, 600)
    assert read.words == built.words and read.senses == built.senses
    assert read.glosses == built.glosses and read.contexts == built.contexts
    np.testing.assert_allclose(read.layers, built.layers, atol=2e-3)
    np.testing.assert_allclose(read.static, built.static, atol=2e-3)
    # another pool size is another entry, built anew
    with pytest.raises(AssertionError, match="encoded again"):
        semcor_vocabulary(minilm, 700)
