"""Sentence pooling: hand-built encodings give hand-computed vectors; real models agree with
their word-level layers; the Brown genre probe splits by document and reports per layer."""

from __future__ import annotations

import numpy as np
import pytest

from probing.encoding import Encoding, ModelInfo
from probing.errors import PoolingUnavailableError
from probing.probes.sentence_pooling import (
    attention_weights,
    pooled_similarities,
    sentence_vector,
    strategies_for,
)

BERT = ModelInfo(
    name="hand",
    family="bert",
    n_contextual_layers=1,
    dim=2,
    provenance="hand-built",
    has_cls_token=True,
    has_attention=True,
)
ELMO = ModelInfo(
    name="hand-elmo", family="elmo", n_contextual_layers=1, dim=2, provenance="hand-built"
)


def _hand_bert() -> Encoding:
    """[CLS] a b [SEP]: 2 hidden-state layers x 4 pieces x 2 dims, 1 attention layer x 2 heads."""
    piece_layers = np.array(
        [
            [[1, 1], [2, 0], [4, 2], [9, 9]],  # layer 0
            [[0, 5], [1, 3], [3, 1], [-7, 7]],  # layer 1
        ],
        dtype=np.float32,
    )
    att = np.zeros((1, 2, 4, 4), dtype=np.float32)
    # [CLS]'s row: head 0 -> (0.1, 0.3, 0.1, 0.5), head 1 -> (0.3, 0.1, 0.3, 0.3)
    att[0, 0, 0] = [0.1, 0.3, 0.1, 0.5]
    att[0, 1, 0] = [0.3, 0.1, 0.3, 0.3]
    return Encoding(
        words=["a", "b"],
        pieces=["[CLS]", "a", "b", "[SEP]"],
        word_ids=[None, 0, 1, None],
        layers=piece_layers[:, 1:3],
        static=piece_layers[0, 1:3],
        model=BERT,
        attentions=att,
        piece_layers=piece_layers,
    )


def test_cls_is_position_zero_of_every_layer():
    enc = _hand_bert()
    np.testing.assert_array_equal(sentence_vector(enc, "cls"), [[1, 1], [0, 5]])


def test_mean_excludes_special_tokens():
    enc = _hand_bert()
    # layer 0: mean of (2,0),(4,2) = (3,1); layer 1: mean of (1,3),(3,1) = (2,2)
    np.testing.assert_allclose(sentence_vector(enc, "mean"), [[3, 1], [2, 2]])
    np.testing.assert_allclose(sentence_vector(enc, "max"), [[4, 2], [3, 3]])


def test_attention_weights_are_cls_attention_to_words_renormalised():
    enc = _hand_bert()
    w = attention_weights(enc)
    # head mean of [CLS]'s row: (0.2, 0.2, 0.2, 0.4); specials zeroed -> (0, .2, .2, 0) -> (0, .5, .5, 0)
    np.testing.assert_allclose(w, [[0, 0.5, 0.5, 0], [0, 0.5, 0.5, 0]])
    np.testing.assert_allclose(w.sum(axis=1), 1.0)
    np.testing.assert_allclose(sentence_vector(enc, "attention"), [[3, 1], [2, 2]])


def test_attention_weights_unequal_case():
    enc = _hand_bert()
    enc.attentions[0, :, 0] = [[0.0, 0.6, 0.2, 0.2], [0.0, 0.6, 0.2, 0.2]]
    w = attention_weights(enc)
    np.testing.assert_allclose(w[1], [0, 0.75, 0.25, 0])
    np.testing.assert_allclose(w.sum(axis=1), 1.0)
    # layer 1: 0.75*(1,3) + 0.25*(3,1) = (1.5, 2.5)
    np.testing.assert_allclose(sentence_vector(enc, "attention")[1], [1.5, 2.5])


def test_elmo_has_no_cls_and_no_attention_pooling():
    layers = np.array([[[1, 2], [3, 4], [5, 0]], [[0, 0], [2, 2], [4, 4]]], dtype=np.float32)
    enc = Encoding(
        words=["x", "y", "z"],
        pieces=["x", "y", "z"],
        word_ids=[0, 1, 2],
        layers=layers,
        static=layers[0],
        model=ELMO,
    )
    assert strategies_for(ELMO) == ("mean", "max")
    np.testing.assert_allclose(sentence_vector(enc, "mean"), [[3, 2], [2, 2]])
    np.testing.assert_allclose(sentence_vector(enc, "max"), [[5, 4], [4, 4]])
    for strategy in ("cls", "attention"):
        with pytest.raises(PoolingUnavailableError, match=r"no \[CLS\]"):
            sentence_vector(enc, strategy)


def test_attention_pooling_without_attentions_is_a_typed_error():
    enc = _hand_bert()
    enc.attentions = None
    with pytest.raises(PoolingUnavailableError, match="attentions=True"):
        sentence_vector(enc, "attention")


