"""Value Zeroing and ALTI (probing.attribution) against an explicit, independent computation of
their formulas on a seeded 2-layer toy BERT: each block is recomputed by hand from its weights
(float64), never through the model's forward."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import pytest
import torch

from probing.attribution.alti import alti
from probing.attribution.value_zeroing import rolled_out, value_zeroing, zeroed_values
from probing.encoders.surface import model_parts

if TYPE_CHECKING:
    from transformers.models.bert.modeling_bert import BertLayer, BertModel

IDS = torch.tensor([[2, 9, 10, 4, 11, 5, 3]])
N_HEADS = 2


@pytest.fixture(scope="module")
def toy() -> torch.nn.Module:
    import transformers as tf

    torch.manual_seed(0)
    # initializer_range 0.2 (not 0.02): with tiny random weights the residual swamps the
    # attention and ALTI's off-diagonal contributions would all clamp to 0.
    cfg = tf.BertConfig(
        vocab_size=40,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=N_HEADS,
        intermediate_size=48,
        max_position_embeddings=64,
        initializer_range=0.2,
        attn_implementation="eager",
    )
    return tf.BertModel(cfg).eval()


def _w(linear: torch.nn.Linear) -> tuple[torch.Tensor, torch.Tensor]:
    return linear.weight.detach().double(), linear.bias.detach().double()


def _ln(z: torch.Tensor, ln: torch.nn.LayerNorm) -> torch.Tensor:
    mu = z.mean(-1, keepdim=True)
    var = ((z - mu) ** 2).mean(-1, keepdim=True)
    return ln.weight.double() * (z - mu) / torch.sqrt(var + ln.eps) + ln.bias.double()


def _attention(
    layer: BertLayer, x: torch.Tensor, zero: int | None = None
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """α (H, n, n), per-head values (H, n, dh), the attention sublayer's pre-LN sum."""
    sa = layer.attention.self
    (wq, bq), (wk, bk), (wv, bv) = _w(sa.query), _w(sa.key), _w(sa.value)
    n, d = x.shape
    dh = d // N_HEADS
    q, k, v = x @ wq.T + bq, x @ wk.T + bk, x @ wv.T + bv
    if zero is not None:
        v = v.clone()
        v[zero] = 0.0
    q, k, v = (t.reshape(n, N_HEADS, dh).transpose(0, 1) for t in (q, k, v))
    alpha = torch.softmax(q @ k.transpose(1, 2) / math.sqrt(dh), dim=-1)
    context = (alpha @ v).transpose(0, 1).reshape(n, d)
    wo, bo = _w(layer.attention.output.dense)
    return alpha, v, context @ wo.T + bo + x


def _block(layer: BertLayer, x: torch.Tensor, zero: int | None = None) -> torch.Tensor:
    """One post-LN BERT block by hand, value row ``zero`` set to 0."""
    h = _ln(_attention(layer, x, zero)[2], layer.attention.output.LayerNorm)
    wi, bi = _w(layer.intermediate.dense)
    wo, bo = _w(layer.output.dense)
    a = h @ wi.T + bi
    ff = 0.5 * a * (1.0 + torch.erf(a / math.sqrt(2.0))) @ wo.T + bo
    return _ln(ff + h, layer.output.LayerNorm)


@torch.inference_mode()
def _inputs_by_layer(model: BertModel) -> list[torch.Tensor]:
    out = model(input_ids=IDS, output_hidden_states=True)
    return [h[0].double() for h in out.hidden_states]


@torch.no_grad()
def test_value_zeroing_equals_the_formula_by_hand(toy):
    hidden = _inputs_by_layer(toy)
    n = IDS.shape[1]
    want = np.zeros((2, n, n))
    for b, layer in enumerate(toy.encoder.layer):
        clean = _block(layer, hidden[b])
        assert torch.allclose(clean, hidden[b + 1], atol=1e-5)  # the hand block is the model's
        for j in range(n):
            cut = _block(layer, hidden[b], zero=j)
            want[b, :, j] = (1 - torch.nn.functional.cosine_similarity(cut, clean, dim=-1)).numpy()
    want /= want.sum(-1, keepdims=True)
    got = value_zeroing(toy, {"input_ids": IDS})
    np.testing.assert_allclose(got, want, atol=2e-4)
    assert got.std() > 0.01  # the maps are not flat: the check above has teeth
    np.testing.assert_allclose(rolled_out(got)[1], want[1] @ want[0], atol=5e-4)


