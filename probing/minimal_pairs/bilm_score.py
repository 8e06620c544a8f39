"""ELMo's score of a sentence: the sum of its forward and backward LM log-likelihoods.

score(S) = log P_fwd(w_1 … w_n </S>) + log P_bwd(w_n … w_1 <S>), each a proper sentence
log-probability by the chain rule (the forward LM reads left context only, the backward LM
right context only). This is **not** a pseudo-log-likelihood: no word is scored given both
sides. Per word, the unit is ``log P_fwd(w_i | w_<i) + log P_bwd(w_i | w_>i)``; the last
unit (``</S> <S>``) holds the two end-of-sentence terms.

Words outside the LM vocabulary are scored as ``<UNK>`` (listed in ``out_of_vocabulary``):
a pair in which a word that differs between the members is one of them is not comparable,
and the evaluation leaves it out (:mod:`probing.minimal_pairs.evaluate`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import torch

from probing.minimal_pairs.pll import ProgressFn, SentenceScore

if TYPE_CHECKING:
    from probing.encoders.elmo import ElmoEncoder

BOUNDARY = "</S> <S>"


@torch.inference_mode()
def bilm_scores(
    encoder: ElmoEncoder,  # one whose folder ships a softmax
    sentences: Sequence[Sequence[str]],
    *,
    batch_size: int = 64,
    progress: ProgressFn | None = None,
) -> list[SentenceScore]:
    """Forward + backward LM log-probabilities per word of each sentence, in input order.

    Raises:
        NoLMHeadError: not an ELMo with a bi-LM softmax.
    """
    from probing.interventions.hooks import next_word_parts

    parts = next_word_parts(encoder, "Bi-LM sentence scores")
    softmax = parts.lm()
    order = sorted(range(len(sentences)), key=lambda i: len(sentences[i]))
    out: list[SentenceScore | None] = [None] * len(sentences)
    eos, bos = softmax.word_id("</S>"), softmax.word_id("<S>")
    for start in range(0, len(order), batch_size):
        idx = order[start : start + batch_size]
        chunk = [list(sentences[i]) for i in idx]
        states, _ = parts.run(parts.char_ids(chunk))
        top_f, top_b = states[-1]
        rows, f_at, b_at, tgt_f, tgt_b = [], [], [], [], []
        for r, words in enumerate(chunk):
            n = len(words)
            # Word i sits at position i + 1: the forward LM predicts it from position i, the
            # backward LM from i + 2; </S> (n + 1) from n forward, <S> (0) from 1 backward.
            for i, w in enumerate(words):
                rows.append(r)
                f_at.append(i)
                b_at.append(i + 2)
                tgt_f.append(softmax.word_id(w))
                tgt_b.append(softmax.word_id(w))
            rows.append(r)
            f_at.append(n)
            b_at.append(1)
            tgt_f.append(eos)
            tgt_b.append(bos)
        r_t = torch.tensor(rows, device=top_f.device)
        fwd = softmax.target_log_prob(top_f[r_t, torch.tensor(f_at)], torch.tensor(tgt_f))
        bwd = softmax.target_log_prob(top_b[r_t, torch.tensor(b_at)], torch.tensor(tgt_b))
        both = (fwd.double() + bwd.double()).cpu().numpy()
        at = 0
        for i, words in zip(idx, chunk, strict=True):
            n = len(words)
            out[i] = SentenceScore(
                tuple(words),
                (*words, BOUNDARY),
                (*range(n), -1),
                both[at : at + n + 1],
                tuple(w for w in words if not softmax.in_vocab(w)),
            )
            at += n + 1
        if progress is not None:
            progress(min(start + batch_size, len(order)), len(order))
    return out  # type: ignore[return-value] - every slot is filled


@torch.inference_mode()
def next_word_log_probs(
    encoder: ElmoEncoder, words: Sequence[str]
) -> tuple[torch.Tensor, torch.Tensor]:
    """The two LMs' log-probabilities over the vocabulary for one sentence: forward
    (n + 1, V), row ``i`` = P(word ``i`` | words before it), the last row P(``</S>`` | all);
    backward (n + 1, V), row ``i`` = P(word ``i - 1`` | words after it), row 0 P(``<S>`` | all)
    (words outside the vocabulary are ``<UNK>``).

    Raises:
        NoLMHeadError: not an encoder with next-word LMs.
    """
    from probing.interventions.hooks import next_word_parts

    parts = next_word_parts(encoder, "Next-word probabilities")
    states, _ = parts.run(parts.char_ids([list(words)]))
    n = len(words)
    rows = torch.zeros(n + 1, dtype=torch.long)
    # Forward: the token at position t (1 … n + 1) from t - 1; backward: at t (0 … n) from t + 1.
    fwd = parts.next_word_log_probs(states, rows, torch.arange(1, n + 2), "forward", chunk=1024)
    bwd = parts.next_word_log_probs(states, rows, torch.arange(0, n + 1), "backward", chunk=1024)
    return fwd, bwd
