"""Attention heads as dependency parsers (Clark et al. 2019, §4.2).

Each head is read as a classifier: given a word, it predicts the word it attends to most.
As in Clark et al.'s code (``clarkkev/attention-analysis``), attention is word-level (to a
word: the sum over its pieces; from a word: the mean), [CLS]/[SEP] are dropped and a word's
attention to itself is ignored. Two directions are scored per head and relation:

- ``dependent → head``: the dependent's most-attended word is its gold head;
- ``head → dependent``: the word that attends most to the dependent is its head (the
  transposed map), i.e. the head finds its dependent.

The baseline predicts the word at a fixed offset from the dependent (−5…−1, +1…+5), the best
offset per relation. As in the paper, the best head and the best offset are both chosen on
the same sentences they are scored on (EWT dev), so the reported accuracies are optimistic
to the same degree; the intervals resample sentences for the chosen head and offset.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from probing.analyses.attention import AttentionMap, attention_from_encoding, word_attention
from probing.errors import InputTooLongError
from probing.probes.edge import base_relation

if TYPE_CHECKING:
    from probing.datasets.types import Sentence
    from probing.encoders.base import Encoder
    from probing.encoding import Encoding

DIRECTIONS = ("dependent → head", "head → dependent")
OFFSETS = tuple(k for k in range(-5, 6) if k != 0)
ProgressFn = Callable[[int, int], None]


@dataclass
class ParserScores:
    """Per-sentence counts of right predictions, for every relation, direction and head.

    Attributes:
        relations: the relations counted (subtypes merged), most frequent first.
        correct: int32 (n_sentences, n_relations, 2, layers, heads) right predictions.
        offset_correct: int32 (n_sentences, n_relations, n_offsets) for the baseline.
        total: int32 (n_sentences, n_relations) arcs.
        model: encoder name. n_sentences: sentences scored. skipped: sentences left out.
    """

    relations: list[str]
    correct: np.ndarray
    offset_correct: np.ndarray
    total: np.ndarray
    model: str = ""
    skipped: int = 0

    @property
    def n_sentences(self) -> int:
        return int(self.total.shape[0])

    def accuracy(self) -> np.ndarray:
        """(n_relations, 2, layers, heads) accuracy of every head on every relation."""
        n = self.total.sum(0).astype(float)
        return self.correct.sum(0) / np.maximum(n, 1)[:, None, None, None]

    def best_heads(self, min_count: int = 100, n_boot: int = 1000, seed: int = 0) -> pd.DataFrame:
        """One row per relation with at least ``min_count`` arcs and per direction: the
        best head, its accuracy and interval, and the best fixed offset's (same relation).

        Columns: relation, n, direction, layer (1-based), head (0-based), accuracy,
        ci_low, ci_high, baseline_offset, baseline_accuracy, baseline_ci_low,
        baseline_ci_high.
        """
        acc = self.accuracy()
        n_rel = self.total.sum(0)
        base = self.offset_correct.sum(0) / np.maximum(n_rel, 1)[:, None]
        rng = np.random.default_rng(seed)
        draws = [rng.integers(0, self.n_sentences, self.n_sentences) for _ in range(n_boot)]
        rows = []
        for r, rel in enumerate(self.relations):
            if n_rel[r] < min_count:
                continue
            k = int(np.argmax(base[r]))
            b_lo, b_hi = _interval(self.offset_correct[:, r, k], self.total[:, r], draws)
            for d, direction in enumerate(DIRECTIONS):
                layer, head = np.unravel_index(int(np.argmax(acc[r, d])), acc[r, d].shape)
                lo, hi = _interval(self.correct[:, r, d, layer, head], self.total[:, r], draws)
                rows.append(
                    {
                        "relation": rel,
                        "n": int(n_rel[r]),
                        "direction": direction,
                        "layer": int(layer) + 1,
                        "head": int(head),
                        "accuracy": float(acc[r, d, layer, head]),
                        "ci_low": lo,
                        "ci_high": hi,
                        "baseline_offset": OFFSETS[k],
                        "baseline_accuracy": float(base[r, k]),
                        "baseline_ci_low": b_lo,
                        "baseline_ci_high": b_hi,
                    }
                )
        return pd.DataFrame(rows)


def _interval(correct: np.ndarray, total: np.ndarray, draws: list[np.ndarray]) -> tuple:
    if not draws:
        return float("nan"), float("nan")
    vals = [correct[i].sum() / max(total[i].sum(), 1) for i in draws]
    lo, hi = np.quantile(vals, [0.025, 0.975])
    return float(lo), float(hi)


def head_predictions(weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Most-attended word per word, both directions, for word-level attention without specials.

    Args:
        weights: (layers, heads, n, n) word → word attention.

    Returns:
        (layers, heads, n) ints twice: ``argmax_j A[i, j]`` (whom word i attends to) and
        ``argmax_j A[j, i]`` (who attends most to word i); self-attention ignored.
    """
    w = np.array(weights, dtype=np.float32, copy=True)
    n = w.shape[-1]
    w[..., np.arange(n), np.arange(n)] = -1.0
    return w.argmax(-1), w.argmax(-2)


