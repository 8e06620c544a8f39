"""The LM effect of an erasure: held-out words of the task's data set scored by the model's
LM with a layer erased, against random erasures of the same rank (paired sentence bootstrap).
:class:`MaskedLMEffect` for masked LMs; :class:`probing.interventions.bilm.BiLMEffect` (an
ELMo's forward/backward LM) builds on it. Kept apart from :mod:`erasure_run`, which picks
one of them, so that neither module imports the other's importer (no import circle).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from probing.interventions.data import labelled_sample
from probing.interventions.stats import PairedBootstrap, est_fields

if TYPE_CHECKING:
    from probing.interventions.erasure import Eraser
    from probing.interventions.erasure_run import ErasureSpec


class MaskedLMEffect:
    """Masked-LM loss / top-1 on held-out words with layer ``l`` erased or randomly erased."""

    def __init__(self, encoder, dataset: str, spec: ErasureSpec) -> None:  # noqa: ANN001
        from probing.interventions.masked_words import masked_batches, score_masked

        held = labelled_sample(dataset, "test", any_field(dataset), spec.heldout_sentences)
        self.encoder = encoder
        self.batches = masked_batches(encoder, held.sentences)
        self.clean = score_masked(encoder, self.batches)
        self.boot = PairedBootstrap(self.clean.sentence, n_boot=spec.n_boot, seed=1)
        self.n_words = int(self.clean.loss.size)

    def _scores(self, layer: int, eraser: Eraser):  # noqa: ANN202
        import torch

        from probing.interventions.hooks import model_parts, replaced_hidden
        from probing.interventions.masked_words import score_masked

        parts = model_parts(self.encoder)

        def during(batch):  # noqa: ANN001, ANN202
            pos = batch.word_pos.to(self.encoder.device)[..., None]
            return replaced_hidden(
                parts, layer, lambda h: torch.where(pos, eraser.torch_apply(h), h)
            )

        return score_masked(self.encoder, self.batches, during)

    def effect(self, layer: int, erasers: list[Eraser], randoms: list[Eraser]) -> dict:
        er = [self._scores(layer, e) for e in erasers]
        rd = [self._scores(layer, r) for r in randoms]
        loss_e = np.mean([s.loss for s in er], axis=0)
        loss_r = np.mean([s.loss for s in rd], axis=0)
        top_e = np.mean([s.correct for s in er], axis=0)
        top_r = np.mean([s.correct for s in rd], axis=0)
        b, c = self.boot, self.clean
        return {
            **est_fields("lm_loss_clean", b.mean(c.loss)),
            **est_fields("lm_loss_erased", b.mean(loss_e)),
            **est_fields("lm_loss_random", b.mean(loss_r)),
            **est_fields("lm_loss_erased_minus_random", b.diff(loss_e, loss_r)),
            **est_fields("lm_top1_clean", b.mean(c.correct)),
            **est_fields("lm_top1_erased", b.mean(top_e)),
            **est_fields("lm_top1_random", b.mean(top_r)),
            **est_fields("lm_top1_erased_minus_random", b.diff(top_e, top_r)),
            "n_heldout_words": self.n_words,
        }


def any_field(dataset: str) -> str:
    """A label field every sentence of ``dataset`` has (to sample held-out sentences)."""
    return {"ud-ewt": "upos", "semcor": "pos", "brown": "pos"}.get(dataset, "upos")
