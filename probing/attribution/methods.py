"""Every attribution method for one fill-mask case, as per-word scores for the target.

Methods (one name each, used by the CLI, the study and the pages):

- ``integrated_gradients``: IG on the word embeddings (:mod:`.integrated_gradients`).
- ``gradient_x_input``: x · ∂f/∂x (:mod:`.gradient_input`).
- ``attention_x_gradient``: Chefer et al.'s rolled-out attention × gradient
  (:mod:`.attention_gradient`).
- ``value_zeroing`` and ``alti``: the mask position's row of the last layer's rollout
  (:mod:`.value_zeroing`, :mod:`.alti`): how much of each input token reaches the mask. These
  do not look at the target at all; they say what the mask's representation is made of.

Per layer (for agreement between methods, Mohebbi et al. 2023's table), the mask's row of
each layer's own map, not rolled out: ``attention`` (raw weights, head mean),
``value_zeroing``, ``alti`` and ``attention_x_gradient``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import torch

from probing.attribution.alti import alti
from probing.attribution.attention_gradient import attention_x_gradient
from probing.attribution.case import MaskedCase
from probing.attribution.gradient_input import gradient_x_input
from probing.attribution.integrated_gradients import (
    DEFAULT_BASELINE,
    DEFAULT_STEPS,
    IGResult,
    integrated_gradients,
)
from probing.attribution.value_zeroing import rolled_out, value_zeroing

if TYPE_CHECKING:
    from probing.encoders.bert import TransformersMaskedLM

METHODS: tuple[str, ...] = (
    "integrated_gradients",
    "gradient_x_input",
    "attention_x_gradient",
    "value_zeroing",
    "alti",
)
LAYER_METHODS: tuple[str, ...] = ("attention", "value_zeroing", "alti", "attention_x_gradient")
LABELS = {
    "integrated_gradients": "Integrated Gradients",
    "gradient_x_input": "Gradient × input",
    "attention_x_gradient": "Attention × gradient",
    "value_zeroing": "Value Zeroing (rollout)",
    "alti": "ALTI (rollout)",
    "attention": "Raw attention",
    "random": "Random order",
}


@dataclass(frozen=True)
class CaseScores:
    """All methods on one case.

    Attributes:
        words: method → (n_words,) score of each word for the target (NaN at the mask).
        layers: layer method → (L, n_words) the mask's row of each layer's map, by word.
        mixing: ``value_zeroing`` / ``alti`` / ``attention`` → (L, n, n) piece-level maps
            (attention: head mean), for heat maps.
        ig: the Integrated Gradients result (f(x), f(x'), convergence delta).
    """

    words: dict[str, np.ndarray]
    layers: dict[str, np.ndarray]
    mixing: dict[str, np.ndarray]
    ig: IGResult


@torch.inference_mode()
def _attention(encoder: TransformersMaskedLM, case: MaskedCase) -> np.ndarray:
    out = encoder.model(
        **{k: v.to(encoder.device) for k, v in case.inputs.items()}, output_attentions=True
    )
    return torch.stack(out.attentions)[:, 0].mean(1).double().cpu().numpy()  # (L, n, n)


def score_case(
    encoder: TransformersMaskedLM,
    case: MaskedCase,
    *,
    baseline: str = DEFAULT_BASELINE,
    steps: int = DEFAULT_STEPS,
    methods: tuple[str, ...] = METHODS,
) -> CaseScores:
    """Every method in ``methods`` (IG always runs: its completeness gap is reported)."""
    inputs = {k: v.to(encoder.device) for k, v in case.inputs.items()}
    pos = case.mask_position
    ig = integrated_gradients(encoder, case, baseline=baseline, steps=steps)
    words: dict[str, np.ndarray] = {"integrated_gradients": ig.words}
    layers: dict[str, np.ndarray] = {}
    mixing: dict[str, np.ndarray] = {}
    if "gradient_x_input" in methods:
        words["gradient_x_input"] = case.to_words(gradient_x_input(encoder, case))
    if "attention_x_gradient" in methods:
        ag = attention_x_gradient(encoder, case)
        words["attention_x_gradient"] = case.to_words(ag.pieces)
        layers["attention_x_gradient"] = case.to_words(ag.per_layer)
    for name, fn in (("value_zeroing", value_zeroing), ("alti", alti)):
        if name in methods:
            maps = fn(encoder.model, inputs)
            mixing[name] = maps
            words[name] = case.to_words(rolled_out(maps)[-1, pos])
            layers[name] = case.to_words(maps[:, pos])
    mixing["attention"] = _attention(encoder, case)
    layers["attention"] = case.to_words(mixing["attention"][:, pos])
    return CaseScores(words=words, layers=layers, mixing=mixing, ig=ig)
