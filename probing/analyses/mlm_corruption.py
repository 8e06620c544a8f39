"""BERT's corruption recipe, one position at a time: [MASK], a random word, or the word kept.

In pre-training, 15 % of positions are chosen for prediction; of those, 80 % are replaced
by [MASK], 10 % by a random token and 10 % left unchanged (Devlin et al. 2019, §3.1 and
App. C.2). The random and kept cases exist because [MASK] never occurs at fine-tuning or
inference time: the model must produce a useful distribution at *every* position, not only
at masks, and must not trust the input token blindly (it may be a random one).

:func:`corrupt_and_predict` shows the three cases for a target word of a sentence: the same
``…ForMaskedLM`` model and forward call as :func:`probing.analyses.fill_mask.fill_mask`
(``mask`` mode *is* a fill-mask call), with the input at the target position being the mask
token, a random vocabulary word, or the target itself. The random word is drawn (seeded)
from the vocabulary's whole-word pieces (alphabetic, not a continuation "##…" or a special
token), not uniformly from all pieces as BERT's recipe does, so that what the model saw is
readable.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import torch

from probing.analyses.fill_mask import MaskPrediction, predictions, prepare, single_piece
from probing.encoders.base import Encoder, MaskedLM
from probing.errors import TargetNotFoundError

MODES: tuple[str, ...] = ("mask", "random", "keep")
RECIPE = {"mask": 0.8, "random": 0.1, "keep": 0.1}


@dataclass(frozen=True)
class CorruptionResult:
    """What the model predicts at the target position under one corruption.

    Attributes:
        mode: ``mask``, ``random`` or ``keep``.
        target: the word the sentence has there.
        shown: the token the model was given at that position.
        pieces: the model's input pieces (special tokens included).
        prediction: top-k guesses at the position (as fill-mask's ``MaskPrediction``).
        target_probability: probability of the target's piece at the position.
        target_rank: its rank (1 = top) over the whole vocabulary.
    """

    mode: str
    target: str
    shown: str
    pieces: list[str]
    prediction: MaskPrediction
    target_probability: float
    target_rank: int


def _masked_text(text: str, target: str) -> str:
    """``text`` with the first whole-word occurrence of ``target`` replaced by ``[MASK]``."""
    pattern = re.compile(rf"(?<!\w){re.escape(target.strip())}(?!\w)", re.IGNORECASE)
    if not target.strip() or not pattern.search(text):
        raise TargetNotFoundError(f"{target!r} is not a word of the sentence.")
    return pattern.sub("[MASK]", text, count=1)


def random_word_id(encoder: MaskedLM, seed: int = 0, avoid: int | None = None) -> int:
    """A seeded random whole-word piece of the model's vocabulary (see the module doc)."""
    vocab = encoder.vocabulary()
    # Byte-level BPE / SentencePiece mark a word's start; WordPiece marks a continuation.
    marked = encoder.info.piece_convention in ("bpe", "sentencepiece")
    words = []
    for piece, i in vocab.items():
        if i == avoid:
            continue
        if marked and not piece.startswith(("Ġ", "▁")):
            continue
        body = piece[1:] if marked else piece
        if body.isascii() and body.isalpha() and len(body) >= 3:
            words.append(i)
    return int(np.random.default_rng(seed).choice(sorted(words)))


@torch.inference_mode()
def corrupt_and_predict(
    encoder: Encoder,
    text: str,
    target: str,
    mode: str = "mask",
    *,
    replacement: str | None = None,
    top_k: int = 10,
    seed: int = 0,
) -> CorruptionResult:
    """The MLM's top-k at ``target``'s position when it is masked, replaced or kept.

    Args:
        encoder: a :class:`~probing.encoders.base.MaskedLM` (others raise NoMLMHeadError).
        text: the sentence.
        target: a word of it (first whole-word occurrence; the model must read it as one
            piece, so that "kept" and the probability of the target are well defined).
        mode: ``mask`` (80 % of BERT's chosen positions), ``random`` (10 %) or ``keep`` (10 %).
        replacement: for ``random``, the word to put there (default: a seeded random word).
        top_k: candidates to return.
        seed: seed of the random word.

    Raises:
        NoMLMHeadError, TargetNotFoundError, MultiPieceTargetError, InputTooLongError.
    """
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, not {mode!r}")
    masked_text = _masked_text(text, target)
    masked = prepare(encoder, masked_text, max_masks=1)  # NoMLMHeadError for head-less models
    mlm: MaskedLM = encoder  # type: ignore[assignment]  # prepare checked the capability
    target_id = single_piece(mlm, target)[1]
    pos = masked.mask_positions[0]
    if mode == "mask":
        shown_id = masked.input_ids[pos]
    elif mode == "keep":
        shown_id = target_id
    elif replacement:
        shown_id = single_piece(mlm, replacement)[1]
    else:
        shown_id = random_word_id(mlm, seed, avoid=target_id)
    # The fill-mask call itself, with the chosen token at the position (mask mode: unchanged).
    logits = mlm.mask_logits(masked.tokenized, shown={pos: shown_id})  # (1, vocab)
    pred = predictions(mlm, masked, logits, top_k)[0]
    probs = torch.softmax(logits[0], dim=-1)
    p_target = float(probs[target_id])
    rank = int((probs > probs[target_id]).sum()) + 1
    pieces = list(masked.pieces)
    if mode != "mask":  # readable label (no byte-level "Ġ"), as fill-mask shows candidates
        pieces[pos] = mlm.token_labels([int(shown_id)])[0]
    return CorruptionResult(
        mode=mode,
        target=target,
        shown=pieces[pos],
        pieces=pieces,
        prediction=pred,
        target_probability=p_target,
        target_rank=rank,
    )
