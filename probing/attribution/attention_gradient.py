"""Attention × gradient, rolled out (Chefer et al. 2021, "Generic attention-model
explainability", their rule for self-attention encoders).

Per layer, ``Ā_l = mean_h (A_lh ⊙ ∂f/∂A_lh)⁺`` (attention weights times the gradient of the
target's log-probability with respect to them, negative parts dropped, heads averaged);
relevance is propagated from the input up: ``R ← R + Ā_l R`` from ``R = I``. A piece's score
is ``R[mask, j]`` without the identity (what the mask position took from j through the
layers); ``per_layer[l]`` is ``Ā_l[mask, :]`` alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import torch

from probing.attribution.case import MaskedCase, target_logprob
from probing.errors import NoAttentionError

if TYPE_CHECKING:
    from probing.encoders.bert import TransformersMaskedLM


@dataclass(frozen=True)
class AttentionGradient:
    """pieces: relevance of each piece for the mask, rolled out (n,); per_layer: each
    layer's ``Ā_l`` row at the mask (L, n)."""

    pieces: np.ndarray
    per_layer: np.ndarray


def attention_x_gradient(encoder: TransformersMaskedLM, case: MaskedCase) -> AttentionGradient:
    """Attention × gradient for one case (one forward and one backward pass).

    Raises:
        NoAttentionError: the model returned no attention weights (a non-eager attention).
    """
    ids = case.inputs["input_ids"].to(encoder.device)
    with torch.inference_mode(False), torch.enable_grad():  # also under a caller's no_grad
        emb = encoder.model.get_input_embeddings()(ids).detach()
        f, out = target_logprob(encoder, case, emb, output_attentions=True)
        atts = list(out.attentions or ())
        if not atts or any(a is None for a in atts):
            raise NoAttentionError(f"{encoder.name} returned no attention weights.")
        grads = torch.autograd.grad(f.sum(), atts)
    n = ids.shape[1]
    rel = torch.eye(n, dtype=torch.float64)
    rows = []
    for a, g in zip(atts, grads, strict=True):
        cam = (a[0] * g[0]).clamp(min=0).mean(0).detach().double().cpu()  # (n, n)
        rows.append(cam[case.mask_position].numpy())
        rel = rel + cam @ rel
    pieces = (rel - torch.eye(n, dtype=torch.float64))[case.mask_position].numpy()
    return AttentionGradient(pieces=pieces, per_layer=np.stack(rows))
