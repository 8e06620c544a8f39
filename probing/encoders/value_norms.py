"""‖f_h(x_j)‖: the norm of each piece's transformed value vector in every head.

Kobayashi et al. (2020), "Attention is not only a weight": head h of a layer adds
Σ_j α_ij f_h(x_j) to position i, where f_h(x) = (x W_V + b_V)[head h's slice] · W_O[head h's
slice] (the value projection, then the head's share of the output projection; the output
bias is shared by all heads and left out, as in their ``BertNormOutput``). Since
‖α_ij f_h(x_j)‖ = α_ij ‖f_h(x_j)‖, the (layers, heads, n) norms computed here and the
attention weights give every norm-weighted map.

The value projection's output is caught with a forward hook on each layer's value ``Linear``
(one ordinary forward pass; the model is not copied or patched).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import torch

from probing.errors import NoAttentionError


def _attention_parts(model: torch.nn.Module) -> list[tuple[torch.nn.Linear, torch.nn.Linear]]:
    """(value projection, output projection) of every layer, bottom to top.

    BERT, RoBERTa, ELECTRA and their relatives keep them at ``encoder.layer[i].attention
    .self.value`` / ``.output.dense``; DistilBERT at ``transformer.layer[i].attention
    .v_lin`` / ``.out_lin``.

    Raises:
        NoAttentionError: an architecture whose attention this function does not know.
    """
    encoder = getattr(model, "encoder", None)
    if encoder is not None and hasattr(encoder, "layer"):
        try:
            return [(b.attention.self.value, b.attention.output.dense) for b in encoder.layer]
        except AttributeError:
            pass
    transformer = getattr(model, "transformer", None)
    if transformer is not None and hasattr(transformer, "layer"):
        try:
            return [(b.attention.v_lin, b.attention.out_lin) for b in transformer.layer]
        except AttributeError:
            pass
    raise NoAttentionError(
        f"Norm-weighted attention does not know where {type(model).__name__} keeps its value "
        "and output projections; raw attention and rollout still work."
    )


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
    parts = _attention_parts(model)
    values: list[torch.Tensor | None] = [None] * len(parts)

    def keep(i: int):  # noqa: ANN202 - a forward hook
        def hook(_module, _args, output: torch.Tensor) -> None:
            values[i] = output.detach()

        return hook

    handles = [v.register_forward_hook(keep(i)) for i, (v, _) in enumerate(parts)]
    try:
        model(**inputs)
    finally:
        for h in handles:
            h.remove()
    out = []
    for value, (_, dense) in zip(values, parts, strict=True):
        assert value is not None  # every layer ran
        v = value[0].float()  # (n, H·d)
        n, width = v.shape
        d = width // n_heads
        w = dense.weight.float().reshape(dense.weight.shape[0], n_heads, d)  # (D, H, d)
        # f_h(x_j) = v_j[h] · W_O[:, h]ᵀ → (H, n, D); only its norm is kept.
        f = torch.einsum("nhd,Dhd->hnD", v.reshape(n, n_heads, d), w)
        out.append(torch.linalg.vector_norm(f, dim=-1))
    return torch.stack(out).cpu().numpy().astype(np.float32)
