"""Head ablation (Michel, Levy & Neubig 2019, "Are Sixteen Heads Really Better than One?").

Each head's output is multiplied by a gate ξ_h (:func:`probing.interventions.hooks.head_mask`).
Per head: the masked-LM loss increase on held-out words and the agreement accuracy change
when that head alone is masked (their section 3), paired sentence-bootstrap CIs. Importance
is their ``I_h = E_x |∂L(x)/∂ξ_h|`` over the held-out masked words, normalised per layer by
its l2 norm as in their code (``compute_heads_importance``, ``normalize_scores_by_layer``);
the pruning curve removes heads in that order, least important first, 10 % at a time, and
scores masked-LM top-1 and agreement at each step (their section 4, without retraining).

The per-head intervals are one at a time; the finding is the family
(:mod:`probing.interventions.head_family`): the per-sentence sums are returned
(``result["sums"]``, saved beside the run) and every head's p is Holm-corrected over all
the model's heads (``result["family"]``, ``result["finding"]``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np
import torch

from probing.interventions.agreement import MaskedCases, margins
from probing.interventions.head_family import (
    HeadSums,
    family_columns,
    family_sentence,
    head_family,
)
from probing.interventions.hooks import head_mask, mlm_logits, model_parts
from probing.interventions.masked_words import MaskedBatch, score_masked
from probing.interventions.stats import PairedBootstrap, est_fields

if TYPE_CHECKING:
    import contextlib

    from probing.encoders.bert import TransformersMaskedLM
    from probing.encoders.surface import ModelParts

Progress = Callable[[str, int, int], None]


def importance(encoder: TransformersMaskedLM, batches: Sequence[MaskedBatch]) -> np.ndarray:
    """(L, H) Michel et al.'s I_h, each layer's row scaled to unit l2 norm."""
    parts = model_parts(encoder)
    gate = torch.ones(parts.n_layers, parts.n_heads, requires_grad=True)
    total = torch.zeros(parts.n_layers, parts.n_heads)
    n = 0
    for batch in batches:
        with head_mask(parts, gate):
            at = mlm_logits(encoder, batch.inputs, batch.rows, batch.cols)
        loss = torch.nn.functional.cross_entropy(at, batch.targets.to(at.device), reduction="sum")
        (grad,) = torch.autograd.grad(loss, gate)
        total += grad.abs()
        n += len(batch.targets)
    imp = (total / max(n, 1)).numpy()
    norm = np.linalg.norm(imp, axis=1, keepdims=True)
    return imp / np.where(norm > 0, norm, 1.0)


def _with_mask(
    parts: ModelParts, mask: torch.Tensor
) -> Callable[..., contextlib.AbstractContextManager[None]]:
    return lambda *_: head_mask(parts, mask)


def ablate_heads(
    encoder: TransformersMaskedLM,
    batches: Sequence[MaskedBatch],
    agreement: MaskedCases,
    agreement_groups: Sequence[str],
    n_boot: int = 1000,
    progress: Progress | None = None,
) -> dict:
    """Per-head effects, importance and the pruning curve (module doc)."""
    say = progress or (lambda *_: None)
    parts = model_parts(encoder)
    L, H = parts.n_layers, parts.n_heads
    clean = score_masked(encoder, batches)
    clean_agree = (margins(encoder, agreement) > 0).astype(float)
    lm_boot = PairedBootstrap(clean.sentence, n_boot=n_boot, seed=0)
    ag_boot = PairedBootstrap(list(agreement_groups), n_boot=n_boot, seed=0)
    rows = []
    losses, hits, agrees = [clean.loss], [clean.correct], [clean_agree]
    with torch.inference_mode():
        for b in range(L):
            for h in range(H):
                say("ablating heads", b * H + h, L * H)
                mask = torch.ones(L, H)
                mask[b, h] = 0.0
                s = score_masked(encoder, batches, _with_mask(parts, mask))
                agree = (margins(encoder, agreement, _with_mask(parts, mask)) > 0).astype(float)
                losses.append(s.loss)
                hits.append(s.correct)
                agrees.append(agree)
                rows.append(
                    {
                        "layer": b + 1,
                        "head": h,
                        **est_fields("lm_loss_increase", lm_boot.diff(s.loss, clean.loss)),
                        **est_fields("lm_top1_change", lm_boot.diff(s.correct, clean.correct)),
                        **est_fields("agreement_change", ag_boot.diff(agree, clean_agree)),
                    }
                )
    sums = HeadSums.from_items(L, H, clean.sentence, losses, hits, list(agreement_groups), agrees)
    family = head_family(sums, n_boot=n_boot, seed=0)
    for row, cols in zip(rows, family_columns(family), strict=True):
        row.update(cols)
    say("importance", 0, 1)
    imp = importance(encoder, batches)
    for row in rows:
        row["importance"] = float(imp[row["layer"] - 1, row["head"]])
    order = np.argsort(imp.ravel(), kind="stable")
    curve = []
    steps = sorted({int(round(f * L * H)) for f in np.linspace(0, 0.9, 10)})
    with torch.inference_mode():
        for i, k in enumerate(steps):
            say("pruning", i, len(steps))
            mask = torch.ones(L * H)
            mask[torch.from_numpy(order[:k].copy())] = 0.0
            mask = mask.view(L, H)
            s = score_masked(encoder, batches, _with_mask(parts, mask))
            agree = (margins(encoder, agreement, _with_mask(parts, mask)) > 0).astype(float)
            curve.append(
                {
                    "heads_removed": k,
                    "share_removed": k / (L * H),
                    **est_fields("lm_top1", lm_boot.mean(s.correct)),
                    **est_fields("lm_loss", lm_boot.mean(s.loss)),
                    **est_fields("agreement", ag_boot.mean(agree)),
                }
            )
    return {
        "heads": rows,
        "importance": imp.tolist(),
        "curve": curve,
        "clean": {
            **est_fields("lm_loss", lm_boot.mean(clean.loss)),
            **est_fields("lm_top1", lm_boot.mean(clean.correct)),
            **est_fields("agreement", ag_boot.mean(clean_agree)),
        },
        "n_heldout_words": int(clean.loss.size),
        "n_agreement_cases": int(clean_agree.size),
        "family": family,
        "finding": family_sentence(family),
        "sums": sums,  # not JSON: the caller saves it (HeadSums.save)
    }
