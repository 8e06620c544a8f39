"""The BERT-family encoder on the real embedded model (all-MiniLM-L6-v2)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import probing
from probing.encoders.base import normalize_sentences, split_words
from probing.encoding import pool_pieces
from probing.errors import EmptyInputError, InputTooLongError, UnknownModelError


def test_shapes_and_provenance(minilm):
    (enc,) = minilm.encode("The river bank was muddy.")
    assert enc.layers.dtype == np.float32
    assert enc.layers.shape == (7, 6, 384)  # 6 layers + embeddings, 6 words, 384 dims
    assert enc.static.shape == (6, 384)
    assert enc.model.name == "minilm-l6"
    assert enc.model.n_contextual_layers == 6 and enc.model.dim == 384
    assert "all-MiniLM-L6-v2" in enc.model.provenance
    assert np.isfinite(enc.layers).all()


def test_word_alignment_multi_piece_words_and_punctuation(minilm):
    (enc,) = minilm.encode("Unbelievably, ContextLens works!")
    assert enc.words == ["Unbelievably", ",", "ContextLens", "works", "!"]
    assert enc.pieces[0] == "[CLS]" and enc.pieces[-1] == "[SEP]"
    assert enc.word_ids[0] is None and enc.word_ids[-1] is None
    by_word = {w: [enc.pieces[i] for i in enc.pieces_of(k)] for k, w in enumerate(enc.words)}
    assert len(by_word["Unbelievably"]) > 1
    assert "".join(p.removeprefix("##") for p in by_word["Unbelievably"]) == "unbelievably"
    assert "".join(p.removeprefix("##") for p in by_word["ContextLens"]) == "contextlens"
    assert by_word[","] == [","] and by_word["!"] == ["!"]
    # pieces of one word are contiguous and in order
    for k in range(len(enc.words)):
        idx = enc.pieces_of(k)
        assert idx == list(range(idx[0], idx[-1] + 1))


@pytest.mark.parametrize("pooling", ["first", "mean", "last"])
def test_pooling_matches_hand_computation(minilm, pooling):
    words = ["Unbelievably", "the", "ContextLens", "banks", "overflowed", "."]
    (enc,) = minilm.encode([words], pooling=pooling)
    batch = minilm.tokenizer(words, is_split_into_words=True, return_tensors="pt")
    with torch.inference_mode():
        out = minilm.model(**batch, output_hidden_states=True)
        emb = minilm.model.embeddings.word_embeddings(batch["input_ids"])[0].numpy()
    hidden = torch.stack(out.hidden_states)[:, 0].numpy()  # (7, T, 384)
    ids = batch.word_ids(0)
    for w in range(len(words)):
        pos = [i for i, k in enumerate(ids) if k == w]
        pick = {"first": pos[:1], "last": pos[-1:], "mean": pos}[pooling]
        np.testing.assert_allclose(enc.layers[:, w], hidden[:, pick].mean(axis=1), atol=1e-5)
        np.testing.assert_allclose(enc.static[w], emb[pick].mean(axis=0), atol=1e-6)


def test_static_is_input_embedding_not_hidden_state_zero(minilm):
    (a,) = minilm.encode("bank")
    (b,) = minilm.encode("the bank")
    # hidden_states[0] adds position embeddings, so it moves with the position ...
    assert not np.allclose(a.layers[0, 0], b.layers[0, 1], atol=1e-3)
    # ... the static vector does not.
    np.testing.assert_array_equal(a.static[0], b.static[1])


def test_same_word_static_identical_contextual_different(minilm):
    river, money = minilm.encode(["We sat on the river bank .", "She opened a bank account ."])
    i, j = river.words.index("bank"), money.words.index("bank")
    np.testing.assert_array_equal(river.static[i], money.static[j])
    for layer in range(1, 7):
        u, v = river.layers[layer, i], money.layers[layer, j]
        cos = float(u @ v / np.linalg.norm(u) / np.linalg.norm(v))
        assert cos < 0.99, (layer, cos)


def test_attentions_rows_sum_to_one(minilm):
    (enc,) = minilm.encode("Attention rows are distributions.", attentions=True)
    n = len(enc.pieces)
    assert enc.attentions.shape == (6, 12, n, n)
    np.testing.assert_allclose(enc.attentions.sum(-1), 1.0, atol=1e-5)
    assert (enc.attentions >= 0).all()


def test_batch_equals_one_at_a_time(minilm):
    texts = [
        "Short one.",
        "A considerably longer sentence that forces padding in the batch .",
        "Mid length here .",
    ]
    batched = minilm.encode(texts, attentions=True)
    for text, b in zip(texts, batched, strict=True):
        (single,) = minilm.encode(text, attentions=True)
        assert single.words == b.words and single.pieces == b.pieces
        np.testing.assert_allclose(single.layers, b.layers, atol=2e-5)
        np.testing.assert_allclose(single.attentions, b.attentions, atol=2e-5)


def test_long_input_raises_interactively_and_windowed_path_covers_every_word(minilm):
    words = [f"w{i % 97}" for i in range(2000)]
    with pytest.raises(InputTooLongError) as info:
        minilm.encode([words])
    assert info.value.limit == 512 and info.value.length > 2000
    (enc,) = minilm.encode([words], windowed=True)
    assert enc.layers.shape == (7, 2000, 384)
    assert np.isfinite(enc.layers).all()
    assert (np.abs(enc.layers[-1]).sum(axis=1) > 0).all()  # every word has a vector
    windows = enc.extras["windows"]
    assert windows[0][0] == 0 and windows[-1][1] == 2000
    assert all(b[0] < a[1] for a, b in zip(windows, windows[1:], strict=False))  # overlapping
    # A word deep inside a window is encoded as if the window were the whole input.
    start, end = windows[1]
    (part,) = minilm.encode([words[start:end]])
    mid = (start + end) // 2
    np.testing.assert_allclose(enc.layers[:, mid], part.layers[:, mid - start], atol=2e-5)


def test_word_without_pieces_still_gets_a_vector(minilm):
    (enc,) = minilm.encode([["a", "\u200b", "b"]])
    assert enc.layers.shape[1] == 3


def test_input_forms():
    assert normalize_sentences("Hello world.") == [["Hello", "world", "."]]
    assert normalize_sentences(["A b.", "C"]) == [["A", "b", "."], ["C"]]
    assert normalize_sentences([["New", "York"]]) == [["New", "York"]]
    assert split_words("don't stop-gap, 3.5") == ["don't", "stop-gap", ",", "3", ".", "5"]
    with pytest.raises(EmptyInputError):
        normalize_sentences("   ")
    with pytest.raises(EmptyInputError):
        normalize_sentences([])
    with pytest.raises(EmptyInputError):
        normalize_sentences(["ok", "\x00\x01"])


def test_pool_pieces_rejects_unknown_pooling():
    with pytest.raises(ValueError, match="pooling"):
        pool_pieces(np.zeros((3, 2)), [None, 0, None], 1, "max")


def test_unknown_model_lists_choices():
    with pytest.raises(UnknownModelError) as info:
        probing.load_encoder("no-such-model")
    assert "minilm-l6" in str(info.value) and "elmo-mini" in str(info.value)


def test_hub_model_unavailable_offline_says_how_to_get_it():
    with pytest.raises(probing.ModelUnavailableError) as info:
        probing.load_encoder("bert-base-uncased")
    msg = str(info.value)
    assert "Hugging Face cache" in msg and "folder" in msg


def test_models_loaded_once_per_process(minilm):
    assert probing.load_encoder("minilm-l6") is minilm


def test_local_folder_loads(minilm, tmp_path):
    from probing.models.embedded import minilm_dir

    enc = probing.load_encoder(str(minilm_dir()))
    assert enc.info.n_contextual_layers == 6
    (a,) = enc.encode("same weights")
    (b,) = minilm.encode("same weights")
    np.testing.assert_array_equal(a.layers, b.layers)
