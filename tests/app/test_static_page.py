"""The Static vs Contextual page with the real default model, driven by streamlit's AppTest."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "1_Static_vs_Contextual.py")


def charts(at: AppTest) -> list:
    return list(at.get("plotly_chart"))


def errors(at: AppTest) -> list[str]:
    return [e.value for e in at.error]


@pytest.fixture
def page() -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=300).run()
    assert not at.exception, at.exception
    return at


def test_renders_default_model_offline(page):
    from ui import background

    assert page.title[0].value == "Static vs Contextual"
    assert page.sidebar.multiselect[0].value == ["minilm-l6"]
    assert not page.error
    assert len(charts(page)) == 2  # similarity by layer + pair heatmap
    captions = " ".join(c.value for c in page.caption)
    assert "static vectors: cosine 1.000" in captions
    # the SemCor neighbour pool is read or built in the background (issue 46); then shown
    for run in list(background._runs().values()):
        assert run.done.wait(600), run.label
    page.run()
    assert not page.exception and not page.error
    assert len(page.dataframe) == 1  # nearest neighbours, one row per layer + static
    nn = page.dataframe[0].value
    assert list(nn.index) == ["static", "embeddings", *(f"layer {k}" for k in range(1, 7))]
    assert nn.shape[1] == 4  # the four occurrences of "bank" in the default text


@pytest.mark.parametrize(
    ("text", "target", "message"),
    [
        ("", "bank", "two or more sentences"),
        ("Only one sentence about a bank.", "bank", "Only one sentence"),
        ("The river shore.\nA loan from the banks.", "bank", "does not occur"),
    ],
)
def test_bad_input_gives_one_clear_message(page, text, target, message):
    page.text_area(key="sc_text").input(text)
    page.text_input(key="sc_target").input(target).run()
    assert not page.exception
    assert len(page.error) == 1 and message in page.error[0].value
    assert not charts(page)


def test_picking_occurrences(page):
    picks = page.multiselect[0]
    assert len(picks.options) == 4
    picks.set_value([0, 1]).run()
    assert not page.exception and not page.error
    picks = page.multiselect[0]
    picks.set_value([0]).run()
    assert not page.exception and len(page.warning) == 1 and not charts(page)


def test_sense_geometry_view(page):
    page.radio(key="sc_view").set_value("Sense geometry").run()
    assert not page.exception and not page.error
    assert len(charts(page)) == 2  # the map and the separability curves
    table = page.dataframe[0].value
    assert table["layer_name"].tolist()[:2] == ["static", "embeddings"]
    assert any("SemCor occurrences" in c.value for c in page.caption)
    page.text_input(key="sc_lemma").input("wife").run()
    assert not page.exception
    assert len(page.error) == 1 and "needs two or more" in page.error[0].value


def test_contextuality_view(page):
    page.radio(key="sc_view").set_value("Contextuality").run()
    assert not page.exception and not charts(page)
    page.number_input(key="sc_ctx_n").set_value(30).run()
    page.button(key="sc_ctx_run").click().run()
    assert not page.exception and not page.error
    assert len(charts(page)) == 1
    assert page.dataframe[0].value["layer_name"].iloc[0] == "static"


def test_static_vectors_file(page, tmp_path):
    glove = tmp_path / "glove.txt"
    glove.write_text("bank 1 0 0.5\nriver 0.9 0.1 0.4\nmoney -1 0.5 0.5\nloan -0.8 0.6 0.4\n")
    page.radio(key="sc_view").set_value("GloVe / word2vec").run()
    page.text_input(key="sc_static_path").input(str(tmp_path / "missing.txt")).run()
    assert not page.exception and len(page.error) == 1 and "not found" in page.error[0].value
    page.text_input(key="sc_static_path").input(str(glove)).run()
    assert not page.exception and not page.error
    assert "4 words × 3 dims" in page.success[0].value
    assert any("account" in w.value for w in page.warning)  # said, not silently dropped
    # The loaded vectors join the other views: a reference note and a separability row.
    page.radio(key="sc_view").set_value("Compare occurrences").run()
    assert not page.exception and any("glove.txt" in c.value for c in page.caption)
    page.radio(key="sc_view").set_value("Sense geometry").run()
    assert not page.exception and "glove.txt" in page.dataframe[0].value["model"].tolist()


def test_demo_mode_has_no_file_path_input(monkeypatch):
    monkeypatch.setenv("CONTEXTLENS_DEMO", "1")
    at = AppTest.from_file(PAGE, default_timeout=300).run()
    at.radio(key="sc_view").set_value("GloVe / word2vec").run()
    assert not at.exception
    assert not at.text_input and "shared demo" in at.info[0].value


def test_two_models_of_different_depth_share_a_relative_depth_axis():
    at = AppTest.from_file(PAGE, default_timeout=300)
    at.session_state["sc_nn"] = False
    at.run()
    at.sidebar.multiselect[0].set_value(["minilm-l6", "elmo-mini"]).run()
    assert not at.exception and not at.error
    assert any("relative depth" in c.value for c in at.caption)
    fig = charts(at)[0]
    assert "relative depth" in fig.proto.spec


# -- the SemCor button (issue 46) --------------------------------------------------------------

LABELLED = """She sat on the river bank. | river
The canoe hit the muddy bank. | river
He deposited cash at the bank. | money
The bank raised its rates. | money"""


def page_without_neighbours() -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=300)
    at.session_state["sc_nn"] = False  # the neighbour pool is not what these tests are about
    return at.run()


def test_semcor_button_loads_what_its_help_says():
    # issue 46: the help said three sentences for each of two senses; the button loaded 7
    # sentences with a third sense
    from collections import Counter

    from probing.analyses.sense_pairs import split_sense_labels

    at = page_without_neighbours()
    help_text = at.button(key="sc_semcor").help
    at.button(key="sc_semcor").click().run()
    assert not at.exception, at.exception
    _, labels = split_sense_labels(at.text_area(key="sc_text").value)
    counts = Counter(labels)
    assert None not in counts and len(counts) == 2  # bank has more senses in SemCor
    assert max(counts.values()) <= 3
    assert "Up to 3 SemCor sentences" in help_text and "2 most frequent" in help_text


def test_semcor_button_shows_a_labelled_comparison_by_sense():
    # issue 46: a labelled comparison switched to "every pair" stayed there after the
    # button, drawing one line (and one legend entry) per pair
    at = page_without_neighbours()
    at.text_area(key="sc_text").input(LABELLED).run()
    assert at.radio(key="sc_lines").value == "same vs different sense"
    at.radio(key="sc_lines").set_value("every pair").run()
    at.button(key="sc_semcor").click().run()
    assert not at.exception, at.exception
    assert "| 1: " in at.text_area(key="sc_text").value
    assert at.radio(key="sc_lines").value == "same vs different sense"


def test_every_pair_of_many_labelled_occurrences_groups_the_legend_by_sense():
    import json

    at = page_without_neighbours()
    at.button(key="sc_semcor").click().run()
    at.radio(key="sc_lines").set_value("every pair").run()
    assert not at.exception, at.exception
    n_occurrences = len(at.multiselect[0].value)
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    pair_lines = [t for t in spec["data"] if "static" not in t["name"]]
    assert len(pair_lines) == n_occurrences * (n_occurrences - 1) // 2 > 8
    entries = [t["name"] for t in spec["data"] if t.get("showlegend", True)]
    assert len(entries) == 3, entries  # same sense, different senses, the static reference
    # the plot area keeps its height: the figure grows by the legend's rows instead
    layout = spec["layout"]
    assert layout["height"] - layout["margin"]["t"] - layout["margin"]["b"] >= 250


def test_sense_map_box_shows_the_sentences_typed_under_compare_occurrences():
    # issue 46: the Sense geometry box kept its own default, ignoring the typed sentences
    at = page_without_neighbours()
    at.text_area(key="sc_text").input(LABELLED).run()
    at.session_state["sc_cap"] = 20  # the fewest occurrences: the map is not what is tested
    at.radio(key="sc_view").set_value("Sense geometry").run()
    assert not at.exception, at.exception
    typed = "\n".join(line.split(" |")[0] for line in LABELLED.splitlines())
    assert at.text_area(key="sc_user_text").value == typed  # sense labels off
    # once typed into, the box keeps its own sentences
    own = "The bank of the Thames flooded.\nHe robbed a bank."
    at.text_area(key="sc_user_text").input(own).run()
    at.radio(key="sc_view").set_value("Compare occurrences").run()
    at.text_area(key="sc_text").input("A bank.\nAnother bank.").run()
    at.radio(key="sc_view").set_value("Sense geometry").run()
    assert not at.exception, at.exception
    assert at.text_area(key="sc_user_text").value == own
