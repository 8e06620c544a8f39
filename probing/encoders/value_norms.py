"""‖f_h(x_j)‖: the norm of each piece's transformed value vector in every head.

Kobayashi et al. (2020), "Attention is not only a weight": head h of a layer adds
Σ_j α_ij f_h(x_j) to position i, where f_h(x) = (x W_V + b_V)[head h's slice] · W_O[head h's
slice] (the value projection, then the head's share of the output projection; the output
bias is shared by all heads and left out, as in their ``BertNormOutput``). Since
‖α_ij f_h(x_j)‖ = α_ij ‖f_h(x_j)‖, the (layers, heads, n) norms computed here and the
attention weights give every norm-weighted map.

The value projection's output is caught with a call-local forward hook on each layer's value
projection (:meth:`ModelParts.value_hook`, :mod:`probing.encoders.call_hooks`: one ordinary forward pass; the model is not
copied, and other threads running it meanwhile are not hooked). Where each family keeps its
value and output projections is :mod:`probing.encoders.surface`'s business.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping

import numpy as np
import torch

from probing.encoders.surface import model_parts


@torch.inference_mode()
def transformed_value_norms(
    model: torch.nn.Module, inputs: Mapping[str, torch.Tensor], n_heads: int
) -> np.ndarray:
    """‖f_h(x_j)‖ for one input: float32 (layers, heads, n_pieces).

    Args:
        model: the bare encoder (BertModel, DistilBertModel…).
        inputs: its forward inputs for ONE sequence, each (1, n_pieces).
        n_heads: attention heads per layer.
    """
    parts = model_parts(model)
    values: list[torch.Tensor | None] = [None] * len(parts.values)

    def keep(i: int) -> Callable[[torch.nn.Module, tuple, torch.Tensor], None]:  # a forward hook
        def hook(_module: torch.nn.Module, _args: tuple, output: torch.Tensor) -> None:
            values[i] = output.detach()

        return hook

    with contextlib.ExitStack() as hooks:
        for i in range(len(parts.values)):
            hooks.enter_context(parts.value_hook(i, keep(i)))
        model(**inputs)
    out = []
    for value, dense in zip(values, parts.head_inputs, strict=True):
        assert value is not None  # every layer ran
        v = value[0].float()  # (n, H·d)
        n, width = v.shape
        d = width // n_heads
        w = dense.weight.float().reshape(dense.weight.shape[0], n_heads, d)  # (D, H, d)
        # f_h(x_j) = v_j[h] · W_O[:, h]ᵀ → (H, n, D); only its norm is kept.
        f = torch.einsum("nhd,Dhd->hnD", v.reshape(n, n_heads, d), w)
        out.append(torch.linalg.vector_norm(f, dim=-1))
    return torch.stack(out).cpu().numpy().astype(np.float32)
