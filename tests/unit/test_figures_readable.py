"""Figures that read cleanly: distinct sense styles past 10 senses, readable sense names,
pair labels that differ in more than case, baselines in the legend, legends off the title.
(The Chromium e2e run checks the drawn text boxes for overlaps.)"""

from __future__ import annotations

import numpy as np

from probing.analyses.contextual import compare_occurrences
from probing.analyses.sense_geometry import lemma_occurrences
from probing.figures.contextual import sense_label, sense_map_figure, short_gloss


def test_line_has_more_senses_than_ten_colours_and_each_looks_different(data_dir):
    occ = lemma_occurrences("line", "n", max_occurrences=2000, data_dir=data_dir)
    n_senses = len(set(occ.senses))
    assert n_senses > 10  # the case from the report: 17 senses, 10 colours
    coords = np.random.default_rng(0).normal(size=(len(occ.senses), 2))
    fig = sense_map_figure(coords, occ.senses, occ.glosses, occ.contexts()).to_plotly_json()
    styles = [(t["marker"]["color"], t["marker"].get("symbol", "circle")) for t in fig["data"]]
    assert len(styles) == n_senses and len(set(styles)) == n_senses
    names = [t["name"] for t in fig["data"]]
    assert not any("%" in n for n in names)  # no raw sense keys in the legend
    assert all(n.startswith("line (n.) ") for n in names)
    assert len(set(names)) == n_senses
    # the key and the whole gloss stay in the hover
    first = fig["data"][0]["customdata"][0]
    assert "%" in first[0] and first[1] == occ.glosses[first[0]]


def test_sense_names_cut_glosses_at_a_word_and_keep_the_first_clause():
    gloss = "sloping land (especially the slope beside a body of water); they pulled the canoe"
    assert short_gloss(gloss) == "sloping land (especially the slope beside a…"
    assert short_gloss("a financial institution") == "a financial institution"
    assert sense_label("bank%1:17:01::", 2, gloss).startswith("bank (n.) 2: sloping land")
    assert sense_label("run%2:38:00::", 1, "move fast by using one's feet").startswith("run (v.) 1")


def test_pair_labels_that_differ_only_in_case_get_the_next_word(minilm):
    text = (
        "He sat on the river bank.\nShe went to the bank to save money.\n"
        "The bank approved the loan."
    )
    comp = compare_occurrences(minilm, text, "bank")
    assert comp.short_labels == ["S1 river bank", "S2 the bank to", "S3 The bank approved"]
    pairs = set(comp.pair_table()["pair"])
    assert "S2 the bank to – S3 The bank approved" in pairs


def test_probing_baselines_are_legend_entries_not_labels_on_the_curves():
    from probing.figures.probing import layer_curve
    from probing.probes.run import ProbeResults
    from tests.app.test_probing_page import PRECOMPUTED

    fig = layer_curve(ProbeResults.from_json(PRECOMPUTED)).to_plotly_json()
    names = [t.get("name", "") for t in fig["data"]]
    assert any(n.startswith("majority label: ") for n in names)
    texts = [a["text"] for a in fig["layout"].get("annotations", [])]
    assert not any("majority" in t or "static vectors" in t for t in texts), texts


def test_probe_lens_cells_are_short_and_the_colourbar_title_sits_beside_the_bar():
    # issue 33: supersense cells drew "noun.communication" at ~5 px; the bar's title sat on "1"
    import pandas as pd

    from probing.figures.probe_lens import cell_label, label_grid

    rows = pd.DataFrame(
        {
            "word_index": [0, 1, 0, 1],
            "layer": [0, 0, 1, 1],
            "label": ["noun.communication", "verb.motion", "noun.person", "NOUN"],
            "confidence": [0.4, 0.9, 0.7, 0.5],
            "correct": [None] * 4,
        }
    )
    fig = label_grid(rows, ["message", "ran"]).to_plotly_json()
    heat = fig["data"][0]
    assert heat["textfont"]["size"] >= 10  # a fixed size: plotly no longer shrinks the text
    assert heat["colorbar"]["title"]["side"] == "right"
    texts = [t for row in heat["text"] for t in row]
    assert "communica-<br>tion" in texts and "motion" in texts and "NOUN" in texts
    assert all(len(part) <= 10 for t in texts for part in t.split("<br>"))
    assert "noun.communication" in " ".join(c for row in heat["customdata"] for c in row)
    assert cell_label("adj.all") == "all" and cell_label("PROPN") == "PROPN"


def test_course_heatmap_keeps_whole_row_labels_and_numbers_the_columns():
    # issue 33: four maps side by side, ~60 px each, rows cut to "eposited cash at the ban…"
    from probing.figures.course import similarity_heatmap

    sentences = ["He deposited cash at the bank.", "The bank raised its rates.", "A river bank."]
    fig = similarity_heatmap(np.eye(3), sentences, "t").to_plotly_json()
    heat = fig["data"][0]
    assert list(heat["x"]) == ["1", "2", "3"]
    assert list(heat["y"])[0] == "1. He deposited cash at the bank."
    assert fig["layout"]["yaxis"]["automargin"] is True
    assert sentences[0] in heat["customdata"][0][1]
