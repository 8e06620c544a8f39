"""The committed ELMo-mini loads offline through the registry and behaves like an ELMo."""

from __future__ import annotations

import json

import numpy as np
import pytest

import probing
from probing.models.embedded import ELMO_MINI_DIR


@pytest.fixture(scope="module")
def elmo_mini():
    return probing.load_encoder("elmo-mini")


def test_loads_offline_with_its_provenance(elmo_mini):
    info = elmo_mini.info
    assert info.family == "elmo" and info.n_contextual_layers == 2 and info.dim == 256
    assert info.architecture == "elmo"
    assert not info.has_attention and not info.has_mlm_head
    assert "trained here by ContextLens" in info.provenance
    assert "elmo-original" in info.how_to_get_real


def test_layers_are_finite_and_not_constant(elmo_mini):
    river, money = elmo_mini.encode(["We sat on the river bank .", "She opened a bank account ."])
    assert river.layers.shape == (3, 7, 256) and river.layers.dtype == np.float32
    assert np.isfinite(river.layers).all()
    for layer in river.layers:
        assert layer.std(axis=0).mean() > 1e-3  # words differ from each other in every layer
    # layer 0 is the token layer repeated for both directions, and it is the static vector
    np.testing.assert_array_equal(river.layers[0, :, :128], river.layers[0, :, 128:])
    np.testing.assert_array_equal(river.static, river.layers[0])
    i, j = river.words.index("bank"), money.words.index("bank")
    np.testing.assert_allclose(river.static[i], money.static[j], atol=1e-6)
    for layer in (1, 2):
        u, v = river.layers[layer, i], money.layers[layer, j]
        assert float(u @ v / np.linalg.norm(u) / np.linalg.norm(v)) < 0.99


def test_batch_equals_one_at_a_time(elmo_mini):
    texts = ["A short one .", "A much longer sentence that pads the other one in the batch ."]
    batched = elmo_mini.encode(texts)
    for text, b in zip(texts, batched, strict=True):
        (single,) = elmo_mini.encode(text)
        np.testing.assert_allclose(single.layers, b.layers, atol=1e-5)


def test_model_card_reports_the_logged_heldout_perplexity():
    log = json.loads((ELMO_MINI_DIR / "training_log.json").read_text())
    last = log["heldout"][-1]
    card = (ELMO_MINI_DIR / "README.md").read_text()
    assert f"{last['ppl_forward']:.1f}" in card and f"{last['ppl_backward']:.1f}" in card
    assert f"{log['tokens_seen']:,}" in card
    # it learnt something: far below the perplexity of guessing uniformly over its vocabulary
    assert (
        last["ppl_forward"] < log["vocab_size"] / 20
        and last["ppl_backward"] < log["vocab_size"] / 20
    )