def test_real_piece_states_line_up_with_word_layers(minilm):
    (enc,) = minilm.encode(["The unbelievable cat sat."], attentions=True)
    assert enc.piece_layers.shape == (7, len(enc.pieces), 384)
    assert enc.pieces[0] == "[CLS]" and enc.word_ids[0] is None
    firsts = [enc.pieces_of(i)[0] for i in range(len(enc.words))]
    np.testing.assert_allclose(enc.piece_layers[:, firsts], enc.layers, atol=1e-6)
    words = [i for i, w in enumerate(enc.word_ids) if w is not None]
    np.testing.assert_allclose(
        sentence_vector(enc, "mean"), enc.piece_layers[:, words].mean(axis=1), atol=1e-5
    )
    w = attention_weights(enc)
    np.testing.assert_allclose(w.sum(axis=1), 1.0, atol=1e-9)
    assert (w[:, [0, -1]] == 0).all()


def test_similarities_on_real_sentences(minilm):
    sims = pooled_similarities(
        minilm,
        ["The bank raised interest rates.", "The central bank cut rates.", "I like green tea."],
    )
    assert set(sims) == {"cls", "mean", "attention", "max"}
    last = sims["mean"][-1]
    np.testing.assert_allclose(np.diag(last), 1.0, atol=1e-6)
    # all-MiniLM-L6-v2 was trained for mean pooling: the two bank sentences are closer
    assert last[0, 1] > last[0, 2] + 0.2


# -- the genre probe -------------------------------------------------------------------


def test_genre_sample_is_split_by_document():
    from probing.probes.sentence import sample_sentences

    parts = {split: sample_sentences(split, 3)[0] for split in ("train", "dev", "test")}
    docs = {split: {s.doc_id for s in sents} for split, sents in parts.items()}
    assert not docs["train"] & docs["test"] and not docs["dev"] & docs["test"]
    assert len({s.meta["genre"] for s in parts["train"]}) == 15
    assert all(sum(s.doc_id == d for s in parts["test"]) <= 3 for d in docs["test"])
    again, _ = sample_sentences("test", 3)
    assert [s.sent_id for s in again] == [s.sent_id for s in parts["test"]]


def test_genre_probe_on_elmo_reports_per_layer_with_document_intervals(tmp_path, monkeypatch):
    import probing
    from probing.probes.sentence import probe_sentences

    monkeypatch.setenv("CONTEXTLENS_CACHE_DIR", str(tmp_path))
    elmo = probing.load_encoder("elmo-mini")
    with pytest.raises(PoolingUnavailableError, match=r"no \[CLS\]"):
        probe_sentences(elmo, strategies=["cls"])
    small = {"train": 2, "dev": 1, "test": 2}
    out = probe_sentences(elmo, per_doc=small, n_boot=50)
    assert set(out) == {"mean", "max"}
    res = out["mean"]
    assert res.meta["bootstrap_unit"] == "document"
    from probing.probes.sentence import sample_sentences

    test_sents, _ = sample_sentences("test", 2)
    assert res.meta["n_test_documents"] == len({s.doc_id for s in test_sents})
    assert res.meta["n_test_sentences"] == len(test_sents)
    scores = res.layer_scores("accuracy")
    assert list(scores["layer"]) == [0, 1, 2]
    assert ((scores["ci_low"] <= scores["value"]) & (scores["value"] <= scores["ci_high"])).all()
    majority = res.baselines("accuracy")
    assert set(majority["probe"]) == {"majority", "static_mean"}
    # 15 genres, majority ~ 1/6: a linear probe on ELMo's top layer does clearly better
    maj = float(majority[majority["probe"] == "majority"]["value"].iloc[0])
    assert scores["value"].iloc[-1] > maj
    # the second call reads the cached vectors and gives the same numbers
    again = probe_sentences(elmo, per_doc=small, n_boot=50)
    np.testing.assert_allclose(again["mean"].layer_scores("accuracy")["value"], scores["value"])
    # the paired difference refits the same probes: its accuracies are the run's
    from probing.probes.sentence import paired_difference

    d = paired_difference(elmo, "mean", "max", per_doc=small, n_boot=200)
    last = {s: float(r.layer_scores("accuracy")["value"].iloc[-1]) for s, r in out.items()}
    assert d["layer"] == 2
    assert d["accuracy_a"] == pytest.approx(last["mean"])
    assert d["accuracy_b"] == pytest.approx(last["max"])
    assert d["difference"] == pytest.approx(last["mean"] - last["max"])
    assert d["ci_low"] <= d["difference"] <= d["ci_high"]


def test_paired_difference_layer_is_last_or_a_layer_number_never_minus_one():
    from probing.errors import InvalidArgumentError
    from probing.probes.sentence import _layer_index

    assert _layer_index("last", 7) == 6 and _layer_index(3, 7) == 3 and _layer_index("0", 7) == 0
    for bad in (-1, 7, "x", None):  # -1 names the static vectors elsewhere: refused here
        with pytest.raises(InvalidArgumentError, match="'last' or a number from 0 to 6"):
            _layer_index(bad, 7)
