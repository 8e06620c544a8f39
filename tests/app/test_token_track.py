"""Follow any token across layers at a mask (embedded minilm-l6-mlm, real weights)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

import probing
from probing.analyses.fill_mask import fill_mask, fill_mask_by_layer
from probing.analyses.token_track import follow_token
from probing.errors import NotOneTokenError

TEXT = "The capital of France is [MASK] ."


@pytest.fixture(scope="module")
def mlm():
    return probing.load_encoder("minilm-l6-mlm")


def test_followed_token_agrees_with_fill_mask_at_the_last_layer(mlm):
    top = fill_mask(mlm, TEXT, top_k=10)[0].candidates
    for rank, cand in enumerate(top[:5], start=1):
        track = follow_token(mlm, TEXT, cand.token)
        assert track.rank[0, -1] == rank
        assert track.probability[0, -1] == pytest.approx(cand.probability, rel=1e-4)
    layers = fill_mask_by_layer(mlm, TEXT)
    final = follow_token(mlm, TEXT, layers.masks[0].final_token)
    np.testing.assert_array_equal(final.rank[0], layers.masks[0].final_rank)
    assert final.rank.shape == (1, mlm.info.n_contextual_layers + 1)


def test_any_word_can_be_followed_and_multi_piece_words_are_refused(mlm):
    track = follow_token(mlm, TEXT, "Paris")  # uncased model: the piece is "paris"
    assert track.token == "paris"
    assert (track.rank >= 1).all() and ((track.probability > 0) & (track.probability <= 1)).all()
    with pytest.raises(NotOneTokenError, match="pieces"):
        follow_token(mlm, TEXT, "counterrevolutionaries")


def test_page_follows_the_typed_token(mlm):
    page = str(Path(__file__).resolve().parents[2] / "pages" / "2_Fill_Mask.py")
    at = AppTest.from_file(page, default_timeout=120)
    at.session_state["models"] = ["minilm-l6-mlm"]
    at.run()
    at.text_area(key="fill_mask_text").input(TEXT).run()
    at.text_input(key="fill_mask_follow").input("paris").run()
    assert not at.exception, at.exception
    titles = [json.loads(c.proto.spec)["layout"]["title"]["text"] for c in at.get("plotly_chart")]
    assert any("mask 1: “paris” by layer" in t for t in titles)
    captions = " ".join(c.value for c in at.caption)
    assert "“paris” at mask 1: rank" in captions
    at.text_input(key="fill_mask_follow").input("counterrevolutionaries").run()
    assert any("pieces" in e.value for e in at.error) and not at.exception


def test_follow_chart_labels_its_log_axes_one_tick_per_decade(mlm):
    # issue 33: the rank axis read "5,10,2,5,100,2,…" and probability "1%,1%,…,0%,0%"
    from probing.figures.token_track import token_track_figure

    track = follow_token(mlm, TEXT, "the")  # a token far down the list at some layers
    layout = token_track_figure(track, 0).to_plotly_json()["layout"]
    rank, prob = layout["yaxis"], layout["yaxis2"]
    assert rank["type"] == "log" and prob["type"] == "log"
    assert rank["range"][1] == 0 and rank["range"][0] > 0  # reversed: rank 1 on top, in view
    ranks = np.asarray(rank["tickvals"])
    assert np.allclose(np.log10(ranks), np.round(np.log10(ranks)))  # powers of ten only
    assert ranks.min() == 1 and ranks.max() >= track.rank[0].max()
    assert len(set(rank["ticktext"])) == len(rank["ticktext"])  # no label twice
    assert len(set(prob["ticktext"])) == len(prob["ticktext"]) and prob["ticktext"][-1] == "100%"
    assert min(prob["tickvals"]) <= track.probability[0].min()
    assert "1,000" in rank["ticktext"] or ranks.max() < 1000
