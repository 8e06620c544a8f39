"""Attention heads as dependency parsers (Clark et al. 2019 §4.2) and their Attention-page view."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from probing.analyses.attention_parsers import (
    OFFSETS,
    head_predictions,
    parser_sentences,
    score_parsers,
)
from probing.probes.edge import base_relation

PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "3_Attention.py")


def test_head_predictions_ignore_self_and_read_both_directions():
    a = np.array(
        [
            [0.9, 0.1, 0.0],  # word 0 attends mostly to itself, then to word 1
            [0.2, 0.1, 0.7],
            [0.5, 0.4, 0.1],
        ],
        dtype=np.float32,
    )[None, None]
    to, frm = head_predictions(a)
    assert to[0, 0].tolist() == [1, 2, 0]
    # Who attends most to word j (self left out): column argmax.
    assert frm[0, 0].tolist() == [2, 2, 1]


@pytest.fixture(scope="module")
def scores(minilm):
    return score_parsers(minilm, parser_sentences("dev", 25))


def test_counts_and_baseline_match_the_gold_trees(scores):
    sents = parser_sentences("dev", 25)
    arcs = [
        (dep, int(h) - 1, base_relation(r))
        for s in sents
        for dep, (h, r) in enumerate(zip(s.labels["head"], s.labels["deprel"], strict=True))
        if h != "0"
    ]
    n_by_rel = {r: sum(a[2] == r for a in arcs) for r in scores.relations}
    assert dict(zip(scores.relations, scores.total.sum(0).tolist(), strict=True)) == n_by_rel
    assert "root" not in scores.relations
    # The offset baseline, recounted from the trees: offset -1 = head just before.
    k = OFFSETS.index(-1)
    for r, rel in enumerate(scores.relations):
        expect = sum(1 for d, h, x in arcs if x == rel and h == d - 1)
        assert scores.offset_correct[:, r, k].sum() == expect
    acc = scores.accuracy()
    assert acc.shape[1:] == (2, 6, 12) and (acc >= 0).all() and (acc <= 1).all()


def test_best_heads_are_the_argmax_and_carry_intervals(scores):
    table = scores.best_heads(min_count=20, n_boot=100)
    acc = scores.accuracy()
    assert len(table) >= 4 and set(table["direction"]) == {"dependent → head", "head → dependent"}
    for row in table.itertuples():
        r = scores.relations.index(row.relation)
        d = 0 if row.direction == "dependent → head" else 1
        assert row.accuracy == pytest.approx(acc[r, d].max())
        assert acc[r, d, row.layer - 1, row.head] == pytest.approx(row.accuracy)
        assert row.ci_low <= row.accuracy <= row.ci_high


def test_attention_page_parser_view_opens_a_head(monkeypatch):
    monkeypatch.delenv("CONTEXTLENS_DEMO", raising=False)
    at = AppTest.from_file(PAGE, default_timeout=180).run()
    at.radio(key="attn_view").set_value("Heads as parsers").run()
    assert not at.exception and not at.error
    frame = at.dataframe[0].value
    assert {"relation", "best_head", "accuracy", "baseline"} <= set(frame.columns)
    assert "obj" in set(frame["relation"])  # precomputed on all of EWT dev for minilm-l6
    pick = at.selectbox(key="attn_parse_pick")
    obj = next(i for i in pick.options if i.startswith("obj (dependent"))
    pick.set_value(pick.options.index(obj) if isinstance(pick.value, int) else obj).run()
    at.button(key="attn_parse_open").click().run()
    assert not at.exception
    assert at.radio(key="attn_view").value == "Head view"
    layer = int(obj.split("layer ")[1].split()[0])
    assert at.selectbox(key="attn_hv_layer").value == layer
    assert len(at.get("plotly_chart")) == 1
