"""Deletion and insertion curves (Samek et al. 2017; Petsiuk et al. 2018) and their AOPC.

A word is *removed* by replacing each of its pieces with the mask token (the removal an MLM
was trained on; the sentence keeps its length and positions). The target's probability at
the masked word is read after each step:

- deletion: remove the context words in decreasing order of attributed importance, from the
  full sentence (k = 0 … m words removed);
- insertion: restore them in the same order, from the sentence with every context word
  removed.

AOPC (area over the perturbation curve) is the mean over the m + 1 steps of ``p_0 − p_k``
for deletion and of ``p_k − p_all-removed`` for insertion: both higher when the order puts
the words the prediction rests on first. A random order (``n_random`` seeded permutations,
AOPC averaged) is the reference every method is compared with. After every word is removed,
both curves are at the same input: the all-masked sentence.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import torch

from probing.attribution.case import MaskedCase, target_probabilities

if TYPE_CHECKING:
    from probing.encoders.bert import TransformersMaskedLM


def importance_order(scores: np.ndarray, case: MaskedCase) -> list[int]:
    """Context words (not the masked one) by decreasing score; NaN last, ties by position."""
    ctx = [w for w in range(len(case.words)) if w != case.mask_word]
    key = np.array([-scores[w] if np.isfinite(scores[w]) else np.inf for w in ctx])
    return [ctx[i] for i in np.argsort(key, kind="stable")]


def removed_ids(case: MaskedCase, removed: Sequence[int], mask_id: int) -> torch.Tensor:
    """The case's ids (n,) with every piece of the words in ``removed`` set to ``mask_id``."""
    ids = case.inputs["input_ids"][0].clone()
    gone = set(int(w) for w in removed)
    for p, w in enumerate(case.word_ids):
        if w is not None and w in gone:
            ids[p] = mask_id
    return ids


@dataclass(frozen=True)
class Curves:
    """p(target) after k = 0 … m steps: ``deletion`` (m + 1,), ``insertion`` (m + 1,)."""

    deletion: np.ndarray
    insertion: np.ndarray

    @property
    def aopc_deletion(self) -> float:
        return float(np.mean(self.deletion[0] - self.deletion))

    @property
    def aopc_insertion(self) -> float:
        return float(np.mean(self.insertion - self.insertion[0]))


def curves(encoder: TransformersMaskedLM, case: MaskedCase, order: Sequence[int]) -> Curves:
    """Both curves for one order of the context words (one batched forward pass)."""
    mask_id = int(encoder.tokenizer.mask_token_id)
    m = len(order)
    rows = [removed_ids(case, order[:k], mask_id) for k in range(m + 1)]
    rows += [removed_ids(case, order[k:], mask_id) for k in range(m + 1)]
    p = target_probabilities(encoder, case, torch.stack(rows))
    return Curves(deletion=p[: m + 1], insertion=p[m + 1 :])


def random_curves(
    encoder: TransformersMaskedLM,
    case: MaskedCase,
    n_random: int,
    rng: np.random.Generator,
) -> list[Curves]:
    """Curves of ``n_random`` random orders of the context words."""
    ctx = [w for w in range(len(case.words)) if w != case.mask_word]
    return [curves(encoder, case, list(rng.permutation(ctx))) for _ in range(n_random)]
