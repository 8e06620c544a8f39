"""Integrated Gradients (Sundararajan et al. 2017) of a fill-mask guess, on the input word
embeddings, through Captum's ``LayerIntegratedGradients``.

``f(x) = log p(target | x)`` at the mask (:mod:`probing.attribution.case`). The path runs
from a baseline input ``x'`` to ``x`` in word-embedding space (position and segment
embeddings are added by the model at every point, as they are for the real input), and a
piece's attribution is ``(x − x') · ∫ ∂f/∂x dα`` summed over the embedding dimensions. By
completeness they sum to ``f(x) − f(x')``; Captum's convergence delta is the gap.

The baseline replaces every context piece (not [CLS]/[SEP], not the mask itself) by:

- ``"mask"`` (default): the [MASK] embedding. A word "removed" the way the MLM was trained
  to see a missing word, and the same removal the deletion/insertion curves use
  (:mod:`probing.attribution.faithfulness`), so IG and the curves ask one counterfactual.
- ``"pad"``: the [PAD] embedding (attended to here, which pretraining never did).
- ``"zeros"``: the zero vector (not any token's embedding; position embeddings still added).

Captum hooks the layer it is given. Here that layer is a lookup module made for this call
(:class:`_Lookup`, sharing the model's embedding matrix): the shared model gets no hook.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import torch

from probing.attribution.case import MaskedCase, target_logprob
from probing.errors import InvalidArgumentError

if TYPE_CHECKING:
    from probing.encoders.bert import TransformersMaskedLM

Baseline = Literal["mask", "pad", "zeros"]
BASELINES: tuple[str, ...] = ("mask", "pad", "zeros")
DEFAULT_BASELINE: Baseline = "mask"
STEPS_BOUNDS = (2, 1000)  # Gauss-Legendre nodes; 50 is Captum's default
DEFAULT_STEPS = 50


@dataclass(frozen=True)
class IGResult:
    """Integrated Gradients of one case.

    Attributes:
        pieces: per piece, summed over embedding dimensions (n,).
        words: per word, summed over its pieces; NaN at the masked word (n_words,).
        f_input, f_baseline: ``f(x)`` and ``f(x')`` (log-probabilities, nats).
        delta: Captum's convergence delta, Σ attributions − (f(x) − f(x')).
        baseline, steps: the settings used.
    """

    pieces: np.ndarray
    words: np.ndarray
    f_input: float
    f_baseline: float
    delta: float
    baseline: str
    steps: int

    @property
    def relative_delta(self) -> float:
        """|delta| / |f(x) − f(x')|: the completeness gap as a fraction."""
        gap = abs(self.f_input - self.f_baseline)
        if gap > 0:
            return abs(self.delta) / gap
        return 0.0 if self.delta == 0 else float("inf")


class _Lookup(torch.nn.Module):
    """Word-embedding lookup for one call: ids → (B, n, dim), with one extra id
    (``zero_id`` = vocabulary size) that looks up the zero vector (the "zeros" baseline)."""

    def __init__(self, weight: torch.Tensor) -> None:
        super().__init__()
        self.table = weight  # the model's own matrix, not a copy (a plain attribute)
        self.zero_id = int(weight.shape[0])

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        emb = torch.nn.functional.embedding(ids.clamp(max=self.zero_id - 1), self.table)
        return emb * (ids != self.zero_id).unsqueeze(-1).to(emb.dtype)


def check_steps(steps: int) -> int:
    """``steps`` when within :data:`STEPS_BOUNDS`, else InvalidArgumentError."""
    low, high = STEPS_BOUNDS
    if (
        isinstance(steps, bool)
        or not isinstance(steps, int | np.integer)
        or not low <= steps <= high
    ):
        raise InvalidArgumentError(
            f"Integrated Gradients needs {low} to {high} steps, not {steps!r}: 50 is usual; "
            "more steps shrink the completeness gap (the convergence delta) at more cost."
        )
    return int(steps)


def filled_ids(
    tokenizer: Any,
    model_name: str,
    input_ids: torch.Tensor,
    positions: Any,
    baseline: str,
    zero_id: int,
) -> torch.Tensor:
    """``input_ids`` (1, n) with the pieces at ``positions`` replaced by the baseline's id
    (``mask``, ``pad``, or ``zeros``: ``zero_id``, whose embedding the caller zeroes)."""
    if baseline not in BASELINES:
        raise InvalidArgumentError(
            f"Unknown baseline {baseline!r}: choose one of {', '.join(BASELINES)}."
        )
    fill = {"mask": tokenizer.mask_token_id, "pad": tokenizer.pad_token_id, "zeros": zero_id}[
        baseline
    ]
    if fill is None:
        raise InvalidArgumentError(f"{model_name}'s tokenizer has no {baseline} token.")
    ids = input_ids.clone()
    ids[0, positions] = int(fill)
    return ids


def baseline_ids(
    encoder: TransformersMaskedLM, case: MaskedCase, baseline: str, zero_id: int
) -> torch.Tensor:
    """The case's ids with every context piece replaced by the baseline's id: (1, n)."""
    return filled_ids(
        encoder.tokenizer,
        encoder.name,
        case.inputs["input_ids"],
        case.context_positions(),
        baseline,
        zero_id,
    )


def integrated_gradients(
    encoder: TransformersMaskedLM,
    case: MaskedCase,
    *,
    baseline: str = DEFAULT_BASELINE,
    steps: int = DEFAULT_STEPS,
    internal_batch_size: int | None = None,
) -> IGResult:
    """Integrated Gradients of ``log p(target)`` on the word embeddings (Gauss-Legendre,
    ``steps`` nodes; ``internal_batch_size`` bounds the passes' batch).

    Raises:
        InvalidArgumentError: steps outside :data:`STEPS_BOUNDS`, an unknown baseline.
    """
    from captum.attr import LayerIntegratedGradients

    steps = check_steps(steps)
    lookup = _Lookup(encoder.model.get_input_embeddings().weight)
    base = baseline_ids(encoder, case, baseline, lookup.zero_id)

    def forward(ids: torch.Tensor) -> torch.Tensor:
        return target_logprob(encoder, case, lookup(ids))[0]

    lig = LayerIntegratedGradients(forward, lookup)
    ids = case.inputs["input_ids"].to(encoder.device)
    with torch.inference_mode(False), torch.enable_grad():  # also under a caller's no_grad
        attr, delta = lig.attribute(
            ids,
            baselines=base.to(encoder.device),
            n_steps=steps,
            internal_batch_size=internal_batch_size,
            return_convergence_delta=True,
        )
    pieces = attr[0].sum(-1).detach().double().cpu().numpy()
    with torch.no_grad():
        f = forward(torch.cat([ids, base.to(encoder.device)])).double().cpu().numpy()
    return IGResult(
        pieces=pieces,
        words=case.to_words(pieces),
        f_input=float(f[0]),
        f_baseline=float(f[1]),
        delta=float(delta.item()),
        baseline=baseline,
        steps=steps,
    )
