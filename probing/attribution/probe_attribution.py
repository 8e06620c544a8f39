"""Which input words a probe's label rests on: Integrated Gradients and gradient × input of
the probe's logit (:mod:`probing.attribution.probe_case`) on the input word embeddings, and
deletion/insertion curves of the probe's probability for that label.

IG follows :mod:`probing.attribution.integrated_gradients` (Captum's
``LayerIntegratedGradients`` on a lookup module made for the call; Gauss-Legendre nodes),
with one difference: the baseline replaces *every* word's pieces, the probed word's too
([CLS]/[SEP] stay), because the probed word is an input of its own label. Completeness:
the piece attributions sum to ``f(x) − f(x')`` (Captum's convergence delta is the gap).

Curves (:mod:`probing.attribution.faithfulness`'s definitions): a word is removed by setting
each of its pieces to the mask token; deletion removes the words in decreasing order of
attributed score from the full sentence, insertion restores them in that order from the
sentence with every word removed. The probed word is ranked like any other, or kept in
place (``keep``: curves of the context alone).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import torch

from probing.attribution.faithfulness import Curves
from probing.attribution.integrated_gradients import (
    DEFAULT_BASELINE,
    DEFAULT_STEPS,
    IGResult,
    _Lookup,
    check_steps,
    filled_ids,
)
from probing.attribution.probe_case import ProbeCase, label_logit, label_probabilities
from probing.errors import InvalidArgumentError

if TYPE_CHECKING:
    from probing.encoders.bert import TransformersEncoder

METHODS: tuple[str, ...] = ("integrated_gradients", "gradient_x_input")


def baseline_ids(
    encoder: TransformersEncoder, case: ProbeCase, baseline: str, zero_id: int
) -> torch.Tensor:
    """The case's ids with every word's pieces replaced by the baseline's id: (1, n)."""
    return filled_ids(
        encoder.tokenizer,
        encoder.info.name,
        case.inputs["input_ids"],
        case.word_positions(),
        baseline,
        zero_id,
    )


def probe_integrated_gradients(
    encoder: TransformersEncoder,
    case: ProbeCase,
    *,
    baseline: str = DEFAULT_BASELINE,
    steps: int = DEFAULT_STEPS,
    internal_batch_size: int | None = None,
) -> IGResult:
    """Integrated Gradients of the probe's label logit on the word embeddings.

    Raises:
        InvalidArgumentError: steps outside the bounds, an unknown baseline.
    """
    from captum.attr import LayerIntegratedGradients

    steps = check_steps(steps)
    lookup = _Lookup(encoder.model.get_input_embeddings().weight)
    base = baseline_ids(encoder, case, baseline, lookup.zero_id).to(encoder.device)

    def forward(ids: torch.Tensor) -> torch.Tensor:
        return label_logit(encoder, case, lookup(ids))

    ids = case.inputs["input_ids"].to(encoder.device)
    with torch.inference_mode(False), torch.enable_grad():  # also under a caller's no_grad
        attr, delta = LayerIntegratedGradients(forward, lookup).attribute(
            ids,
            baselines=base,
            n_steps=steps,
            internal_batch_size=internal_batch_size,
            return_convergence_delta=True,
        )
    pieces = attr[0].sum(-1).detach().double().cpu().numpy()
    with torch.no_grad():
        f = forward(torch.cat([ids, base])).double().cpu().numpy()
    return IGResult(
        pieces=pieces,
        words=case.to_words(pieces),
        f_input=float(f[0]),
        f_baseline=float(f[1]),
        delta=float(delta.item()),
        baseline=baseline,
        steps=steps,
    )


def probe_gradient_x_input(encoder: TransformersEncoder, case: ProbeCase) -> np.ndarray:
    """Per-piece ``x · ∂f/∂x`` (n,), float64; :meth:`ProbeCase.to_words` gives words."""
    ids = case.inputs["input_ids"].to(encoder.device)
    with torch.inference_mode(False), torch.enable_grad():
        emb = encoder.model.get_input_embeddings()(ids).detach().requires_grad_(True)
        (grad,) = torch.autograd.grad(label_logit(encoder, case, emb).sum(), emb)
    return (grad * emb).sum(-1)[0].detach().double().cpu().numpy()


def word_scores(
    encoder: TransformersEncoder,
    case: ProbeCase,
    method: str,
    *,
    baseline: str = DEFAULT_BASELINE,
    steps: int = DEFAULT_STEPS,
) -> np.ndarray:
    """(n_words,) one method's word scores for the case's label."""
    if method == "integrated_gradients":
        return probe_integrated_gradients(encoder, case, baseline=baseline, steps=steps).words
    if method == "gradient_x_input":
        return case.to_words(probe_gradient_x_input(encoder, case))
    raise InvalidArgumentError(f"Unknown method {method!r}: choose one of {', '.join(METHODS)}.")


def importance_order(scores: np.ndarray, keep: int | None = None) -> list[int]:
    """Every word (but ``keep``, when given) by decreasing score; NaN last, ties by position."""
    key = np.array([-s if np.isfinite(s) else np.inf for s in scores])
    return [int(i) for i in np.argsort(key, kind="stable") if i != keep]


def removed_ids(case: ProbeCase, removed: Sequence[int], mask_id: int) -> torch.Tensor:
    """The case's ids (n,) with every piece of the words in ``removed`` set to ``mask_id``."""
    ids = case.inputs["input_ids"][0].clone()
    gone = {int(w) for w in removed}
    for p, w in enumerate(case.word_ids):
        if w is not None and w in gone:
            ids[p] = mask_id
    return ids


def probe_curves(encoder: TransformersEncoder, case: ProbeCase, order: Sequence[int]) -> Curves:
    """Deletion and insertion curves of p(label) for one order of the words (one batch)."""
    mask_id = encoder.tokenizer.mask_token_id
    if mask_id is None:
        raise InvalidArgumentError(
            f"{encoder.info.name}'s tokenizer has no mask token to remove words with."
        )
    m = len(order)
    rows = [removed_ids(case, order[:k], int(mask_id)) for k in range(m + 1)]
    rows += [removed_ids(case, order[k:], int(mask_id)) for k in range(m + 1)]
    p = label_probabilities(encoder, case, torch.stack(rows))
    return Curves(deletion=p[: m + 1], insertion=p[m + 1 :])


def random_probe_curves(
    encoder: TransformersEncoder,
    case: ProbeCase,
    n_random: int,
    rng: np.random.Generator,
    keep: int | None = None,
) -> list[Curves]:
    """Curves of ``n_random`` random orders of the words (but ``keep``, when given)."""
    words = [w for w in range(len(case.words)) if w != keep]
    return [probe_curves(encoder, case, list(rng.permutation(words))) for _ in range(n_random)]
