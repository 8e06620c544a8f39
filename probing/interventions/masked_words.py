"""Held-out words to predict: sentences tokenised in batches with some words masked, and the
masked-LM loss / top-1 at them under any intervention.

Which words are masked is a fixed rule, not a draw (so no seed enters): every alphabetic word
that is one piece and whose position ``i`` in sentence ``s`` has ``(i + s) % every == 0``
(default every 6th: about BERT's 15 % of words, spread over positions).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import torch

from probing.interventions.hooks import mlm_logits, require_mlm

InterventionFn = Callable[[], contextlib.AbstractContextManager]


@dataclass
class MaskedBatch:
    """One padded batch: ``inputs`` (B, T) tensors with masks put in; ``rows``/``cols`` the
    masked positions; ``targets`` their true piece ids; ``sentence`` each one's sentence
    index; ``word_pos`` (B, T) bool, pieces that belong to a word (no special tokens, no
    padding)."""

    inputs: dict[str, torch.Tensor]
    rows: torch.Tensor
    cols: torch.Tensor
    targets: torch.Tensor
    sentence: np.ndarray
    word_pos: torch.Tensor


def masked_batches(
    encoder,  # noqa: ANN001 - TransformersMaskedLM
    sentences: Sequence[Sequence[str]],
    *,
    every: int = 6,
    batch_size: int = 32,
    max_pieces: int = 128,
) -> list[MaskedBatch]:
    """The held-out set as batches (sentences over ``max_pieces`` pieces are left out)."""
    require_mlm(encoder, "The masked-LM effect")
    tok = encoder.tokenizer
    batches: list[MaskedBatch] = []
    for start in range(0, len(sentences), batch_size):
        chunk = [list(s) for s in sentences[start : start + batch_size]]
        enc = tok(chunk, is_split_into_words=True, padding=True, return_tensors="pt")
        if enc["input_ids"].shape[1] > max_pieces:
            keep = [
                i
                for i, s in enumerate(chunk)
                if len(tok(s, is_split_into_words=True)["input_ids"]) <= max_pieces
            ]
            chunk = [chunk[i] for i in keep]
            if not chunk:
                continue
            enc = tok(chunk, is_split_into_words=True, padding=True, return_tensors="pt")
        ids = enc["input_ids"].clone()
        rows, cols, targets, sent = [], [], [], []
        word_pos = torch.zeros_like(ids, dtype=torch.bool)
        for b, words in enumerate(chunk):
            wids = enc.word_ids(b)
            count: dict[int, int] = {}
            for p, w in enumerate(wids):
                if w is not None:
                    count[w] = count.get(w, 0) + 1
                    word_pos[b, p] = True
            s = start + b
            for p, w in enumerate(wids):
                if w is None or count[w] != 1 or not words[w].isalpha() or (w + s) % every:
                    continue
                rows.append(b)
                cols.append(p)
                targets.append(int(ids[b, p]))
                sent.append(s)
        if not rows:
            continue
        r, c = torch.tensor(rows), torch.tensor(cols)
        ids[r, c] = tok.mask_token_id
        inputs = {k: enc[k] for k in ("input_ids", "attention_mask", "token_type_ids") if k in enc}
        inputs["input_ids"] = ids
        batches.append(MaskedBatch(inputs, r, c, torch.tensor(targets), np.asarray(sent), word_pos))
    return batches


@dataclass(frozen=True)
class WordScores:
    """Per masked word: ``loss`` (nats), ``correct`` (top-1), ``sentence`` index."""

    loss: np.ndarray
    correct: np.ndarray
    sentence: np.ndarray

    @property
    def mean_loss(self) -> float:
        return float(self.loss.mean()) if self.loss.size else float("nan")

    @property
    def top1(self) -> float:
        return float(self.correct.mean()) if self.correct.size else float("nan")


@torch.inference_mode()
def score_masked(
    encoder,  # noqa: ANN001
    batches: Sequence[MaskedBatch],
    intervention: Callable[[MaskedBatch], contextlib.AbstractContextManager] | None = None,
) -> WordScores:
    """Masked-LM cross-entropy and top-1 at every masked word, with ``intervention(batch)``
    (a context manager, e.g. a hook) active during each batch's forward pass."""
    losses, correct, sent = [], [], []
    for batch in batches:
        ctx = intervention(batch) if intervention is not None else contextlib.nullcontext()
        with ctx:
            at = mlm_logits(encoder, batch.inputs, batch.rows, batch.cols)  # (n, V)
        tgt = batch.targets.to(at.device)
        losses.append(torch.nn.functional.cross_entropy(at, tgt, reduction="none").cpu().numpy())
        correct.append((at.argmax(-1) == tgt).cpu().numpy())
        sent.append(batch.sentence)
    if not losses:
        return WordScores(np.zeros(0), np.zeros(0, bool), np.zeros(0, int))
    return WordScores(np.concatenate(losses), np.concatenate(correct), np.concatenate(sent))
