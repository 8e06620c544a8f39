"""One-sentence interventions for the app: fill-mask with a layer erased or heads switched
off, and the task probe's labels before and after erasure."""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import torch

from probing.interventions.data import labelled_sample, task_field
from probing.interventions.erasure import Eraser, fit_leace_blocks
from probing.interventions.hooks import (
    check_layer,
    head_mask,
    mlm_logits,
    model_parts,
    replaced_hidden,
    require_mlm,
)
from probing.interventions.recompute import layers_after

if TYPE_CHECKING:
    from probing.encoders.bert import TransformersMaskedLM
    from probing.encoders.elmo import ElmoEncoder

Guesses = list[list[tuple[str, float]]]  # per mask, top-k (token, probability)


def fill_mask_under(
    encoder: TransformersMaskedLM,
    text: str,
    intervention: Callable[[torch.Tensor], contextlib.AbstractContextManager] | None = None,
    top_k: int = 5,
) -> Guesses:
    """Top-k guesses at each [MASK] of ``text``; ``intervention(word_pos)`` (word_pos: (1, T)
    bool, the pieces that are not special tokens) is active during the forward pass."""
    from probing.analyses.fill_mask import prepare

    require_mlm(encoder, "Fill-mask under an intervention")
    masked = prepare(encoder, text).tokenized
    special = encoder.tokenizer.get_special_tokens_mask(
        masked.input_ids, already_has_special_tokens=True
    )
    word_pos = torch.tensor([[s == 0 for s in special]])
    positions = torch.tensor(masked.mask_positions)
    ctx = intervention(word_pos) if intervention is not None else contextlib.nullcontext()
    with torch.inference_mode(), ctx:
        logits = mlm_logits(encoder, dict(masked.inputs), torch.zeros_like(positions), positions)
    probs = torch.softmax(logits, -1)
    top = probs.topk(top_k, dim=-1)
    return [
        list(zip(encoder.token_labels(ids.tolist()), p.tolist(), strict=True))
        for ids, p in zip(top.indices, top.values, strict=True)
    ]


def erasing(
    encoder: TransformersMaskedLM, layer: int, eraser: Eraser
) -> Callable[[torch.Tensor], contextlib.AbstractContextManager[None]]:
    """An intervention for :func:`fill_mask_under`: layer ``layer`` erased at word pieces."""
    parts = model_parts(encoder)
    check_layer(layer, parts.n_layers)

    def during(word_pos: torch.Tensor) -> contextlib.AbstractContextManager[None]:
        where = word_pos.to(encoder.device)[..., None]
        return replaced_hidden(parts, layer, lambda h: torch.where(where, eraser.torch_apply(h), h))

    return during


def heads_off(
    encoder: TransformersMaskedLM, heads: list[tuple[int, int]]
) -> Callable[[torch.Tensor], contextlib.AbstractContextManager[None]]:
    """An intervention for :func:`fill_mask_under`: the (layer from 1, head) pairs masked."""
    parts = model_parts(encoder)
    mask = torch.ones(parts.n_layers, parts.n_heads)
    for layer, head in heads:
        check_layer(layer, parts.n_layers)
        mask[layer - 1, head] = 0.0
    return lambda _word_pos: head_mask(parts, mask)


@dataclass(frozen=True)
class SentenceEraser:
    """A task's LEACE eraser at one layer, with linear probes trained on clean vectors at that
    layer and at the top layer (to read the sentence's labels before and after)."""

    task: str
    layer: int
    eraser: Eraser
    probes: dict  # layer -> LinearProbe


@functools.lru_cache(maxsize=8)
def sentence_eraser(
    encoder: TransformersMaskedLM | ElmoEncoder, task: str, layer: int, n_sentences: int = 150
) -> SentenceEraser:
    """Fit the eraser and probes on ``n_sentences`` training sentences (kept per process)."""
    from probing.probes.linear import LinearProbe

    check_layer(layer, int(encoder.info.n_contextual_layers))
    dataset, field = task_field(task)
    data = labelled_sample(dataset, "train", field, n_sentences)
    y, s, w = data.flat()
    clean = layers_after(encoder, data.sentences, 0, lambda h: h)
    top = int(encoder.info.n_contextual_layers)
    probes = {}
    eraser = None
    for at in sorted({layer, top}):
        X = np.stack([clean[i][at, j] for i, j in zip(s, w, strict=True)])
        probes[at] = LinearProbe(C=0.1, device="cpu").fit(X, y)
        if at == layer:
            # ELMo: per [forward; backward] half, as the erasure runs (erasure.block_eraser)
            eraser = fit_leace_blocks(X, y, encoder.info.direction_blocks)
    return SentenceEraser(task, layer, eraser, probes)


def labels_before_after(
    encoder: TransformersMaskedLM | ElmoEncoder, kit: SentenceEraser, words: list[str]
) -> dict:
    """The probes' labels for ``words`` at the erased layer and the top layer, clean and with
    the erased layer (later layers recomputed): {layer: (before, after)}."""
    clean = layers_after(encoder, [words], 0, lambda h: h)[0]
    erased = layers_after(encoder, [words], kit.layer, kit.eraser.torch_apply)[0]
    return {
        at: (list(probe.predict(clean[at])), list(probe.predict(erased[at])))
        for at, probe in kit.probes.items()
    }
