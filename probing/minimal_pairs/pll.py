"""Pseudo-log-likelihood of sentences under a BERT-family masked LM (Salazar et al. 2020).

PLL(S) = Σ_t log P(piece_t | S with piece t masked), over every piece of the sentence (not
the special tokens). Two variants (the names are minicons'):

- ``original``: only piece t is masked.
- ``within_word_l2r`` (Kauf & Ivanova 2023): piece t and the pieces of the same word to its
  right are masked, so that a multi-piece word is not made almost certain by its own other
  pieces ("souven ##ir": ##ir given "souven" is nearly 1). On a sentence of one-piece words
  the two are the same.

All masked copies of all sentences are run as rows of a few padded forward passes (rows of
similar length together, up to ``max_tokens`` padded positions per pass); the MLM head is
applied only at the scored position of each row.

Where this differs from the references (awslabs/mlm-scoring, minicons): words are the
project's (:func:`probing.encoders.base.split_words`, punctuation apart) and fed pre-split
(``is_split_into_words``), so a "word" for ``within_word_l2r`` is one of those; minicons
takes the tokenizer's own word ids of the raw text (the same split for BERT's
pre-tokenizer, which also splits at punctuation).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import torch

from probing.errors import InputTooLongError, InvalidArgumentError

if TYPE_CHECKING:
    from probing.encoders.bert import TransformersMaskedLM

METRICS = ("original", "within_word_l2r")
ProgressFn = Callable[[int, int], None]


@dataclass(frozen=True)
class SentenceScore:
    """A sentence's score as the sum of its units' log-probabilities.

    Attributes:
        words: the sentence's words.
        units: what was scored, in order: pieces for a masked LM, words (and the sentence
            boundaries) for ELMo's bi-LM.
        word_ids: per unit, its word's index (-1: a boundary).
        log_probs: float64 (n_units,) natural-log probability of each unit.
        out_of_vocabulary: words the model scored as its unknown token (bi-LM only).
    """

    words: tuple[str, ...]
    units: tuple[str, ...]
    word_ids: tuple[int, ...]
    log_probs: np.ndarray
    out_of_vocabulary: tuple[str, ...] = ()

    @property
    def total(self) -> float:
        return float(np.sum(self.log_probs))


def check_metric(metric: str) -> str:
    if metric not in METRICS:
        raise InvalidArgumentError(f"Unknown PLL scorer {metric!r}; one of {', '.join(METRICS)}.")
    return metric


def mask_sets(word_ids: Sequence[int | None], metric: str = "original") -> list[list[int]]:
    """Per scored position (every piece with a word), the positions masked to score it:
    itself, and with ``within_word_l2r`` the later pieces of the same word."""
    check_metric(metric)
    targets = [p for p, w in enumerate(word_ids) if w is not None]
    if metric == "original":
        return [[p] for p in targets]
    return [
        [p] + [q for q in range(p + 1, len(word_ids)) if word_ids[q] == word_ids[p]]
        for p in targets
    ]


@dataclass(frozen=True)
class _Tokenized:
    ids: list[int]
    word_ids: list[int | None]
    pieces: list[str]


def _tokenize(encoder: TransformersMaskedLM, words: Sequence[str]) -> _Tokenized:
    from probing.encoders.bert import model_words

    tok = encoder.tokenizer
    enc = tok(model_words(tok, list(words)), is_split_into_words=True, truncation=False)
    ids = list(enc["input_ids"])
    if encoder.max_pieces is not None and len(ids) > encoder.max_pieces:
        raise InputTooLongError(len(ids), encoder.max_pieces)
    return _Tokenized(ids, list(enc.word_ids()), tok.convert_ids_to_tokens(ids))


@torch.inference_mode()
def pll_scores(
    encoder: TransformersMaskedLM,
    sentences: Sequence[Sequence[str]],
    metric: str = "original",
    *,
    max_tokens: int = 8192,
    progress: ProgressFn | None = None,
) -> list[SentenceScore]:
    """PLL of each sentence (word lists), per piece, in input order.

    Raises:
        NoLMHeadError: the encoder has no masked-LM head.
        InputTooLongError: a sentence longer than the model takes.
        InvalidArgumentError: an unknown ``metric``.
    """
    from probing.interventions.hooks import mlm_logits, require_mlm

    check_metric(metric)
    encoder = require_mlm(encoder, "Pseudo-log-likelihood")
    tok = encoder.tokenizer
    toks = [_tokenize(encoder, s) for s in sentences]
    # One row per (sentence, scored piece); rows of sentences of similar length together.
    rows: list[tuple[int, int, list[int]]] = []  # (sentence, target position, masked set)
    for s in sorted(range(len(toks)), key=lambda i: len(toks[i].ids)):
        for masked in mask_sets(toks[s].word_ids, metric):
            rows.append((s, masked[0], masked))
    out = [np.zeros(sum(w is not None for w in t.word_ids)) for t in toks]
    slot = [{p: k for k, p in enumerate(q for q, w in enumerate(t.word_ids) if w is not None)}
            for t in toks]  # fmt: skip
    pad = tok.pad_token_id if tok.pad_token_id is not None else 0
    with_types = "token_type_ids" in tok.model_input_names
    start = 0
    while start < len(rows):
        # Rows are sorted by length: the batch's last row is its longest.
        end = start + 1
        while end < len(rows) and (end - start + 1) * len(toks[rows[end][0]].ids) <= max_tokens:
            end += 1
        batch = rows[start:end]
        width = max(len(toks[s].ids) for s, _, _ in batch)
        ids = torch.full((len(batch), width), pad, dtype=torch.long)
        attn = torch.zeros((len(batch), width), dtype=torch.long)
        for r, (s, _, masked) in enumerate(batch):
            n = len(toks[s].ids)
            ids[r, :n] = torch.tensor(toks[s].ids)
            attn[r, :n] = 1
            ids[r, masked] = tok.mask_token_id
        inputs = {"input_ids": ids, "attention_mask": attn}
        if with_types:
            inputs["token_type_ids"] = torch.zeros_like(ids)
        cols = torch.tensor([p for _, p, _ in batch])
        logp = torch.log_softmax(mlm_logits(encoder, inputs, torch.arange(len(batch)), cols), -1)
        target = torch.tensor([toks[s].ids[p] for s, p, _ in batch], device=logp.device)
        got = logp.gather(1, target[:, None]).squeeze(1).double().cpu().numpy()
        for (s, p, _), v in zip(batch, got, strict=True):
            out[s][slot[s][p]] = v
        start = end
        if progress is not None:
            progress(start, len(rows))
    return [
        SentenceScore(
            tuple(sentences[i]),
            tuple(p for p, w in zip(t.pieces, t.word_ids, strict=True) if w is not None),
            tuple(w for w in t.word_ids if w is not None),
            out[i],
        )
        for i, t in enumerate(toks)
    ]
