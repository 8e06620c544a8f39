"""The erasure sweep's masked-LM effect, fast: held-out sentences batched by length and, per
erased layer, only the blocks above it run from the clean pass's cached states. It must give
what a plain full forward pass with the erasing hook gives (minilm-l6-mlm, UD-EWT test)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from probing.interventions.data import labelled_sample
from probing.interventions.erasure import random_eraser
from probing.interventions.erasure_run import ErasureSpec
from probing.interventions.hooks import model_parts, replaced_hidden
from probing.interventions.lm_effect import MaskedLMEffect
from probing.interventions.masked_words import (
    masked_batches,
    score_above,
    score_clean,
    score_masked,
    word_order,
)


@pytest.fixture(scope="module")
def mlm():
    import probing

    return probing.load_encoder("minilm-l6-mlm")


@pytest.fixture(scope="module")
def sentences():
    """40 UD-EWT test sentences and, 6th, one of 150 pieces (over ``max_pieces``: left out,
    which renumbers the later sentences of its block; both batchings must agree on it)."""
    held = labelled_sample("ud-ewt", "test", "upos", 40).sentences
    return [*held[:5], ["https://example.org/a/b/c/d"] * 10, *held[5:]]


def _hooked(mlm, batches, layer: int, eraser):
    """The plain way: every layer run, layer ``layer`` replaced by a forward hook."""
    parts = model_parts(mlm)

    def during(batch):
        pos = batch.word_pos[..., None]
        return replaced_hidden(parts, layer, lambda h: torch.where(pos, eraser.torch_apply(h), h))

    return score_masked(mlm, batches, during)


def test_length_batches_mask_the_same_words(mlm, sentences):
    plain = masked_batches(mlm, sentences, max_pieces=128)
    by_len = masked_batches(mlm, sentences, max_pieces=128, by_length=True)
    assert np.array_equal(word_order(plain), np.arange(sum(len(b.rows) for b in plain)))
    order = word_order(by_len)
    for field in ("sentence", "targets"):
        a = np.concatenate([np.asarray(getattr(b, field)) for b in plain])
        b = np.concatenate([np.asarray(getattr(b, field)) for b in by_len])[order]
        assert np.array_equal(a, b), field
    # The long one is left out: its block's 31 kept sentences are numbered 0 … 30.
    numbers = set(np.concatenate([b.sentence for b in plain]).tolist())
    assert max(n for n in numbers if n < 32) == 30
    pieces = [sum(b.inputs["input_ids"].numel() for b in x) for x in (plain, by_len)]
    assert pieces[1] < pieces[0]  # less padding


def test_blocks_above_the_layer_equal_the_hooked_full_pass(mlm, sentences):
    batches = masked_batches(mlm, sentences)
    full_clean = score_masked(mlm, batches)
    clean, states = score_clean(mlm, batches)
    assert states is not None  # BERT's blocks add up to its output
    # The head runs on 512 words at a time instead of per batch: other matrix shapes, so
    # float32 round-off (about 1e-6 nats) is all that may differ; top-1 is the same.
    assert np.allclose(clean.loss, full_clean.loss, rtol=0, atol=1e-4)
    assert np.array_equal(clean.correct, full_clean.correct)
    erasers = [random_eraser(384, 24, seed) for seed in range(2)]
    for layer in (0, 2, 5, 6):
        plain = [_hooked(mlm, batches, layer, e) for e in erasers]
        for stack in (False, True):
            fast = score_above(mlm, batches, states, layer, [e.torch_apply for e in erasers], stack)
            for p, f in zip(plain, fast, strict=True):
                assert np.array_equal(p.sentence, f.sentence)
                assert np.allclose(p.loss, f.loss, rtol=0, atol=1e-4), (layer, stack)
                assert np.array_equal(p.correct, f.correct), (layer, stack)
                assert not np.allclose(p.loss, full_clean.loss, rtol=0, atol=1e-3)  # it erased


def test_lm_effect_rows_equal_the_full_pass_rows(mlm):
    spec = ErasureSpec(model="minilm-l6-mlm", task="pos", heldout_sentences=40, n_boot=200)
    effect = MaskedLMEffect(mlm, "ud-ewt", spec)
    states = effect.states
    assert states is not None
    # The clean words in sentence order, as unsorted batches give them.
    held = labelled_sample("ud-ewt", "test", "upos", 40).sentences
    plain_clean = score_masked(mlm, masked_batches(mlm, held))
    assert np.array_equal(effect.clean.sentence, plain_clean.sentence)
    assert np.allclose(effect.clean.loss, plain_clean.loss, rtol=0, atol=1e-4)
    eraser, randoms = random_eraser(384, 30, 7), [random_eraser(384, 30, s) for s in range(3)]
    for layer in (1, 4):
        fast = effect.effect(layer, [eraser], randoms)
        effect.states = None  # the full passes with the hook, same batches
        slow = effect.effect(layer, [eraser], randoms)
        effect.states = states
        assert fast.keys() == slow.keys()
        for k, v in fast.items():
            assert v == pytest.approx(slow[k], abs=1e-6), k
