"""ELMo-mini's training data and language model: word-type batches and the biLM with one
adaptive softmax shared by both directions (see :mod:`probing.training.elmo_lm`)."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor, nn

from probing.encoders.elmo import BOS_TOKEN, EOS_TOKEN, ElmoBiLm, ElmoConfig, char_ids

UNK_TOKEN = "<UNK>"
SPECIALS = (BOS_TOKEN, EOS_TOKEN, UNK_TOKEN)  # vocab ids 0, 1, 2

MINI_CONFIG = ElmoConfig(
    char_embed_dim=16,
    filters=((1, 32), (2, 32), (3, 64), (4, 128), (5, 256)),
    n_highway=2,
    activation="relu",
    n_characters=262,
    max_characters_per_token=50,
    lstm_dim=512,
    projection_dim=128,
    n_layers=2,
    cell_clip=3.0,
    proj_clip=3.0,
    use_skip_connections=True,
)


# -- data ---------------------------------------------------------------------------------


@dataclass
class Corpus:
    """Sentences as word-type ids: sentence ``i`` is ``types[offsets[i]:offsets[i + 1]]``.

    ``type_chars[t]`` are the char ids of type ``t`` (types 0 and 1 are ``<S>``/``</S>``);
    ``type_vocab[t]`` is its LM vocabulary id (``<UNK>`` = 2 for rare words).
    """

    types: np.ndarray  # (n tokens,) int32
    offsets: np.ndarray  # (n sentences + 1,) int64
    type_chars: np.ndarray  # (n types, 50) int16
    type_vocab: np.ndarray  # (n types,) int64

    @property
    def n_sentences(self) -> int:
        return len(self.offsets) - 1

    @property
    def n_words(self) -> int:
        return len(self.types)

    def lengths(self) -> np.ndarray:
        return np.diff(self.offsets)


class TypeTable:
    """Word strings -> type ids, growing as new words are seen."""

    def __init__(self) -> None:
        self.ids: dict[str, int] = {BOS_TOKEN: 0, EOS_TOKEN: 1}
        self.words: list[str] = [BOS_TOKEN, EOS_TOKEN]

    def id(self, word: str) -> int:
        i = self.ids.get(word)
        if i is None:
            i = self.ids[word] = len(self.words)
            self.words.append(word)
        return i


def _chunks(words: list[str], max_len: int) -> Iterator[list[str]]:
    """Over-long sentences are cut into pieces of at most ``max_len`` words."""
    for start in range(0, len(words), max_len):
        yield words[start : start + max_len]


def build_corpus(
    sentences: Iterable[list[str]], table: TypeTable, max_len: int, vocab: dict[str, int]
) -> Corpus:
    """Index ``sentences`` with ``table`` and map types into the LM ``vocab``."""
    types: list[int] = []
    offsets = [0]
    for words in sentences:
        for piece in _chunks(words, max_len):
            types.extend(table.id(w) for w in piece)
            offsets.append(len(types))
    type_chars = np.array([char_ids(w) for w in table.words], dtype=np.int16)
    unk = vocab[UNK_TOKEN]
    type_vocab = np.array([vocab.get(w, unk) for w in table.words], dtype=np.int64)
    return Corpus(
        np.array(types, dtype=np.int32), np.array(offsets, dtype=np.int64), type_chars, type_vocab
    )


def build_vocab(sentences: Iterable[list[str]], size: int) -> list[str]:
    """``<S>``, ``</S>``, ``<UNK>``, then the ``size`` most frequent words (ties by string)."""
    counts = Counter(w for words in sentences for w in words)
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    return list(SPECIALS) + [w for w, _ in ranked[:size] if w not in SPECIALS]


def epoch_batches(corpus: Corpus, batch_tokens: int, seed: int, epoch: int) -> list[np.ndarray]:
    """Sentence-index batches for one epoch, deterministic in (seed, epoch).

    Sentences are shuffled, then sorted by length within pools of ~100 batches so a batch
    holds similar lengths (little padding), then the batches are shuffled.
    """
    rng = np.random.default_rng([seed, epoch])
    order = rng.permutation(corpus.n_sentences)
    lengths = corpus.lengths() + 2  # with <S> and </S>
    pool_size = max(1, 100 * batch_tokens // max(1, int(lengths.mean())))
    batches: list[np.ndarray] = []
    for start in range(0, len(order), pool_size):
        pool = order[start : start + pool_size]
        pool = pool[np.argsort(lengths[pool], kind="stable")]
        batch: list[int] = []
        longest = 0
        for i in pool:
            longest = max(longest, int(lengths[i]))
            if batch and longest * (len(batch) + 1) > batch_tokens:
                batches.append(np.array(batch))
                batch, longest = [], int(lengths[i])
            batch.append(int(i))
        if batch:
            batches.append(np.array(batch))
    rng.shuffle(batches)
    return batches


def make_batch(corpus: Corpus, sentence_ids: np.ndarray) -> tuple[Tensor, Tensor]:
    """Char ids int64 (B, T, 50) with <S>/</S>, and vocab targets int64 (B, T) (-1 = pad)."""
    rows = [corpus.types[corpus.offsets[i] : corpus.offsets[i + 1]] for i in sentence_ids]
    T = max(len(r) for r in rows) + 2
    type_ids = np.full((len(rows), T), -1, dtype=np.int64)
    for b, r in enumerate(rows):
        type_ids[b, : len(r) + 2] = np.concatenate([[0], r, [1]])
    pad = type_ids < 0
    safe = np.where(pad, 0, type_ids)
    chars = corpus.type_chars[safe].astype(np.int64)
    chars[pad] = 0
    targets = np.where(pad, -1, corpus.type_vocab[safe])
    return torch.from_numpy(chars), torch.from_numpy(targets)


# -- model --------------------------------------------------------------------------------


def default_cutoffs(vocab_size: int) -> list[int]:
    """Adaptive-softmax clusters: 2k frequent words, the next 8k, the rest."""
    return [c for c in (2000, 10000) if c < vocab_size - 1] or [max(1, vocab_size // 2)]


class BiLanguageModel(nn.Module):
    """ELMo biLM + one adaptive softmax over the LM vocabulary, shared by both directions."""

    def __init__(
        self, config: ElmoConfig, vocab_size: int, dropout: float = 0.1, div_value: float = 4.0
    ) -> None:
        super().__init__()
        self.bilm = ElmoBiLm(config, dropout=dropout)
        self.dropout = dropout
        self.softmax = nn.AdaptiveLogSoftmaxWithLoss(
            config.projection_dim, vocab_size, default_cutoffs(vocab_size), div_value=div_value
        )

    def forward(self, chars: Tensor, targets: Tensor) -> tuple[Tensor, Tensor, int]:
        """Summed NLL of the forward and the backward LM, and the number of predictions each.

        chars: (B, T, 50) with <S>/</S>; targets: (B, T) vocab ids. The forward LM predicts
        token t+1 from its top layer at t; the backward LM token t-1 from its top layer at t.
        """
        out = self.bilm(chars)
        top_f, top_b = out.forward[-1], out.backward[-1]
        if self.training and self.dropout > 0:
            top_f, top_b = F.dropout(top_f, self.dropout), F.dropout(top_b, self.dropout)
        pred = out.mask[:, 1:]  # (B, T-1): positions t+1 (fwd target) / t (bwd source) exist
        nll_f = -self.softmax(top_f[:, :-1][pred], targets[:, 1:][pred]).output.sum()
        nll_b = -self.softmax(top_b[:, 1:][pred], targets[:, :-1][pred]).output.sum()
        return nll_f, nll_b, int(pred.sum())


@torch.no_grad()
def evaluate(model: BiLanguageModel, corpus: Corpus, batch_tokens: int) -> dict[str, float]:
    """Held-out perplexity of each direction over every prediction in ``corpus``."""
    was_training = model.training
    model.eval()
    nll_f = nll_b = 0.0
    n = 0
    for ids in epoch_batches(corpus, batch_tokens, seed=0, epoch=0):
        chars, targets = make_batch(corpus, ids)
        f, b, k = model(chars, targets)
        nll_f, nll_b, n = nll_f + float(f), nll_b + float(b), n + k
    model.train(was_training)
    return {
        "ppl_forward": math.exp(nll_f / n),
        "ppl_backward": math.exp(nll_b / n),
        "predictions": n,
    }
