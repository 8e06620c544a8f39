"""Fill-mask: what a masked-language model guesses for each ``[MASK]`` in a sentence.

Two views of the same forward pass:

- :func:`fill_mask` gives the model's own prediction: the top-k word pieces and their
  probabilities at every mask, from the ``…ForMaskedLM`` model's logits.
- :func:`fill_mask_by_layer` applies the same MLM head to every layer's hidden state at the
  mask positions (a "logit lens" for masked LMs): which word the model would guess if it
  stopped after layer ℓ, and where the final answer ranks at each layer. Its last layer is
  exactly :func:`fill_mask`'s output.

The raw text goes through the model's own tokenizer (not through a word list), so that the
mask survives as the model's single mask token. Users type ``[MASK]`` (any case) or ``<mask>``;
each is mapped to the model's own mask token (``[MASK]`` for BERT, ``<mask>`` for RoBERTa).
All masks stay masked in one forward pass, so each mask's distribution is conditioned on the
other masks being unknown too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import torch

from probing.encoders.base import CONTROL_RE, Encoder, MaskedLM, MaskedPieces

# Re-exported: the BERT family's head adapter, for callers that used it from here.
from probing.encoders.bert_mlm import mlm_head_logits  # noqa: F401
from probing.errors import (
    EmptyInputError,
    InvalidArgumentError,
    MultiPieceTargetError,
    NoMaskError,
    NoMLMHeadError,
    SpecialTokenError,
    TooManyMasksError,
)

DEFAULT_MAX_MASKS = 4
EXAMPLE = "The doctor picked up her [MASK] and left the [MASK]."

# What users may type for a mask: [MASK] / [mask] / [ Mask ] and RoBERTa's <mask>.
MASK_RE = re.compile(r"\[\s*mask\s*\]|<\s*mask\s*>", re.IGNORECASE)
# The whitespace before a mask is swallowed with it. Byte-level BPE (RoBERTa) and
# SentencePiece vocabularies fold a word's leading space into the word's piece ("Ġcat",
# "▁cat"): the mask has to stand for that whole piece, or the tokenizer emits a lone "Ġ"
# before it. RoBERTa's own <mask> is declared lstrip=True for exactly this reason; not every
# checkpoint's is, so we do it ourselves. WordPiece (BERT) ignores the space either way.
_MASK_WITH_SPACE_RE = re.compile(r"\s*(?:" + MASK_RE.pattern + ")", re.IGNORECASE)
# Words as split_words() sees them (probing.encoders.base), with a mask as one word.
_WORD_OR_MASK_RE = re.compile(
    "(" + MASK_RE.pattern + r")|\w+(?:['’\-]\w+)*|[^\w\s]", re.IGNORECASE | re.UNICODE
)


# What the marks in each tokenizer's pieces mean (ModelInfo.piece_convention): every model's
# guesses are shown in its own tokenizer's convention, never translated into another's.
PIECE_NOTES = {
    "wordpiece": "“##” marks a piece that continues a word (WordPiece)",
    "bpe": "“Ġ” marks a piece that starts a word (byte-level BPE's leading space)",
    "sentencepiece": "“▁” marks a piece that starts a word (SentencePiece)",
}


# The same, short enough for an axis title along a chart of ten bars (the long form ran past
# the chart's height into its title at 1280 px).
SHORT_PIECE_NOTES = {
    "wordpiece": "“##…” continues a word",
    "bpe": "“Ġ…” starts a word",
    "sentencepiece": "“▁…” starts a word",
}


def piece_note(convention: str, short: bool = False) -> str:
    """How to read a model's pieces, for a caption (``short``: an axis title); "" for an
    unknown scheme."""
    return (SHORT_PIECE_NOTES if short else PIECE_NOTES).get(convention, "")


class Candidate(NamedTuple):
    """One guess at a mask: a vocabulary piece, in its tokenizer's own convention (see
    :data:`PIECE_NOTES`), and its probability."""

    token: str
    probability: float


@dataclass(frozen=True)
class MaskPrediction:
    """The model's top-k guesses at one mask.

    Attributes:
        mask_index: which mask this is, 0-based, in reading order.
        position: index of the mask among the model's pieces (special tokens included).
        word_index: index of the mask among the text's words (punctuation counts as a word,
            as in ``split_words``), or None when the mask is glued to letters ("un[MASK]").
        candidates: top-k (token, probability), most probable first. Probabilities are over
            the whole vocabulary, so they sum to at most 1.
        token_ids: vocabulary ids of ``candidates`` (k,).
        piece_convention: the model's ``info.piece_convention`` (how to read the pieces).
    """

    mask_index: int
    position: int
    word_index: int | None
    candidates: list[Candidate]
    token_ids: list[int]
    piece_convention: str = ""

    @property
    def tokens(self) -> list[str]:
        return [c.token for c in self.candidates]

    @property
    def probabilities(self) -> list[float]:
        return [c.probability for c in self.candidates]


@dataclass(frozen=True)
class MaskedInput:
    """A fill-mask input as the model sees it: the encoder's :class:`MaskedPieces` plus where
    each mask sits among the user's words.

    Attributes:
        tokenized: the encoder's own tokenisation (text, pieces, ids, mask positions, inputs).
        word_indices: word index of each mask, or None (see MaskPrediction) (n_masks,).
    """

    tokenized: MaskedPieces
    word_indices: list[int | None]

    @property
    def text(self) -> str:
        """The text fed to the tokenizer (user masks replaced by the model's own token)."""
        return self.tokenized.text

    @property
    def pieces(self) -> list[str]:
        """The model's pieces, special tokens included (n_pieces,)."""
        return self.tokenized.pieces

    @property
    def input_ids(self) -> list[int]:
        """Their vocabulary ids (n_pieces,)."""
        return self.tokenized.input_ids

    @property
    def mask_positions(self) -> list[int]:
        """Piece index of each mask, in reading order (n_masks,)."""
        return self.tokenized.mask_positions


@dataclass(frozen=True)
class MaskLayers:
    """One mask, seen through the MLM head at every layer.

    Attributes:
        mask_index, position, word_index: as in MaskPrediction.
        tokens: top-k tokens per layer, (n_layers + 1) lists of k.
        probabilities: float32 (n_layers + 1, k), row ℓ = top-k probabilities at layer ℓ.
        final_token: the model's final top-1 token (last layer's first candidate).
        final_rank: int (n_layers + 1,), rank of ``final_token`` at each layer (1 = top).
        final_probability: float32 (n_layers + 1,), its probability at each layer.
        piece_convention: the model's ``info.piece_convention`` (how to read the pieces).
    """

    mask_index: int
    position: int
    word_index: int | None
    tokens: list[list[str]]
    probabilities: np.ndarray
    final_token: str
    final_rank: np.ndarray
    final_probability: np.ndarray
    piece_convention: str = ""


@dataclass(frozen=True)
class LayerPredictions:
    """Layer-wise predictions for every mask of one input.

    Attributes:
        model: the encoder's name.
        layer_names: (n_layers + 1,) names; 0 is the embedding layer.
        pieces: the model's pieces for the input.
        masks: one MaskLayers per mask, in reading order.
    """

    model: str
    layer_names: tuple[str, ...]
    pieces: list[str]
    masks: list[MaskLayers]

    @property
    def n_layer_arrays(self) -> int:
        """Number of rows per mask (contextual layers + 1, as an Encoding's n_layer_arrays)."""
        return len(self.layer_names)


# -- input -----------------------------------------------------------------------------


def count_masks(text: str) -> int:
    """How many masks (``[MASK]``, ``[mask]``, ``<mask>``…) the user typed."""
    return len(MASK_RE.findall(text))


def check_text(text: str, max_masks: int = DEFAULT_MAX_MASKS) -> int:
    """Validate a fill-mask text without a model; returns its number of masks.

    Raises:
        EmptyInputError: empty or whitespace-only text.
        NoMaskError: no mask in the text (this includes punctuation-only text like "?!.").
        TooManyMasksError: more than ``max_masks`` masks.
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a string, not {type(text).__name__}")
    text = CONTROL_RE.sub(" ", text)
    if not text.strip():
        raise EmptyInputError(
            "The text is empty. Type a sentence with [MASK] where a word is missing, "
            f"e.g. “{EXAMPLE}”"
        )
    n = count_masks(text)
    if n == 0:
        raise NoMaskError(
            "There is no [MASK] in the text. Put [MASK] where the model should guess a word, "
            "e.g. “The [MASK] sat on the mat.”"
        )
    if n > max_masks:
        raise TooManyMasksError(
            f"The text has {n} masks; at most {max_masks} are allowed at once. Every mask "
            "hides context from the others, so remove some (or fill them in) and try again."
        )
    return n


def _mask_word_indices(text: str) -> list[int | None]:
    """Word index of each mask, or None when it is glued to letters/digits ("un[MASK]able")."""
    out: list[int | None] = []
    for k, m in enumerate(_WORD_OR_MASK_RE.finditer(text)):
        if m.group(1) is None:
            continue
        before = text[m.start() - 1] if m.start() > 0 else " "
        after = text[m.end()] if m.end() < len(text) else " "
        glued = bool(re.match(r"\w", before)) or bool(re.match(r"\w", after))
        out.append(None if glued else k)
    return out


def masked_lm(encoder: Encoder) -> MaskedLM:
    """``encoder`` as a MaskedLM, or NoMLMHeadError saying what to pick instead."""
    if not isinstance(encoder, MaskedLM):
        if encoder.info.no_mlm_head_reason:
            raise NoMLMHeadError(
                f"{encoder.info.no_mlm_head_reason} Pick a model with one (e.g. minilm-l6-mlm, "
                "bert-base-uncased)."
            )
        raise NoMLMHeadError(
            f"{encoder.info.name} has no masked-language-model head, so it cannot fill masks. "
            "Pick a model with one (e.g. minilm-l6-mlm, bert-base-uncased)."
        )
    return encoder


def single_piece(encoder: Encoder, word: str) -> tuple[str, int]:
    """The one vocabulary piece ``encoder`` reads ``word`` as inside a sentence (with its
    leading space, for byte-level BPE): its readable label and its id.

    Raises:
        EmptyInputError: a blank word.
        NoMLMHeadError: the encoder has no MLM head.
        MultiPieceTargetError: the model splits the word (a mask stands for one piece).
        SpecialTokenError: the word is one of the model's special tokens (``[MASK]``,
            ``[CLS]``, ``[PAD]``…), which :meth:`vocabulary` leaves out.
    """
    mlm = masked_lm(encoder)
    word = word.strip()
    if not word:
        raise EmptyInputError("Type a word.")
    pieces, word_ids = mlm.tokenize([word])
    own = [p for p, w in zip(pieces, word_ids, strict=True) if w == 0]
    if len(own) != 1:
        raise MultiPieceTargetError(
            f"{mlm.info.name} reads {word!r} as {len(own)} pieces ({' '.join(own)}); a mask "
            "stands for one piece, so pick a word it reads as one piece (or one of these)."
        )
    token_id = mlm.vocabulary().get(own[0])
    if token_id is None:
        raise SpecialTokenError(
            f"{word!r} is one of {mlm.info.name}'s special tokens (such as [CLS], [SEP], "
            "[PAD] and [MASK]), not a word it guesses: pick a word (e.g. paris)."
        )
    token_id = int(token_id)
    return mlm.token_labels([token_id])[0], token_id


def prepare(encoder: Encoder, text: str, max_masks: int = DEFAULT_MAX_MASKS) -> MaskedInput:
    """Tokenise ``text`` for ``encoder``'s MLM, with every user mask as the model's mask token.

    Raises:
        NoMLMHeadError: the encoder has no MLM head (or its tokenizer has no mask token).
        EmptyInputError, NoMaskError, TooManyMasksError: see :func:`check_text`.
        InputTooLongError: more pieces than the model takes.
    """
    mlm = masked_lm(encoder)
    check_text(text, max_masks)
    clean = CONTROL_RE.sub(" ", text)
    # The text between masks, each mask taking the whitespace before it; the leading space
    # is given once to the whole text so that a mask at the very start swallows it too.
    parts = _MASK_WITH_SPACE_RE.split(" " + clean.strip())
    return MaskedInput(tokenized=mlm.tokenize_masked(parts), word_indices=_mask_word_indices(clean))


# -- predictions -----------------------------------------------------------------------


@torch.inference_mode()
def fill_mask(
    encoder: Encoder, text: str, top_k: int = 10, max_masks: int = DEFAULT_MAX_MASKS
) -> list[MaskPrediction]:
    """Top-k guesses at every mask in ``text``, all masks masked in one forward pass.

    Args:
        encoder: a :class:`~probing.encoders.base.MaskedLM` (others raise NoMLMHeadError).
        text: raw text with one to ``max_masks`` ``[MASK]`` (any case, or ``<mask>``).
        top_k: candidates per mask (1 … vocabulary size).
        max_masks: the most masks allowed.

    Returns:
        One MaskPrediction per mask, in reading order.

    Raises:
        NoMLMHeadError, EmptyInputError, NoMaskError, TooManyMasksError, InputTooLongError.
    """
    mlm = masked_lm(encoder)
    masked = prepare(mlm, text, max_masks)
    return predictions(mlm, masked, mlm.mask_logits(masked.tokenized), top_k)


def _check_top_k(top_k: int, vocab: int) -> int:
    if not 1 <= int(top_k) <= vocab:
        raise InvalidArgumentError(f"top_k must be between 1 and {vocab}, not {top_k}.")
    return int(top_k)


def predictions(
    encoder: MaskedLM, masked: MaskedInput, mask_logits: torch.Tensor, top_k: int
) -> list[MaskPrediction]:
    """Top-k per mask of ``masked`` from its (n_masks, vocab) logits."""
    top_k = _check_top_k(top_k, mask_logits.shape[-1])
    probs = torch.softmax(mask_logits.float(), dim=-1)
    top_p, top_i = probs.topk(top_k, dim=-1)  # sorted, most probable first
    out = []
    for m, (pos, word) in enumerate(zip(masked.mask_positions, masked.word_indices, strict=True)):
        ids = top_i[m].tolist()
        labels = encoder.token_labels(ids)
        out.append(
            MaskPrediction(
                mask_index=m,
                position=pos,
                word_index=word,
                candidates=[
                    Candidate(t, float(p)) for t, p in zip(labels, top_p[m].tolist(), strict=True)
                ],
                token_ids=ids,
                piece_convention=encoder.info.piece_convention,
            )
        )
    return out


@torch.inference_mode()
def fill_mask_by_layer(
    encoder: Encoder, text: str, top_k: int = 5, max_masks: int = DEFAULT_MAX_MASKS
) -> LayerPredictions:
    """The MLM head applied to every layer's hidden state at each mask ("logit lens").

    One forward pass with ``output_hidden_states``; the head maps each layer's
    (n_masks, dim) states to (n_masks, vocab) logits. Layer 0 is the embedding layer (the
    head there mostly echoes the mask token's own embedding). The last row uses the model's
    own logits from the same pass, so it equals :func:`fill_mask`'s output exactly; the
    head applied to the last hidden state is checked against them, which catches an
    architecture whose head the adapter gets wrong.

    Returns:
        LayerPredictions with, per mask, the top-k per layer and the rank/probability of
        the final top-1 token per layer.

    Raises:
        as :func:`fill_mask`; NoMLMHeadError also when the head cannot be applied per layer.
    """
    mlm = masked_lm(encoder)
    masked = prepare(mlm, text, max_masks)
    pos = masked.mask_positions
    logits = mlm.mask_logits_by_layer(masked.tokenized)  # (L+1, n_masks, vocab)
    probs = torch.softmax(logits, dim=-1)  # (L+1, n_masks, vocab)
    top_p, top_i = probs.topk(_check_top_k(top_k, probs.shape[-1]), dim=-1)  # (L+1, n_masks, k)
    final_ids = top_i[-1, :, 0]  # (n_masks,)
    final_p = probs.gather(-1, final_ids[None, :, None].expand(probs.shape[0], -1, 1))[..., 0]
    # Rank = 1 + how many tokens the layer finds strictly more probable than the final answer.
    final_rank = (probs > final_p[..., None]).sum(-1) + 1  # (L+1, n_masks)
    masks = []
    for m, (p, word) in enumerate(zip(pos, masked.word_indices, strict=True)):
        tokens = [mlm.token_labels(top_i[layer, m].tolist()) for layer in range(probs.shape[0])]
        masks.append(
            MaskLayers(
                mask_index=m,
                position=p,
                word_index=word,
                tokens=tokens,
                probabilities=top_p[:, m].cpu().numpy().astype(np.float32),
                final_token=tokens[-1][0],
                final_rank=final_rank[:, m].cpu().numpy().astype(np.int64),
                final_probability=final_p[:, m].cpu().numpy().astype(np.float32),
                piece_convention=encoder.info.piece_convention,
            )
        )
    n_rows = logits.shape[0]
    names = tuple(encoder.info.layer_names)
    if len(names) != n_rows:
        names = ("embeddings",) + tuple(f"layer {i}" for i in range(1, n_rows))
    return LayerPredictions(
        model=encoder.info.name, layer_names=names, pieces=masked.pieces, masks=masks
    )
