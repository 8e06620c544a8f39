"""The encoder interface shared by the BERT family and ELMo, and the optional capabilities.

:class:`Encoder` is what every analysis takes. Capabilities only some encoders have are
protocols checked with ``isinstance``: :class:`MaskedLM` (a masked-language-model head, for
fill-mask) and :class:`PairEncoder` (a segment-A/B input with attention).
"""

from __future__ import annotations

import abc
import contextlib
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

from probing.encoders import batching
from probing.encoding import Encoding, ModelInfo, Pooling
from probing.errors import EmptyInputError

if TYPE_CHECKING:
    import torch

Sentences = str | Sequence[str] | Sequence[Sequence[str]]
ProgressFn = Callable[[int, int], None]  # (done, total)

# Words are runs of letters/digits (with inner apostrophes/hyphens kept together) or single
# punctuation marks; close to what UD and PTB tokenisers give for plain English text.
_WORD_RE = re.compile(r"\w+(?:['’\-]\w+)*|[^\w\s]", re.UNICODE)
# ASCII control characters except tab and newline: dropped from every text users type.
CONTROL_RE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def split_words(text: str) -> list[str]:
    """Split raw text into words (punctuation separate). Control characters are dropped."""
    return _WORD_RE.findall(CONTROL_RE.sub(" ", text))


def normalize_sentences(sentences: Sentences) -> list[list[str]]:
    """Turn the accepted input forms into a batch of word lists.

    A string is one raw sentence; a list of strings is a batch of raw sentences; a list of
    word lists is a batch of pre-tokenized sentences. Raises EmptyInputError for empty input.
    """
    items = [sentences] if isinstance(sentences, str) else list(sentences)
    if not items:
        raise EmptyInputError("No sentences given.")
    batch: list[list[str]] = []
    for i, item in enumerate(items):
        words = split_words(item) if isinstance(item, str) else [str(w) for w in item]
        words = [w for w in (CONTROL_RE.sub("", w).strip() for w in words) if w]
        if not words:
            raise EmptyInputError(f"Sentence {i + 1} has no words in it.")
        batch.append(words)
    return batch


class Encoder(abc.ABC):
    """An encoder maps sentences to per-layer word vectors.

    Subclasses implement :meth:`_encode_batch`; this class handles input forms.
    """

    info: ModelInfo
    # Compute dtype of forward passes ("float32" or "bfloat16" autocast); see with_dtype.
    dtype: str = "float32"

    @property
    def name(self) -> str:
        return self.info.name

    def with_dtype(self, dtype: str) -> Encoder:
        """This encoder computing in ``dtype`` (``float32``, ``bfloat16`` or ``auto``: bf16
        on CUDA and on CPUs with AVX512-BF16/AMX). Shares the weights; ``self`` is unchanged.

        Raises:
            InvalidArgumentError: an unknown dtype.
        """
        device = getattr(self, "device", None)
        resolved = batching.resolve_dtype(dtype, getattr(device, "type", "cpu"))
        if resolved == self.dtype:
            return self
        # A shallow copy that skips __new__ (TransformersEncoder.__new__ picks its class
        # from the weights it is given, which copy.copy would not pass).
        other = object.__new__(type(self))
        other.__dict__.update(self.__dict__)
        other.dtype = resolved
        return other

    def _autocast(self) -> contextlib.AbstractContextManager[None]:  # for one forward pass
        device = getattr(self, "device", None)
        return batching.autocast(self.dtype, getattr(device, "type", "cpu"))

    def layer_parts(self) -> Any:
        """This encoder's layer surface: where its hidden states are read and replaced with
        the layers above recomputed (:class:`probing.encoders.surface.ModelParts` for a
        `transformers` encoder, :class:`probing.encoders.elmo_surface.ElmoParts` for ELMo).

        Raises:
            UnsupportedArchitectureError: an encoder whose layers cannot be hooked.
        """
        from probing.errors import UnsupportedArchitectureError

        raise UnsupportedArchitectureError(
            self.info.no_hooks_reason or f"{self.name}'s layers cannot be hooked."
        )

    def piece_counts(self, batch: list[list[str]]) -> list[int]:
        """Model positions each sentence takes (special tokens included), for batching.
        Default: one per word plus two boundary tokens."""
        return [len(words) + 2 for words in batch]

    def encode(
        self,
        sentences: Sentences,
        pooling: Pooling = "first",
        attentions: bool = False,
        *,
        windowed: bool = False,
        batch_size: int = batching.DEFAULT_BATCH_SIZE,
        max_tokens: int | None = batching.DEFAULT_MAX_TOKENS,
        progress: ProgressFn | None = None,
    ) -> list[Encoding]:
        """Encode one or more sentences.

        Sentences are sorted by piece count and batched up to ``max_tokens`` padded
        positions (see :mod:`probing.encoders.batching`); results come back in input order
        and equal one-at-a-time encoding up to float rounding.

        Args:
            sentences: a string (one sentence), a list of strings (raw sentences) or a list
                of word lists (pre-tokenized sentences).
            pooling: how subword pieces become words: "first", "mean" or "last".
            attentions: also return attention weights (encoders that have them).
            windowed: for over-long inputs, encode in overlapping windows instead of raising
                InputTooLongError (dataset paths); attentions are not available then.
            batch_size: most sentences per forward pass (≥ 1).
            max_tokens: most padded positions per forward pass (None: no limit).
            progress: called with (sentences done, total).

        Returns:
            One Encoding per sentence, in input order.

        Raises:
            InvalidArgumentError: batch_size < 1 or max_tokens < 1.
        """
        batching.check_batch_args(batch_size, max_tokens)
        batch = normalize_sentences(sentences)
        total = len(batch)
        if getattr(self, "stateful", False):
            # Carried state belongs to batch rows: keep the caller's order and grouping.
            plan = [list(range(s, min(s + batch_size, total))) for s in range(0, total, batch_size)]
        else:
            plan = batching.plan_batches(self.piece_counts(batch), batch_size, max_tokens)
        out: list[Encoding | None] = [None] * total
        done = 0
        for idx in plan:
            encs = self._encode_batch([batch[i] for i in idx], pooling, attentions, windowed)
            for i, enc in zip(idx, encs, strict=True):
                out[int(i)] = enc
            done += len(idx)
            if progress is not None:
                progress(done, total)
        return out  # type: ignore[return-value] - every slot is filled by the plan

    @abc.abstractmethod
    def _encode_batch(
        self, batch: list[list[str]], pooling: Pooling, attentions: bool, windowed: bool
    ) -> list[Encoding]:
        """Encode a batch of word lists."""

    def tokenize(self, words: list[str]) -> tuple[list[str], list[int | None]]:
        """The model's pieces for a word list and each piece's word index."""
        raise NotImplementedError


