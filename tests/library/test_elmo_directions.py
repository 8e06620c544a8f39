"""ELMo's forward and backward halves on the real elmo-mini: each reads one side only."""

from __future__ import annotations

import numpy as np
import pytest

from probing.analyses.elmo_directions import (
    direction_slice,
    direction_vectors,
    occurrence_similarity,
    wsd_by_direction,
)
from probing.errors import TargetNotFoundError


@pytest.fixture(scope="module")
def elmo():
    import probing

    return probing.load_encoder("elmo-mini")


def _layers(encoder, sentence: str) -> np.ndarray:
    (enc,) = encoder.encode([sentence])  # alone: no padding, no batch neighbours
    return enc.layers


def test_layers_are_forward_then_backward_halves(elmo):
    layers = _layers(elmo, "The river bank was muddy")
    dim = layers.shape[-1]
    assert dim == elmo.info.dim and dim % 2 == 0
    assert direction_slice(dim, "forward") == slice(0, dim // 2)
    # layer 0 is the token vector duplicated: [x; x]
    np.testing.assert_array_equal(
        direction_vectors(layers[0], "forward"), direction_vectors(layers[0], "backward")
    )
    assert not np.allclose(
        direction_vectors(layers[1], "forward"), direction_vectors(layers[1], "backward")
    )


def test_forward_half_ignores_the_words_after(elmo):
    a = _layers(elmo, "I sat on the bank of the river")
    b = _layers(elmo, "I sat on the bank near an old mill")
    i = 4  # "bank": words 0..4 are the same
    for layer in range(1, a.shape[0]):
        np.testing.assert_allclose(
            direction_vectors(a[layer, : i + 1], "forward"),
            direction_vectors(b[layer, : i + 1], "forward"),
            rtol=1e-5,
            atol=1e-5,
        )
        assert not np.allclose(
            direction_vectors(a[layer, i], "backward"),
            direction_vectors(b[layer, i], "backward"),
            atol=1e-3,
        )


def test_backward_half_ignores_the_words_before(elmo):
    a = _layers(elmo, "The river bank was muddy")
    b = _layers(elmo, "Yesterday my savings bank was muddy")
    # "bank was muddy" are the last three words of both
    for layer in range(1, a.shape[0]):
        np.testing.assert_allclose(
            direction_vectors(a[layer, -3:], "backward"),
            direction_vectors(b[layer, -3:], "backward"),
            rtol=1e-5,
            atol=1e-5,
        )
        assert not np.allclose(
            direction_vectors(a[layer, -3], "forward"),
            direction_vectors(b[layer, -3], "forward"),
            atol=1e-3,
        )


def test_occurrence_similarity_elmo_and_bert(elmo, minilm):
    same_left = ("I sat on the bank of the river", "I sat on the bank of the money")
    t = occurrence_similarity(elmo, "bank", *same_left)
    fwd = t[t["view"] == "forward"].set_index("layer")["similarity"]
    bwd = t[t["view"] == "backward"].set_index("layer")["similarity"]
    np.testing.assert_allclose(fwd, 1.0, atol=1e-5)  # what follows is invisible to it
    assert (bwd.loc[1:] < 0.999).all() and bwd.loc[0] == pytest.approx(1.0, abs=1e-6)
    b = occurrence_similarity(minilm, "bank", *same_left)
    assert set(b["view"]) == {"fused"}
    assert (b.set_index("layer")["similarity"].loc[1:] < 0.999).all()  # BERT sees both sides
    with pytest.raises(TargetNotFoundError):
        occurrence_similarity(elmo, "shore", *same_left)


def test_wsd_by_direction_small(elmo, tmp_path, monkeypatch):
    monkeypatch.setenv("CONTEXTLENS_CACHE_DIR", str(tmp_path))
    t = wsd_by_direction(elmo, max_train_sentences=150, max_test_sentences=40, n_boot=30)
    f1 = t[t["metric"] == "f1"].set_index(["layer", "direction"])["value"]
    assert set(t["direction"]) == {"forward", "backward", "both"}
    assert sorted(set(t["layer"])) == [0, 1, 2]
    # layer 0 halves are identical, so the two one-way views score the same
    assert f1.loc[(0, "forward")] == f1.loc[(0, "backward")]
    assert ((t["ci_low"] <= t["value"]) & (t["value"] <= t["ci_high"])).all()
    assert (f1 > 0.3).all()  # first-sense backoff alone scores well above this on SemCor
    with pytest.raises(ValueError, match="not an ELMo model"):
        wsd_by_direction("minilm-l6")


def test_wsd_by_direction_paired_differences(elmo, tmp_path, monkeypatch):
    monkeypatch.setenv("CONTEXTLENS_CACHE_DIR", str(tmp_path))
    t = wsd_by_direction(elmo, max_train_sentences=100, max_test_sentences=30, n_boot=30)
    f1 = t[t["metric"] == "f1"].set_index(["layer", "direction"])["value"]
    paired = t.attrs["paired"]
    assert [(d["layer"], d["a"], d["b"]) for d in paired][:3] == [
        (1, "both", "forward"),
        (1, "both", "backward"),
        (1, "forward", "backward"),
    ]
    assert len(paired) == 6
    for d in paired:
        expected = f1.loc[(d["layer"], d["a"])] - f1.loc[(d["layer"], d["b"])]
        assert d["f1_difference"] == pytest.approx(expected)
        assert d["ci_low"] <= d["f1_difference"] <= d["ci_high"]
