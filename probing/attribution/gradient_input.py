"""Gradient × input (Shrikumar et al. 2017; Kindermans et al. 2016) of a fill-mask guess:
a piece's score is ``x_j · ∂f/∂x_j`` over its word-embedding dimensions, ``f`` the target's
log-probability at the mask (one forward and one backward pass)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import torch

from probing.attribution.case import MaskedCase, target_logprob

if TYPE_CHECKING:
    from probing.encoders.bert import TransformersMaskedLM


def gradient_x_input(encoder: TransformersMaskedLM, case: MaskedCase) -> np.ndarray:
    """Per-piece scores (n,), float64; :meth:`MaskedCase.to_words` gives words. Runs with
    gradients on even when called under ``torch.inference_mode``/``no_grad``."""
    ids = case.inputs["input_ids"].to(encoder.device)
    with torch.inference_mode(False), torch.enable_grad():
        emb = encoder.model.get_input_embeddings()(ids).detach().requires_grad_(True)
        f, _ = target_logprob(encoder, case, emb)
        (grad,) = torch.autograd.grad(f.sum(), emb)
    return (grad * emb).sum(-1)[0].detach().double().cpu().numpy()