# -- capabilities ------------------------------------------------------------------------


@dataclass(frozen=True)
class MaskedPieces:
    """A text with masks as a masked LM reads it.

    Attributes:
        text: the text fed to the tokenizer (every mask written as the model's mask token).
        pieces: the model's pieces, special tokens included (n_pieces,).
        input_ids: their vocabulary ids (n_pieces,).
        mask_positions: piece index of each mask, in reading order (n_masks,).
        inputs: the model's forward inputs (``input_ids``, ``attention_mask``, …), each a
            (1, n_pieces) tensor.
    """

    text: str
    pieces: list[str]
    input_ids: list[int]
    mask_positions: list[int]
    inputs: Mapping[str, Any] = field(repr=False)


@runtime_checkable
class MaskedLM(Protocol):
    """Capability: an encoder with a masked-language-model head (fill-mask)."""

    info: ModelInfo

    def tokenize_masked(self, parts: Sequence[str]) -> MaskedPieces:
        """Join ``parts`` (the text between masks, n_masks + 1 strings) with the mask token.

        Raises InputTooLongError when the result is longer than the model takes.
        """
        ...

    def mask_logits(
        self, masked: MaskedPieces, shown: Mapping[int, int] | None = None
    ) -> torch.Tensor:
        """The model's own logits at the masks, float32 (n_masks, vocab).

        ``shown`` maps a mask position to the vocabulary id the model is given there instead
        of the mask token (BERT's "random" and "keep" corruptions).
        """
        ...

    def mask_logits_by_layer(self, masked: MaskedPieces) -> torch.Tensor:
        """The MLM head applied to every layer at the masks, float32 (n_layers + 1, n_masks,
        vocab); the last row is the model's own logits."""
        ...

    def token_labels(self, ids: Sequence[int]) -> list[str]:
        """Readable labels for vocabulary ids in the tokenizer's own convention
        (``info.piece_convention``: ``##ing`` continues a word in WordPiece; ``Ġcat`` and
        ``▁cat`` start one in byte-level BPE and SentencePiece)."""
        ...

    def vocabulary(self) -> Mapping[str, int]:
        """Every piece of the vocabulary but the special tokens, with its id."""
        ...


@dataclass(frozen=True)
class PairEncoding:
    """Attention over a sentence pair, at the model's piece level.

    Attributes:
        pieces: the model's pieces, special tokens included (n,).
        word_ids: per piece, the index of its word in ``words``; None for special tokens.
        words: segment A's words, then segment B's.
        segments: per piece, 0 (A), 1 (B) or None (special tokens).
        token_type_ids: per piece, the segment id fed to the model; None if it takes none.
        attentions: float32 (layers, heads, n, n), rows = queries.
    """

    pieces: list[str]
    word_ids: list[int | None]
    words: list[str]
    segments: list[int | None]
    token_type_ids: list[int] | None
    attentions: np.ndarray


@runtime_checkable
class PairEncoder(Protocol):
    """Capability: an encoder that takes a sentence pair as one input (``[CLS] A [SEP] B``)."""

    info: ModelInfo

    def encode_pair(self, words_a: list[str], words_b: list[str]) -> PairEncoding:
        """Attention over the pair; InputTooLongError when it does not fit in one pass."""
        ...


@runtime_checkable
class AttentionNorms(Protocol):
    """Capability: the norms of the transformed value vectors (Kobayashi et al. 2020)."""

    info: ModelInfo

    def value_norms(self, words_a: list[str], words_b: list[str] | None = None) -> np.ndarray:
        """‖f_h(x_j)‖ for every layer, head and piece: float32 (layers, heads, n_pieces), the
        pieces as :meth:`Encoder.encode` (or, with ``words_b``, ``encode_pair``) gives them."""
        ...


@runtime_checkable
class LensableMLM(Protocol):
    """Capability: a masked LM whose per-layer states and head can be reached apart (the
    logit and tuned lenses apply the head to translated intermediate states)."""

    info: ModelInfo

    def mask_states_by_layer(self, masked: MaskedPieces) -> torch.Tensor:
        """Hidden states at the masks, float32 (n_layers + 1, n_masks, dim); the last row
        is what the MLM head reads."""
        ...

    def head_logits(self, hidden: torch.Tensor) -> torch.Tensor:
        """The MLM head alone applied to (..., dim) states: (..., vocab) logits."""
        ...
