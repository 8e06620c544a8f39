"""The encoder protocol shared by the BERT family and ELMo."""

from __future__ import annotations

import abc
import copy
import re
from collections.abc import Callable, Sequence

from probing.encoders import batching
from probing.encoding import Encoding, ModelInfo
from probing.errors import EmptyInputError, NoMLMHeadError

Sentences = str | Sequence[str] | Sequence[Sequence[str]]
ProgressFn = Callable[[int, int], None]  # (done, total)

# Words are runs of letters/digits (with inner apostrophes/hyphens kept together) or single
# punctuation marks; close to what UD and PTB tokenisers give for plain English text.
_WORD_RE = re.compile(r"\w+(?:['’\-]\w+)*|[^\w\s]", re.UNICODE)
_CONTROL_RE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def split_words(text: str) -> list[str]:
    """Split raw text into words (punctuation separate). Control characters are dropped."""
    return _WORD_RE.findall(_CONTROL_RE.sub(" ", text))


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
        words = [w for w in (_CONTROL_RE.sub("", w).strip() for w in words) if w]
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
        other = copy.copy(self)
        other.dtype = resolved
        return other

    def _autocast(self):  # noqa: ANN202 - context manager for one forward pass
        device = getattr(self, "device", None)
        return batching.autocast(self.dtype, getattr(device, "type", "cpu"))

    def piece_counts(self, batch: list[list[str]]) -> list[int]:
        """Model positions each sentence takes (special tokens included), for batching.
        Default: one per word plus two boundary tokens."""
        return [len(words) + 2 for words in batch]

    def encode(
        self,
        sentences: Sentences,
        pooling: str = "first",
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
        self, batch: list[list[str]], pooling: str, attentions: bool, windowed: bool
    ) -> list[Encoding]:
        """Encode a batch of word lists."""

    def fill_mask(self, text: str, top_k: int = 10):
        """Top-k predictions for each [MASK] in ``text`` (encoders with an MLM head)."""
        raise NoMLMHeadError(
            f"{self.name} has no masked-language-model head, so it cannot fill masks. "
            "Pick a model with one (e.g. minilm-l6-mlm, bert-base-uncased)."
        )

    def tokenize(self, words: list[str]) -> tuple[list[str], list[int | None]]:
        """The model's pieces for a word list and each piece's word index."""
        raise NotImplementedError
