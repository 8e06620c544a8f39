"""ScalarMix: softmax-weighted layer sum with γ, optional masked layer norm (AllenNLP's)."""

from __future__ import annotations

import pytest
import torch

from probing.encoders.scalar_mix import ScalarMix


def test_starts_as_uniform_average():
    mix = ScalarMix(3)
    torch.testing.assert_close(mix.weights, torch.full((3,), 1 / 3))
    layers = torch.stack([torch.full((2, 4), v) for v in (1.0, 2.0, 6.0)])  # (3, 2, 4)
    torch.testing.assert_close(mix(layers), torch.full((2, 4), 3.0))


def test_weights_are_softmax_of_scalars_times_gamma():
    mix = ScalarMix(3, initial_weights=[0.0, 1.0, 2.0])
    with torch.no_grad():
        mix.gamma.fill_(2.0)
    w = torch.softmax(torch.tensor([0.0, 1.0, 2.0]), 0)
    torch.testing.assert_close(mix.weights, w)
    assert float(mix.weights.detach().sum()) == pytest.approx(1.0)
    layers = [torch.randn(5, 7) for _ in range(3)]
    torch.testing.assert_close(mix(layers), 2.0 * sum(w[j] * layers[j] for j in range(3)))


def test_learns_to_pick_the_informative_layer():
    torch.manual_seed(0)
    layers = torch.randn(3, 64, 8)
    target = layers[2]
    mix = ScalarMix(3)
    opt = torch.optim.Adam(mix.parameters(), lr=0.1)
    for _ in range(200):
        opt.zero_grad()
        loss = ((mix(layers) - target) ** 2).mean()
        loss.backward()
        opt.step()
    assert int(mix.weights.argmax()) == 2 and float(mix.weights.detach()[2]) > 0.9


def test_masked_layer_norm_ignores_padding():
    torch.manual_seed(1)
    mask = torch.tensor([[True, True, False], [True, False, False]])  # (2, 3)
    layers = torch.randn(2, 2, 3, 4) * 5 + 3
    padded = layers.clone()
    padded[:, ~mask] = 1000.0  # garbage at padding must not change the real positions
    mix = ScalarMix(2, layer_norm=True, initial_weights=[0.3, -0.2])
    a, b = mix(layers, mask), mix(padded, mask)
    torch.testing.assert_close(a[mask], b[mask])
    # AllenNLP: mean/variance over all unmasked elements of the whole tensor.
    w = mix.weights
    expect = 0
    for j in range(2):
        real = layers[j][mask]  # (n_real, 4)
        expect = expect + w[j] * (layers[j] - real.mean()) / torch.sqrt(
            real.var(unbiased=False) + 1e-13
        )
    torch.testing.assert_close(a[mask], expect[mask])


def test_bad_arguments():
    with pytest.raises(ValueError):
        ScalarMix(0)
    with pytest.raises(ValueError):
        ScalarMix(2, initial_weights=[1.0])
    with pytest.raises(ValueError, match="expected 3"):
        ScalarMix(3)(torch.zeros(2, 4))
    with pytest.raises(ValueError, match="mask"):
        ScalarMix(2, layer_norm=True)(torch.zeros(2, 3, 4))


def test_frozen_mix_has_no_gradients():
    mix = ScalarMix(3, trainable=False)
    assert not any(p.requires_grad for p in mix.parameters())
