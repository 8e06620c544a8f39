"""The encoder protocol shared by the BERT family and ELMo."""

from __future__ import annotations

import abc
import re
from collections.abc import Callable, Sequence

from probing.encoding import Encoding, ModelInfo
from probing.errors import EmptyInputError, InvalidArgumentError, NoMLMHeadError

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

    @property
    def name(self) -> str:
        return self.info.name

    def encode(
        self,
        sentences: Sentences,
        pooling: str = "first",
        attentions: bool = False,
        *,
        windowed: bool = False,
        batch_size: int = 16,
        progress: ProgressFn | None = None,
    ) -> list[Encoding]:
        """Encode one or more sentences.

        Args:
            sentences: a string (one sentence), a list of strings (raw sentences) or a list
                of word lists (pre-tokenized sentences).
            pooling: how subword pieces become words: "first", "mean" or "last".
            attentions: also return attention weights (encoders that have them).
            windowed: for over-long inputs, encode in overlapping windows instead of raising
                InputTooLongError (dataset paths); attentions are not available then.
            batch_size: sentences per forward pass.
            progress: called with (sentences done, total).

        Returns:
            One Encoding per sentence, in input order.
        """
        if int(batch_size) < 1:  # range() would silently give no batches: []
            raise InvalidArgumentError(f"batch_size must be at least 1, not {batch_size}.")
        batch = normalize_sentences(sentences)
        out: list[Encoding] = []
        total = len(batch)
        for start in range(0, total, batch_size):
            chunk = batch[start : start + batch_size]
            out.extend(self._encode_batch(chunk, pooling, attentions, windowed))
            if progress is not None:
                progress(min(start + batch_size, total), total)
        return out

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
