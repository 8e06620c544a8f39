"""Norm-weighted attention (Kobayashi et al. 2020): hand-computed cases on a toy model and
on numbers written out, alignment with the real encoder's pieces, typed errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from probing.analyses.attention import AttentionMap, encode_attention
from probing.analyses.attention_norms import (
    compare_shares,
    encode_norm_attention,
    norm_weighted,
    value_norms_of,
)
from probing.encoders.bert import TransformersEncoder
from probing.errors import NoAttentionError
from tests.library.test_fill_mask import _info, tiny_bert_config, tiny_tokenizer


@pytest.fixture(scope="module")
def toy(tmp_path_factory) -> TransformersEncoder:
    """A 2-layer, 2-head random BERT (hidden size 8) with eager attention."""
    from transformers import BertModel

    torch.manual_seed(3)
    cfg = tiny_bert_config(hidden_size=8, intermediate_size=12, attn_implementation="eager")
    model = BertModel(cfg)
    with torch.no_grad():  # non-zero biases, so that which bias f(x) includes shows
        for name, p in model.named_parameters():
            if name.endswith("bias"):
                p.normal_(0.0, 0.5)
    folder = tmp_path_factory.mktemp("toy-tok")
    return TransformersEncoder(model, tiny_tokenizer(folder), _info("toy"), device="cpu")


def test_value_norms_match_a_hand_computation_on_the_toy_model(toy):
    words = ["the", "doctor", "left", "."]
    got = toy.value_norms(words)
    enc = toy.tokenizer(words, is_split_into_words=True, return_tensors="pt")
    with torch.inference_mode():
        hidden = toy.model(**enc, output_hidden_states=True).hidden_states
    for layer, block in enumerate(toy.model.encoder.layer):
        x = hidden[layer][0].numpy()  # the layer's input, (n, 8)
        wv, bv = (
            p.detach().numpy()
            for p in (block.attention.self.value.weight, block.attention.self.value.bias)
        )
        wo = block.attention.output.dense.weight.detach().numpy()  # (8, 8): out × in
        v = x @ wv.T + bv
        for h in range(2):
            f = v[:, 4 * h : 4 * h + 4] @ wo[:, 4 * h : 4 * h + 4].T  # f_h(x_j), (n, 8)
            np.testing.assert_allclose(got[layer, h], np.linalg.norm(f, axis=1), rtol=1e-4)


def test_norm_weighting_by_hand():
    # One layer, one head, three tokens; norms 1, 2, 4.
    weights = np.array([[[[0.5, 0.25, 0.25], [0.0, 0.5, 0.5], [1.0, 0.0, 0.0]]]], np.float32)
    amap = AttentionMap(["[CLS]", "a", "[SEP]"], weights, [None, 0, None], ["a"], [None, 0, None])
    out = norm_weighted(amap, np.array([[[1.0, 2.0, 4.0]]]))
    # Row 0: 0.5·1, 0.25·2, 0.25·4 = 0.5, 0.5, 1 → / 2; row 1: 0, 1, 2 → / 3; row 2 unchanged.
    want = [[0.25, 0.25, 0.5], [0.0, 1 / 3, 2 / 3], [1.0, 0.0, 0.0]]
    np.testing.assert_allclose(out.weights[0, 0], want, rtol=1e-6)


def test_norm_weighting_refuses_word_level_and_wrong_shapes():
    weights = np.full((1, 1, 2, 2), 0.5, np.float32)
    amap = AttentionMap(["a", "b"], weights, [0, 1], ["a", "b"], [0, 0])
    with pytest.raises(ValueError, match="shape"):
        norm_weighted(amap, np.ones((1, 1, 3)))
    from dataclasses import replace

    with pytest.raises(ValueError, match="piece-level"):
        norm_weighted(replace(amap, level="word"), np.ones((1, 1, 2)))


def test_real_model_norms_align_with_pieces_and_change_the_map(minilm):
    text = "Unbelievably, the committee's recommendations were ignored."
    raw = encode_attention(minilm, text)
    norms = value_norms_of(minilm, raw)
    assert norms.shape == raw.weights.shape[:3]
    assert (norms > 0).all()
    nmap = encode_norm_attention(minilm, text)
    np.testing.assert_allclose(nmap.weights.sum(-1), 1.0, atol=1e-5)
    assert nmap.tokens == raw.tokens
    assert np.abs(nmap.weights - raw.weights).max() > 0.05  # the weighting matters
    pair = encode_attention(minilm, "I like it.", "You do too.")
    assert value_norms_of(minilm, pair).shape == pair.weights.shape[:3]


def test_models_without_attention_get_a_typed_message():
    import probing

    elmo = probing.load_encoder("elmo-mini")
    weights = np.full((1, 1, 1, 1), 1.0, np.float32)
    amap = AttentionMap(["a"], weights, [0], ["a"], [0])
    with pytest.raises(NoAttentionError, match="norm"):
        value_norms_of(elmo, amap)


def test_compare_shares_gives_paired_intervals(minilm, data_dir):
    from probing.analyses.attention import sample_documents

    sents, docs = sample_documents("ud-ewt", "dev", n=12)
    out = compare_shares(minilm, sents, docs, n_boot=200)
    t = out.table
    assert set(t.statistic) == {"sep", "punct", "cls"}
    assert len(t) == 3 * minilm.info.n_contextual_layers
    assert ((t.raw_lo <= t.raw + 1e-12) & (t.raw <= t.raw_hi + 1e-12)).all()
    np.testing.assert_allclose(t["diff"], t["norm"] - t["raw"], atol=1e-12)
    assert out.n_documents >= 2