@torch.no_grad()
def test_alti_equals_the_decomposition_by_hand(toy):
    hidden = _inputs_by_layer(toy)
    n, d = IDS.shape[1], hidden[0].shape[1]
    want = np.zeros((2, n, n))
    for b, layer in enumerate(toy.encoder.layer):
        x = hidden[b]
        alpha, v, pre_ln = _attention(layer, x)
        ln = layer.attention.output.LayerNorm
        wo, bo = _w(layer.attention.output.dense)
        dh = d // N_HEADS
        centre = torch.eye(d, dtype=torch.float64) - 1.0 / d
        for i in range(n):
            var = ((pre_ln[i] - pre_ln[i].mean()) ** 2).mean()
            lin = centre @ torch.diag(ln.weight.double()) / torch.sqrt(var + ln.eps)  # z ↦ z·lin
            parts = []
            for j in range(n):
                t = sum(alpha[h, i, j] * v[h, j] @ wo[:, h * dh : (h + 1) * dh].T for h in range(2))
                t = t + (x[j] if i == j else 0.0)
                parts.append(t @ lin)
            y = sum(parts) + bo @ lin + ln.bias.double()
            assert torch.allclose(y, _ln(pre_ln[i], ln), atol=1e-9)  # the sum is the LN output
            for j, tj in enumerate(parts):
                want[b, i, j] = max(0.0, float(y.abs().sum() - (y - tj).abs().sum()))
    want /= want.sum(-1, keepdims=True)
    got = alti(toy, {"input_ids": IDS})
    np.testing.assert_allclose(got, want, atol=1e-4)
    assert (got[:, ~np.eye(n, dtype=bool)] > 0.01).any()  # context mixes, not only residual


@torch.inference_mode()
def test_a_zero_length_change_leaves_outputs_bit_for_bit(toy):
    parts = model_parts(toy)
    clean = toy(input_ids=IDS).last_hidden_state
    for block in range(parts.n_layers):
        with zeroed_values(parts, block, [], []):
            assert torch.equal(toy(input_ids=IDS).last_hidden_state, clean)
    with zeroed_values(parts, 0, [0], [3]):  # while a real zeroing changes them
        assert not torch.equal(toy(input_ids=IDS).last_hidden_state, clean)
    assert torch.equal(toy(input_ids=IDS).last_hidden_state, clean)  # and leaves nothing behind


@pytest.mark.parametrize("family", ["roberta", "distilbert", "electra", "deberta-v2", "mpnet"])
def test_alti_decomposes_every_known_family(family):
    """ALTI checks internally that its decomposition reproduces the attention LayerNorm's
    output; each family passes that check, and Value Zeroing runs through the same surface."""
    from tests.unit.test_model_surface import INPUTS, tiny

    model = tiny(family)
    model.config._attn_implementation = "eager"
    for scores in (alti(model, INPUTS), value_zeroing(model, INPUTS)):
        assert scores.shape == (2, 7, 7)
        np.testing.assert_allclose(scores.sum(-1), 1.0, atol=1e-9)


def test_albert_gets_value_zeroing_per_application_and_a_reason_for_alti():
    """ALBERT's one block serves both layers: Value Zeroing zeroes its value output in the
    chosen application only (layers differ), ALTI refuses with the reason."""
    from probing.errors import UnsupportedArchitectureError
    from tests.unit.test_model_surface import INPUTS, tiny

    model = tiny("albert")
    model.config._attn_implementation = "eager"
    scores = value_zeroing(model, INPUTS)
    assert scores.shape == (2, 7, 7)
    np.testing.assert_allclose(scores.sum(-1), 1.0, atol=1e-9)
    assert not np.allclose(scores[0], scores[1])
    with pytest.raises(UnsupportedArchitectureError, match="shared block"):
        alti(model, INPUTS)
