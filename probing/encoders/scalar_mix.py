"""ELMo's scalar mix: a learned, softmax-weighted sum of an encoder's layers.

``mix = γ · Σ_j softmax(s)_j · h_j`` (Peters et al., 2018, eq. 1), optionally with each layer
layer-normalised first over its unmasked elements, exactly as AllenNLP's ``ScalarMix``.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor, nn

# AllenNLP's ``tiny_value_of_dtype(float32)``: keeps the variance's square root finite.
_TINY = 1e-13


class ScalarMix(nn.Module):
    """γ · Σ softmax(s)_j · h_j over ``n_layers`` tensors of the same shape.

    Args:
        n_layers: number of layers mixed.
        layer_norm: normalise each layer (mean 0, variance 1 over the unmasked elements of the
            whole tensor, not per position) before mixing; needs ``mask``.
        initial_weights: starting values of the unnormalised scalars s (default zeros, i.e.
            a uniform mix).
        trainable: whether s and γ get gradients.
    """

    def __init__(
        self,
        n_layers: int,
        layer_norm: bool = False,
        initial_weights: Sequence[float] | None = None,
        trainable: bool = True,
    ) -> None:
        super().__init__()
        if n_layers < 1:
            raise ValueError("n_layers must be at least 1")
        init = [0.0] * n_layers if initial_weights is None else [float(w) for w in initial_weights]
        if len(init) != n_layers:
            raise ValueError(f"{len(init)} initial weights for {n_layers} layers")
        self.n_layers = n_layers
        self.layer_norm = layer_norm
        self.scalars = nn.Parameter(torch.tensor(init), requires_grad=trainable)  # s: (L,)
        self.gamma = nn.Parameter(torch.tensor(1.0), requires_grad=trainable)  # γ: ()

    @property
    def weights(self) -> Tensor:
        """The normalised layer weights softmax(s): (n_layers,), summing to 1."""
        return torch.softmax(self.scalars, dim=0)

    def forward(self, layers: Tensor | Sequence[Tensor], mask: Tensor | None = None) -> Tensor:
        """Mix the layers.

        Args:
            layers: (n_layers, ..., dim) tensor or a sequence of n_layers (..., dim) tensors,
                e.g. (3, batch, words, 1024) ELMo layers or ``Encoding.layers`` (3, words, dim).
            mask: (...) true for real positions (required with ``layer_norm``).

        Returns:
            (..., dim) mixture.
        """
        tensors = list(layers.unbind(0)) if isinstance(layers, Tensor) else list(layers)
        if len(tensors) != self.n_layers:
            raise ValueError(f"got {len(tensors)} layers, expected {self.n_layers}")
        if self.layer_norm:
            if mask is None:
                raise ValueError("layer_norm=True needs a mask")
            tensors = [_masked_layer_norm(t, mask) for t in tensors]
        w = self.weights.to(tensors[0].dtype)
        return self.gamma * sum(w[j] * t for j, t in enumerate(tensors))


def _masked_layer_norm(t: Tensor, mask: Tensor) -> Tensor:
    """Normalise ``t`` (..., dim) by the mean and variance of its unmasked elements."""
    m = mask.unsqueeze(-1).to(t.dtype)
    count = m.sum() * t.shape[-1]
    mean = (t * m).sum() / count
    var = (((t * m - mean) * m) ** 2).sum() / count
    return (t - mean) / torch.sqrt(var + _TINY)
