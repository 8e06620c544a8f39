"""The LM effect of an erasure: held-out words of the task's data set scored by the model's
LM with a layer erased, against random erasures of the same rank (paired sentence bootstrap).
:class:`MaskedLMEffect` for masked LMs and for next-word LMs (an ELMo's forward/backward LM,
``info.lm_directions``), through the encoder's layer surface. Kept apart from
:mod:`erasure_run`, so that neither module imports the other's importer (no import circle).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from probing.interventions.data import labelled_sample
from probing.interventions.stats import PairedBootstrap, est_fields

if TYPE_CHECKING:
    import contextlib

    from probing.encoders.base import Encoder
    from probing.interventions.erasure import Eraser
    from probing.interventions.erasure_run import ErasureSpec
    from probing.interventions.masked_words import (
        CleanStates,
        MaskedBatch,
        NextWordBatch,
        WordScores,
    )


class MaskedLMEffect:
    """Masked-LM loss / top-1 on held-out words with layer ``l`` erased or randomly erased.

    The held-out sentences are batched by piece count (little padding) and the clean pass
    keeps its hidden states, so an erasure at ``l`` runs only blocks ``l + 1 …`` from the
    clean state ``l`` (:func:`probing.interventions.masked_words.score_above`; the layers
    below are unchanged). Equal to full forward passes with the erasing hook up to float32
    round-off (tests/library/test_erasure_lm_fast.py). ``states`` None (a model whose blocks
    do not add up to its output, or a subclass that scores otherwise): one full pass per
    eraser through :meth:`_scores`.

    Next-word LMs (ELMo): every in-vocabulary word of the held-out sentences, in their order
    (:func:`~probing.interventions.masked_words.next_word_batches`), each erasure one full
    pass with the layers above re-run."""

    states: CleanStates | None = None

    def __init__(self, encoder: Encoder, dataset: str, spec: ErasureSpec) -> None:
        from probing.interventions.masked_words import (
            masked_batches,
            next_word_batches,
            score_clean,
            score_masked,
            word_order,
        )

        held = labelled_sample(dataset, "test", any_field(dataset), spec.heldout_sentences)
        self.encoder = encoder
        if encoder.info.lm_directions:
            self.batches = next_word_batches(encoder, held.sentences)
            clean, self.states = score_masked(encoder, self.batches), None
        else:
            self.batches = masked_batches(encoder, held.sentences, by_length=True)
            clean, self.states = score_clean(encoder, self.batches)
        # Scores come in batch order; the bootstrap and the stored rows see sentence order.
        self.order = word_order(self.batches)
        self.clean = clean.take(self.order)
        self.boot = PairedBootstrap(self.clean.sentence, n_boot=spec.n_boot, seed=1)
        self.n_words = int(self.clean.loss.size)

    def _scores(self, layer: int, eraser: Eraser) -> WordScores:
        """The words' scores (sentence order) from a full pass with layer ``layer`` erased."""
        import torch

        from probing.interventions.hooks import replaced_hidden
        from probing.interventions.masked_words import score_masked

        parts = self.encoder.layer_parts()

        def during(batch: MaskedBatch | NextWordBatch) -> contextlib.AbstractContextManager[None]:
            pos = batch.word_pos.to(self.encoder.device)[..., None]
            return replaced_hidden(
                parts, layer, lambda h: torch.where(pos, eraser.torch_apply(h), h)
            )

        return score_masked(self.encoder, self.batches, during).take(self.order)

    def _scores_all(self, layer: int, erasers: list[Eraser]) -> list[WordScores]:
        """Per eraser, :meth:`_scores`; from the clean states where there are some."""
        if self.states is None:
            return [self._scores(layer, e) for e in erasers]
        from probing.interventions.masked_words import score_above

        fns = [e.torch_apply for e in erasers]
        scores = score_above(self.encoder, self.batches, self.states, layer, fns)
        return [s.take(self.order) for s in scores]

    def effect(self, layer: int, erasers: list[Eraser], randoms: list[Eraser]) -> dict:
        both = self._scores_all(layer, [*erasers, *randoms])
        er, rd = both[: len(erasers)], both[len(erasers) :]
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
