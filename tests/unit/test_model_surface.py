"""The per-family hook points (probing.encoders.surface) and call-local hooks, on tiny random
bare encoders of each `transformers` family: shapes and exact identities, never findings."""

from __future__ import annotations

import threading

import pytest
import torch

from probing.encoders import call_hooks
from probing.encoders.surface import model_parts
from probing.encoders.value_norms import transformed_value_norms
from probing.errors import UnsupportedArchitectureError
from probing.interventions.hooks import head_outputs, recorded_hidden, replaced_hidden

FAMILIES = ["bert", "roberta", "distilbert", "electra", "deberta-v2", "mpnet", "albert"]
SIZES = {"num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 48}


def tiny(family: str) -> torch.nn.Module:
    """A tiny random bare encoder of ``family`` (vocabulary 40, 2 layers, 2 heads)."""
    import transformers as tf

    torch.manual_seed(0)
    common = {"vocab_size": 40, "max_position_embeddings": 64}
    if family == "bert":
        return tf.BertModel(tf.BertConfig(hidden_size=32, **SIZES, **common)).eval()
    if family == "roberta":
        cfg = tf.RobertaConfig(hidden_size=32, pad_token_id=1, **SIZES, **common)
        return tf.RobertaModel(cfg).eval()
    if family == "distilbert":
        cfg = tf.DistilBertConfig(dim=32, n_layers=2, n_heads=2, hidden_dim=48, **common)
        return tf.DistilBertModel(cfg).eval()
    if family == "electra":
        cfg = tf.ElectraConfig(embedding_size=16, hidden_size=32, **SIZES, **common)
        return tf.ElectraModel(cfg).eval()
    if family == "deberta-v2":
        cfg = tf.DebertaV2Config(
            hidden_size=32,
            relative_attention=True,
            pos_att_type=["p2c", "c2p"],
            **SIZES,
            **common,
        )
        return tf.DebertaV2Model(cfg).eval()
    if family == "mpnet":
        return tf.MPNetModel(tf.MPNetConfig(hidden_size=32, **SIZES, **common)).eval()
    if family == "albert":
        cfg = tf.AlbertConfig(embedding_size=16, hidden_size=32, **SIZES, **common)
        return tf.AlbertModel(cfg).eval()
    raise ValueError(family)


INPUTS = {"input_ids": torch.tensor([[2, 9, 10, 4, 11, 5, 3]])}


@pytest.fixture(scope="module", params=FAMILIES)
def model(request) -> torch.nn.Module:
    return tiny(request.param)


@torch.inference_mode()
def test_recorded_layers_are_the_models_hidden_states(model):
    parts = model_parts(model)
    assert parts.n_layers == 2 and parts.n_heads == 2 and parts.head_dim == 16
    with recorded_hidden(parts) as store:
        out = model(**INPUTS, output_hidden_states=True)
    assert len(store) == len(out.hidden_states) == 3
    for got, want in zip(store, out.hidden_states, strict=True):
        assert torch.equal(got, want)


@torch.inference_mode()
def test_no_op_hooks_reproduce_the_clean_pass_bit_for_bit(model):
    parts = model_parts(model)
    clean = model(**INPUTS).last_hidden_state
    for layer in range(parts.n_layers + 1):
        with replaced_hidden(parts, layer, lambda h: h), head_outputs(parts, lambda _b, x: x):
            assert torch.equal(model(**INPUTS).last_hidden_state, clean)
    assert call_hooks.active() == 0  # nothing left attached after the blocks


@torch.inference_mode()
def test_a_replaced_layer_is_what_the_next_block_reads(model):
    """The last layer replaced is the output as it is; a lower one changes what follows."""
    parts = model_parts(model)
    clean = model(**INPUTS).last_hidden_state
    with replaced_hidden(parts, parts.n_layers, torch.zeros_like):
        assert torch.count_nonzero(model(**INPUTS).last_hidden_state) == 0
    with replaced_hidden(parts, 1, lambda h: h.flip(1)):
        assert not torch.allclose(model(**INPUTS).last_hidden_state, clean)


@torch.inference_mode()
def test_value_norms_equal_a_hand_computation(model):
    """‖(x W_V + b_V)_h W_O,h‖ from each block's value projection, computed directly."""
    parts = model_parts(model)
    got = transformed_value_norms(model, INPUTS, parts.n_heads)
    kept: list[torch.Tensor] = []
    with parts.value_hook(1, lambda _m, _a, out: kept.append(out)):
        model(**INPUTS)
    v = kept[0][0].reshape(-1, 2, 16)  # (n, H, d)
    w = parts.head_inputs[1].weight.reshape(-1, 2, 16)  # (D, H, d)
    want = torch.stack([(v[:, h] @ w[:, h].T).norm(dim=-1) for h in range(2)])
    assert got.shape == (2, 2, 7)
    torch.testing.assert_close(torch.from_numpy(got[1]), want, rtol=1e-5, atol=1e-6)


def test_albert_layers_are_applications_of_its_shared_block():
    """One module serves both layers; a hook on layer ``l`` acts on the ``l``-th application
    only, in every pass."""
    model = tiny("albert")
    parts = model_parts(model)
    assert parts.shared and parts.layers[1] is parts.layers[2]
    with torch.inference_mode():
        clean = model(**INPUTS, output_hidden_states=True).hidden_states
        for _ in range(2):  # the count restarts with each pass
            with replaced_hidden(parts, 1, lambda h: h.flip(1)):
                first = model(**INPUTS, output_hidden_states=True).hidden_states
            assert torch.equal(first[1], clean[1].flip(1))
            assert not torch.allclose(first[2], clean[2])
        with replaced_hidden(parts, 2, lambda h: 2 * h):
            second = model(**INPUTS, output_hidden_states=True).hidden_states
    assert torch.equal(second[1], clean[1]) and torch.equal(second[2], 2 * clean[2])


def test_albert_with_inner_groups_is_refused_with_its_reason():
    import transformers as tf

    cfg = tf.AlbertConfig(
        embedding_size=16, hidden_size=32, inner_group_num=2, vocab_size=40, **SIZES
    )
    with pytest.raises(UnsupportedArchitectureError, match="ALBERT.*inner"):
        model_parts(tf.AlbertModel(cfg).eval())


@torch.inference_mode()
def test_a_hook_in_one_thread_never_reaches_another_running_the_same_model():
    model = tiny("bert")
    parts = model_parts(model)
    clean = model(**INPUTS).last_hidden_state
    inside, done = threading.Event(), threading.Event()
    seen: list[torch.Tensor] = []

    def hooking() -> None:
        with torch.inference_mode(), replaced_hidden(parts, 1, torch.zeros_like):
            seen.append(model(**INPUTS).last_hidden_state)
            inside.set()
            done.wait(30)  # hold the hook while the other thread runs

    t = threading.Thread(target=hooking)
    t.start()
    assert inside.wait(30)
    try:
        other = model(**INPUTS).last_hidden_state  # while the hook is attached over there
    finally:
        done.set()
        t.join()
    assert torch.equal(other, clean)
    assert not torch.equal(seen[0], clean)