def words_only(amap: AttentionMap) -> np.ndarray:
    """(layers, heads, n_words, n_words): word-level attention with special tokens dropped
    (not renormalised: only each row's argmax is used)."""
    wmap = word_attention(amap)
    keep = [i for i, w in enumerate(wmap.word_ids) if w is not None]
    return wmap.weights[..., keep, :][..., :, keep]


def score_parsers(
    encoder: Encoder,  # a BERT-family one
    sentences: Sequence,
    relations: Sequence[str] | None = None,
    batch_size: int = 8,
    progress: ProgressFn | None = None,
) -> ParserScores:
    """Score every head of ``encoder`` as a parser on UD sentences (with ``head``/``deprel``).

    Args:
        sentences: :class:`~probing.datasets.types.Sentence` objects with gold trees.
        relations: relations to count (default: every relation in the sentences, most
            frequent first; ``root`` is never counted: it has no head word).
    """
    rels = [[base_relation(r) for r in s.labels["deprel"]] for s in sentences]
    if relations is None:
        counts = pd.Series([r for rs in rels for r in rs if r != "root"]).value_counts()
        relations = list(counts.index)
    index = {r: k for k, r in enumerate(relations)}
    n_s = len(sentences)
    correct = None  # (n_s, relations, 2, layers, heads), once the first map gives its shape
    off = np.zeros((n_s, len(relations), len(OFFSETS)), np.int32)
    total = np.zeros((n_s, len(relations)), np.int32)
    skipped = 0
    for i, enc in _encodings(encoder, [s.words for s in sentences], batch_size, progress):
        if enc is None:
            skipped += 1
            continue
        to, frm = head_predictions(words_only(attention_from_encoding(enc)))
        if correct is None:
            correct = np.zeros((n_s, len(relations), 2, *to.shape[:2]), np.int32)
        _count(i, sentences[i], rels[i], index, to, frm, correct, off, total)
    if correct is None:
        raise ValueError("no sentence could be encoded with attentions")
    return ParserScores(list(relations), correct, off, total, encoder.info.name, skipped)


def _encodings(
    encoder: Encoder,
    words: Sequence[Sequence[str]],
    batch_size: int,
    progress: ProgressFn | None,
) -> Iterator[tuple[int, Encoding | None]]:
    """(index, Encoding with attentions or None if too long), in length order."""
    order = sorted(range(len(words)), key=lambda i: len(words[i]))
    for start in range(0, len(order), batch_size):
        ids = order[start : start + batch_size]
        try:
            encs = encoder.encode([list(words[i]) for i in ids], attentions=True)
        except InputTooLongError:  # one long sentence spoils the batch: one by one
            encs = []
            for i in ids:
                try:
                    encs.extend(encoder.encode([list(words[i])], attentions=True))
                except InputTooLongError:
                    encs.append(None)
        yield from zip(ids, encs, strict=True)
        if progress is not None:
            progress(min(start + batch_size, len(order)), len(order))


def _count(
    i: int,
    sent: Sentence,
    rels: list[str],
    index: dict[str, int],
    to: np.ndarray,
    frm: np.ndarray,
    correct: np.ndarray,
    off: np.ndarray,
    total: np.ndarray,
) -> None:
    heads = [int(h) for h in sent.labels["head"]]
    n = len(heads)
    for dep, (h, rel) in enumerate(zip(heads, rels, strict=True)):
        r = index.get(rel)
        if h == 0 or r is None or to.shape[-1] != n:
            continue
        gold = h - 1
        total[i, r] += 1
        correct[i, r, 0] += to[..., dep] == gold
        correct[i, r, 1] += frm[..., dep] == gold
        for k, o in enumerate(OFFSETS):
            off[i, r, k] += dep + o == gold


def parser_sentences(split: str = "dev", n: int | None = None) -> list:
    """UD-EWT sentences with gold trees; ``n`` spread evenly over the split (None: all)."""
    from probing.datasets import read_sentences

    sents = [s for s in read_sentences("ud-ewt", split) if s.words]
    if n is None or n >= len(sents):
        return sents
    picks = np.linspace(0, len(sents) - 1, n).round().astype(int)
    return [sents[i] for i in picks]


def sentence_arcs(
    amap: AttentionMap, layer: int, head: int, direction: str = DIRECTIONS[0]
) -> tuple[list[str], list[tuple[int, int]]]:
    """One head read as a parser on one sentence: its words (special tokens dropped) and,
    per word, the arc (word, predicted head word) — the same reading as :func:`score_parsers`.

    Args:
        amap: the sentence's attention (piece or word level, special tokens present).
        layer: 1-based, as in :meth:`ParserScores.best_heads`; head: 0-based.
        direction: one of ``DIRECTIONS`` (whom the word attends to most, or who attends most
            to it).
    """
    if direction not in DIRECTIONS:
        raise ValueError(f"direction must be one of {DIRECTIONS}, not {direction!r}")
    wmap = word_attention(amap)
    words = [t for t, w in zip(wmap.tokens, wmap.word_ids, strict=True) if w is not None]
    weights = words_only(amap)[layer - 1 : layer, head : head + 1]
    to, frm = head_predictions(weights)
    predicted = (to if direction == DIRECTIONS[0] else frm)[0, 0]
    return words, [(i, int(j)) for i, j in enumerate(predicted)]
