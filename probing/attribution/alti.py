"""ALTI, Aggregation of Layer-wise Token-to-token Interactions (Ferrando et al. 2022,
"Measuring the mixing of contextual information in the transformer").

A post-LN block's attention sublayer, LayerNorm included, is a sum over source tokens:

    y_i = LN(Σ_j T_ij + b_O),   T_ij = Σ_h α_hij v_hj W_O,hᵀ + [i = j] x_j

and LN is linear once the row's standard deviation σ_i is fixed: L_i(z) = γ ⊙ (z − mean z)/σ_i,
so ``y_i = Σ_j L_i(T_ij) + L_i(b_O) + β``. Token j's contribution to i is
``c_ij = max(0, ‖y_i‖₁ − ‖y_i − L_i(T_ij)‖₁)``, rows normalised to sum to 1, and rolled out
across layers without a residual term (the residual is inside ``T_ii``): ``R_l = C_l R_{l−1}``.
This follows the authors' reference code (mt-upc/transformer-contributions,
``src/contributions.py`` and ``normalize_contributions(scaling="min_sum")``), which also leaves
the feed-forward sublayer out of the decomposition.

Where this differs: σ_i is ``sqrt(var + eps)`` as LayerNorm computes it (the reference adds eps
to the states before taking the std, which ignores it); the parts come from
:mod:`probing.encoders.surface` through call-local hooks. The sublayer's LayerNorm (not a
surface hook point yet) is the block's first ``torch.nn.LayerNorm`` (post-LN BERT, RoBERTa,
ELECTRA, DistilBERT, MPNet, DeBERTa-v2); the decomposition is checked to reproduce that
LayerNorm's recorded output, and an architecture where it does not is refused.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping

import numpy as np
import torch

from probing.attribution.value_zeroing import normalise_rows
from probing.encoders.call_hooks import forward_hook
from probing.encoders.surface import ModelParts, model_parts
from probing.errors import NoAttentionError, UnsupportedArchitectureError


def attention_layer_norm(parts: ModelParts, block: int) -> torch.nn.LayerNorm:
    """The LayerNorm after block ``block``'s attention sublayer (its first LayerNorm)."""
    for m in parts.layers[block + 1].modules():
        if isinstance(m, torch.nn.LayerNorm):
            return m
    raise UnsupportedArchitectureError(
        f"ALTI needs the LayerNorm after the attention of {parts.architecture}'s blocks, and "
        "its block has none."
    )


def _decompose(
    x: torch.Tensor,
    values: torch.Tensor,
    alpha: torch.Tensor,
    dense: torch.nn.Linear,
    ln: torch.nn.LayerNorm,
    ln_in: torch.Tensor,
    n_heads: int,
) -> tuple[torch.Tensor, torch.Tensor]:
    """(L_i(T_ij) (n, n, D), y_i (n, D)) for one block, float64; shapes in the docstring."""
    n, width = values.shape
    dh = width // n_heads
    w = dense.weight.double().reshape(dense.weight.shape[0], n_heads, dh)  # (D, H, dh)
    f = torch.einsum("jhd,Dhd->hjD", values.reshape(n, n_heads, dh), w)  # (H, n, D)
    t = torch.einsum("hij,hjD->ijD", alpha, f) + torch.diag_embed(x.T).permute(1, 2, 0)
    sigma = torch.sqrt(ln_in.var(-1, unbiased=False) + ln.eps)  # (n,)
    gamma = ln.weight.double()

    def linear(z: torch.Tensor) -> torch.Tensor:
        return gamma * (z - z.mean(-1, keepdim=True))

    lt = linear(t) / sigma[:, None, None]
    b = dense.bias.double() if dense.bias is not None else torch.zeros_like(gamma)
    beta = ln.bias.double() if ln.bias is not None else torch.zeros_like(gamma)
    y = lt.sum(1) + linear(b)[None] / sigma[:, None] + beta
    return lt, y


@torch.inference_mode()
def alti(model: torch.nn.Module, inputs: Mapping[str, torch.Tensor]) -> np.ndarray:
    """ALTI contributions of every block for ONE sequence: (L, n, n) float64, ``[l, i, j]``
    the share of token j in token i's attention-sublayer output of block l + 1 (rows sum to 1).

    Raises:
        NoAttentionError: the model returned no attention weights (non-eager attention).
        UnsupportedArchitectureError: the decomposition does not reproduce the block's
            attention LayerNorm (an architecture laid out otherwise).
    """
    parts = model_parts(model)
    if parts.shared:  # its LayerNorms serve every layer: one hook cannot tell them apart
        raise UnsupportedArchitectureError(
            f"ALTI is not computed for {parts.architecture}: its one shared block (and its "
            "LayerNorms) serve every layer, and the decomposition reads each layer's "
            "LayerNorm input apart."
        )
    rec: dict[str, list[torch.Tensor]] = {"x": [], "v": [], "ln_in": [], "ln_out": []}
    lns = [attention_layer_norm(parts, b) for b in range(parts.n_layers)]

    def out_of(key: str) -> Callable[[torch.nn.Module, tuple, object], None]:
        def hook(_m: torch.nn.Module, _a: tuple, out: object) -> None:
            rec[key].append((out[0] if isinstance(out, tuple) else out)[0].detach().double())

        return hook

    def ln_hook(_m: torch.nn.Module, args: tuple, out: torch.Tensor) -> None:
        rec["ln_in"].append(args[0][0].detach().double())
        rec["ln_out"].append(out[0].detach().double())

    with contextlib.ExitStack() as stack:
        for b in range(parts.n_layers):
            stack.enter_context(parts.hidden_hook(b, out_of("x")))
            stack.enter_context(parts.value_hook(b, out_of("v")))
            stack.enter_context(forward_hook(lns[b], ln_hook))
        out = model(**inputs, output_attentions=True)
    atts = out.attentions
    if not atts or any(a is None for a in atts):
        raise NoAttentionError(f"{parts.architecture} returned no attention weights.")
    n = int(inputs["input_ids"].shape[1])
    scores = np.zeros((parts.n_layers, n, n))
    for b in range(parts.n_layers):
        lt, y = _decompose(
            rec["x"][b],
            rec["v"][b],
            atts[b][0].double(),
            parts.head_inputs[b],
            lns[b],
            rec["ln_in"][b],
            parts.n_heads,
        )
        if not torch.allclose(y, rec["ln_out"][b], atol=1e-3, rtol=1e-3):
            raise UnsupportedArchitectureError(
                f"ALTI's decomposition does not reproduce the attention LayerNorm of "
                f"{parts.architecture}'s block {b + 1}: its blocks are laid out otherwise "
                "(post-LN BERT-style blocks are supported)."
            )
        dist = (y[:, None, :] - lt).abs().sum(-1)  # (n, n): ‖y_i − L_i(T_ij)‖₁
        c = (y.abs().sum(-1)[:, None] - dist).clamp(min=0)
        scores[b] = c.cpu().numpy()
    return normalise_rows(scores)
