"""One fill-mask case to attribute: a sentence's words with one of them masked, and the
vocabulary piece whose log-probability at the mask is explained.

The explained quantity ``f`` is ``log p(target | sentence with word k masked)``, read from
the masked LM's head at the mask's position. Words are the caller's (pre-split, as a
CoNLL-U sentence or :func:`probing.encoders.base.split_words` gives them); the tokenizer's
own word alignment (``is_split_into_words``) says which pieces belong to which word, and a
word's score is the **sum** over its pieces.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import torch

from probing.analyses.fill_mask import single_piece
from probing.encoders.bert import model_words
from probing.encoders.bert_mlm import mlm_head_logits
from probing.errors import EmptyInputError, InputTooLongError, InvalidArgumentError, NoMLMHeadError
from probing.interventions.hooks import require_mlm

if TYPE_CHECKING:
    from probing.encoders.base import Encoder
    from probing.encoders.bert import TransformersMaskedLM

_FORWARD_KEYS = ("input_ids", "attention_mask", "token_type_ids")


@dataclass(frozen=True)
class MaskedCase:
    """A sentence with one word masked, as the model reads it.

    Attributes:
        words: the sentence's words, the masked one as written (n_words,).
        mask_word: index of the masked word in ``words``.
        target: readable label of the explained piece; target_id: its vocabulary id.
        pieces: the model's pieces, special tokens included, the mask as the mask token (n,).
        word_ids: per piece, its word's index; None for special tokens (n,).
        mask_position: piece index of the mask.
        inputs: forward inputs, each (1, n).
    """

    words: list[str]
    mask_word: int
    target: str
    target_id: int
    pieces: list[str]
    word_ids: list[int | None]
    mask_position: int
    inputs: dict[str, torch.Tensor] = field(repr=False)

    @property
    def n_pieces(self) -> int:
        return len(self.pieces)

    def context_positions(self) -> list[int]:
        """Pieces of the words other than the masked one (what a baseline replaces)."""
        return [p for p, w in enumerate(self.word_ids) if w is not None and w != self.mask_word]

    def to_words(self, piece_scores: np.ndarray) -> np.ndarray:
        """Per-word sums of (..., n) piece scores → (..., n_words); the masked word is NaN
        (it is the query, not context), special tokens are left out."""
        scores = np.asarray(piece_scores, dtype=np.float64)
        out = np.zeros((*scores.shape[:-1], len(self.words)))
        for p, w in enumerate(self.word_ids):
            if w is not None:
                out[..., w] += scores[..., p]
        out[..., self.mask_word] = np.nan
        return out


def prepare_case(
    encoder: Encoder,  # a TransformersMaskedLM (checked)
    words: Sequence[str],
    mask_word: int,
    target: str | None = None,
    target_id: int | None = None,
) -> MaskedCase:
    """Mask word ``mask_word`` of ``words``; explain ``target`` (default: the masked word),
    or the vocabulary piece ``target_id`` (e.g. the model's top guess, any piece).

    Raises:
        NoLMHeadError: the encoder has no masked-LM head (ELMo: see :func:`require_mlm`).
        EmptyInputError: no words.
        InvalidArgumentError: ``mask_word`` is not a word index.
        MultiPieceTargetError: the model reads the target as several pieces.
        InputTooLongError: more pieces than the model takes.
    """
    require_mlm(encoder, "Attribution of a fill-mask guess")
    words = [str(w) for w in words]
    if not words:
        raise EmptyInputError("No words to attribute.")
    if not 0 <= int(mask_word) < len(words):
        raise InvalidArgumentError(
            f"Word {mask_word} cannot be masked: the sentence has words 0 to {len(words) - 1}."
        )
    mask_word = int(mask_word)
    if target_id is None:
        label, target_id = single_piece(encoder, words[mask_word] if target is None else target)
    elif not 0 <= int(target_id) < int(encoder.mlm.config.vocab_size):
        raise InvalidArgumentError(f"{target_id} is not a vocabulary id of {encoder.name}.")
    else:
        label = encoder.token_labels([int(target_id)])[0]
    tok = encoder.tokenizer
    fed = model_words(tok, words)
    fed[mask_word] = tok.mask_token
    enc = tok(fed, is_split_into_words=True, return_tensors="pt", truncation=False)
    n = int(enc["input_ids"].shape[1])
    if n > encoder.max_pieces:
        raise InputTooLongError(n, encoder.max_pieces)
    ids = enc["input_ids"][0].tolist()
    positions = [p for p, i in enumerate(ids) if i == tok.mask_token_id]
    if len(positions) != 1:
        raise NoMLMHeadError(f"{encoder.name}'s tokenizer did not keep the mask as one piece.")
    return MaskedCase(
        words=words,
        mask_word=mask_word,
        target=label,
        target_id=int(target_id),
        pieces=tok.convert_ids_to_tokens(ids),
        word_ids=list(enc.word_ids(0)),
        mask_position=positions[0],
        inputs={k: enc[k] for k in _FORWARD_KEYS if k in enc},
    )


def target_logprob(
    encoder: TransformersMaskedLM,
    case: MaskedCase,
    embeddings: torch.Tensor,
    **options: bool,
) -> tuple[torch.Tensor, object]:
    """``f`` for a batch of word-embedding inputs (B, n, dim) → ((B,) log p(target), the
    base model's output). The base model runs on every position, the head at the mask only;
    position and segment embeddings are added by the model as usual."""
    b = embeddings.shape[0]
    extra = {
        k: v.to(encoder.device).expand(b, -1) for k, v in case.inputs.items() if k != "input_ids"
    }
    out = encoder.model(inputs_embeds=embeddings, **extra, **options)
    hidden = out.last_hidden_state[:, case.mask_position]
    logits = mlm_head_logits(encoder.mlm, hidden).float()
    return torch.log_softmax(logits, dim=-1)[:, case.target_id], out


@torch.inference_mode()
def target_probabilities(
    encoder: TransformersMaskedLM,
    case: MaskedCase,
    input_ids: torch.Tensor,
) -> np.ndarray:
    """p(target) at the mask for a batch of (B, n) id rows of the case's length (words
    replaced by the mask token, for deletion curves) → (B,) float64."""
    emb = encoder.model.get_input_embeddings()(input_ids.to(encoder.device))
    logp, _ = target_logprob(encoder, case, emb)
    return np.exp(logp.double().cpu().numpy())
