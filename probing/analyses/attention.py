"""Attention maps: piece → word aggregation, special tokens, sentence pairs, head statistics.

An :class:`AttentionMap` is the attention of every layer and head over one labelled token
sequence. It starts at the model's level (word pieces, special tokens included) and can be
turned into word → word attention and/or have the special tokens hidden:

    Encoding / sentence pair ──► AttentionMap (pieces) ──word_attention──► (words)
                                                       ──hide_special───► (rows renormalised)

Rows are the *attending* token (the query), columns the *attended* token (the key); every row
of a raw attention matrix sums to 1, and every function here keeps it so.

Head statistics follow Clark et al. (2019), "What does BERT look at? An analysis of BERT's
attention" and their code (clarkkev/attention-analysis): for each layer × head, the mean
over query positions of the attention entropy and of the share of attention going to [CLS],
to [SEP], to punctuation ("." and "," pieces), to the previous and to the next token — first
per example (an example is a document where the data set has documents, else an input),
then averaged over examples with equal weight. They are computed over the raw piece-level
maps, streamed sentence by sentence so that a corpus sample needs only a few (layers,
heads) accumulators. Differences from the reference: their examples are 128-piece segments
encoded whole, ours are sentences encoded one by one and pooled per document; their entropy
smooths the weights (0.9999·a + 0.0001/n), ours is exact (0·log 0 = 0).

One module (about 650 lines) on purpose: maps, word pooling, pairs and the streamed
statistics all work on :class:`AttentionMap` and its piece bookkeeping.
"""

from __future__ import annotations

import contextlib
import math
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd

from probing.analyses.params import AttentionStatsParams
from probing.encoders.base import Encoder, PairEncoder, normalize_sentences
from probing.encoding import Encoding
from probing.errors import InputTooLongError, NoAttentionError

Level = Literal["piece", "word"]
ProgressFn = Callable[[int, int], None]  # (done, total)

# Piece strings of the start and separator tokens in the BERT, RoBERTa and XLNet vocabularies.
CLS_TOKENS = frozenset({"[CLS]", "<s>", "<cls>"})
SEP_TOKENS = frozenset({"[SEP]", "</s>", "<sep>"})


# ----------------------------------------------------------------------------------------
# The attention map of one input
# ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AttentionMap:
    """Attention of every layer and head over one labelled token sequence.

    Attributes:
        tokens: a label per token (n): word pieces, words, or special tokens like [CLS].
        weights: float32 (layers, heads, n, n); ``weights[l, h, i, j]`` is how much token i
            (the query) attends to token j (the key) in head h of layer l + 1. Rows sum to 1.
        word_ids: per token, the index of its word in ``words``; None for special tokens.
        words: the input's words (for a pair: segment A's words, then segment B's).
        segments: per token, 0 (segment A) or 1 (segment B); None for special tokens.
        level: "piece" (the model's own units) or "word" (pieces aggregated per word).
        special_hidden: True when special tokens were removed and the rows renormalised.
        token_type_ids: per token, the segment id fed to the model (pairs; None if the
            model takes none).
        model: name of the model that made it.
    """

    tokens: list[str]
    weights: np.ndarray
    word_ids: list[int | None]
    words: list[str]
    segments: list[int | None]
    level: Level = "piece"
    special_hidden: bool = False
    token_type_ids: list[int] | None = None
    model: str = ""

    @property
    def n_attention_layers(self) -> int:
        """Layers with attention (a transformer's blocks; the input layer has none)."""
        return int(self.weights.shape[0])

    @property
    def n_heads(self) -> int:
        return int(self.weights.shape[1])

    @property
    def n_tokens(self) -> int:
        return len(self.tokens)

    @property
    def is_special(self) -> list[bool]:
        """Per token: True for special tokens ([CLS], [SEP], <s>, …)."""
        return [w is None for w in self.word_ids]

    @property
    def is_pair(self) -> bool:
        return any(s == 1 for s in self.segments)

    def head(self, layer: int, head: int) -> np.ndarray:
        """(n, n) weights of one head; ``layer`` is 1-based like the figures' labels."""
        return self.weights[layer - 1, head]


def attention_from_encoding(encoding: Encoding) -> AttentionMap:
    """The piece-level map of an encoding made with ``attentions=True``.

    The weights array is the encoding's own (no copy): piece level is a passthrough.
    Raises NoAttentionError when the encoding carries no attentions.
    """
    if encoding.attentions is None:
        raise NoAttentionError(
            f"{encoding.model.name} gave no attention weights for this input: ELMo has no "
            "attention, and BERT-family encoders return them only when asked (attentions=True) "
            "and the input fits in one window."
        )
    return AttentionMap(
        tokens=list(encoding.pieces),
        weights=encoding.attentions,
        word_ids=list(encoding.word_ids),
        words=list(encoding.words),
        segments=[None if w is None else 0 for w in encoding.word_ids],
        level="piece",
        model=encoding.model.name,
    )


def supports_pairs(encoder: Encoder) -> bool:
    """True for encoders that take a segment-A/B input and have attention (PairEncoder)."""
    return isinstance(encoder, PairEncoder) and encoder.info.has_attention


def encode_attention(encoder: Encoder, text: str, text_b: str | None = None) -> AttentionMap:
    """Piece-level attention of one sentence, or of a sentence pair when ``text_b`` is given.

    Raises:
        NoAttentionError: the encoder has no attention (ELMo), or no pair support.
        InputTooLongError: the input does not fit the model in one pass.
        EmptyInputError: no words in ``text`` (or in ``text_b``).
    """
    if not encoder.info.has_attention:
        raise NoAttentionError(f"{encoder.name} has no attention to show.")
    if text_b is not None and text_b.strip():
        return encode_pair_attention(encoder, text, text_b)
    (enc,) = encoder.encode(text, attentions=True)
    return attention_from_encoding(enc)


def encode_pair_attention(encoder: Encoder, text_a: str, text_b: str) -> AttentionMap:
    """Attention over a sentence pair: ``[CLS] A [SEP] B [SEP]`` (or the model's own form).

    :meth:`Encoder.encode` takes single sentences only; pairs go through the encoder's
    :class:`~probing.encoders.base.PairEncoder` capability.

    Returns:
        A piece-level AttentionMap with ``segments`` (0 for A, 1 for B, None for specials)
        and ``token_type_ids`` as fed to the model (None for models without them).

    Raises:
        NoAttentionError: the encoder cannot take pairs (ELMo).
        InputTooLongError: the pair is longer than the model's limit.
    """
    if not (isinstance(encoder, PairEncoder) and encoder.info.has_attention):
        raise NoAttentionError(
            f"{encoder.info.name} takes no sentence pairs (it has no attention)."
        )
    words_a, words_b = normalize_sentences([text_a, text_b])
    pair = encoder.encode_pair(words_a, words_b)
    return AttentionMap(
        tokens=pair.pieces,
        weights=pair.attentions,
        word_ids=pair.word_ids,
        words=pair.words,
        segments=pair.segments,
        level="piece",
        token_type_ids=pair.token_type_ids,
        model=encoder.info.name,
    )


# ----------------------------------------------------------------------------------------
# Piece → word, and hiding special tokens
# ----------------------------------------------------------------------------------------


def word_groups(word_ids: Sequence[int | None]) -> list[list[int]]:
    """Token indices of each output unit: each word's pieces, and each special token alone.

    Units are in order of their first piece, so special tokens keep their places.
    """
    groups: list[list[int]] = []
    by_word: dict[int, list[int]] = {}
    for i, w in enumerate(word_ids):
        if w is None:
            groups.append([i])
        elif w in by_word:
            by_word[w].append(i)
        else:
            by_word[w] = [i]
            groups.append(by_word[w])
    return groups


def aggregate_attention(weights: np.ndarray, groups: Sequence[Sequence[int]]) -> np.ndarray:
    """Piece → word attention (Clark et al. 2019, §4.1).

    Attention *to* a word is the SUM over its pieces (the probability mass it receives);
    attention *from* a word is the MEAN over its pieces (each piece's row is a distribution,
    and their mean is one too), so rows still sum to 1 when the groups cover every token.

    Args:
        weights: (..., n, n) attention, rows = queries.
        groups: token indices of each output unit (g groups).

    Returns:
        (..., g, g) float32 array.
    """
    n = weights.shape[-1]
    mean = np.zeros((len(groups), n), np.float32)  # (g, n): averages a unit's query rows
    total = np.zeros((len(groups), n), np.float32)  # (g, n): sums a unit's key columns
    for k, g in enumerate(groups):
        mean[k, list(g)] = 1.0 / len(g)
        total[k, list(g)] = 1.0
    return np.ascontiguousarray(mean @ weights.astype(np.float32, copy=False) @ total.T)


def word_attention(amap: AttentionMap) -> AttentionMap:
    """Word → word attention; special tokens stay as their own "words". Rows sum to 1."""
    if amap.level == "word":
        return amap
    groups = word_groups(amap.word_ids)
    firsts = [g[0] for g in groups]
    word_ids = [amap.word_ids[i] for i in firsts]
    return replace(
        amap,
        tokens=[
            amap.tokens[i] if w is None else amap.words[w]
            for i, w in zip(firsts, word_ids, strict=True)
        ],
        weights=aggregate_attention(amap.weights, groups),
        word_ids=word_ids,
        segments=[amap.segments[i] for i in firsts],
        token_type_ids=(
            None if amap.token_type_ids is None else [amap.token_type_ids[i] for i in firsts]
        ),
        level="word",
    )


def hide_special(amap: AttentionMap) -> AttentionMap:
    """Drop special tokens' rows and columns and renormalise each row to sum to 1.

    Special tokens soak up much of the attention in many heads (Clark et al.: up to half in
    middle layers); hiding them shows how the remaining attention is spread over the words.
    A row whose whole mass went to special tokens (all-zero after dropping) stays zero.
    """
    if amap.special_hidden:
        return amap
    keep = [i for i, w in enumerate(amap.word_ids) if w is not None]
    weights = amap.weights[..., keep, :][..., :, keep]
    sums = weights.sum(axis=-1, keepdims=True)
    weights = np.divide(weights, sums, out=np.zeros_like(weights), where=sums > 0)
    return replace(
        amap,
        tokens=[amap.tokens[i] for i in keep],
        weights=np.ascontiguousarray(weights, dtype=np.float32),
        word_ids=[amap.word_ids[i] for i in keep],
        segments=[amap.segments[i] for i in keep],
        token_type_ids=(
            None if amap.token_type_ids is None else [amap.token_type_ids[i] for i in keep]
        ),
        special_hidden=True,
    )


def attention_view(
    amap: AttentionMap, level: Level = "word", show_special: bool = True
) -> AttentionMap:
    """The map to draw: piece or word level, with or without special tokens.

    Words are formed first (special tokens as their own units), then special tokens are
    hidden, so a hidden-special word row is the renormalised word row, not a mean of
    renormalised piece rows.
    """
    if level not in ("piece", "word"):
        raise ValueError(f"level must be 'piece' or 'word', not {level!r}")
    out = word_attention(amap) if level == "word" else amap
    return out if show_special else hide_special(out)


def attention_frame(
    amap: AttentionMap, layers: Iterable[int] | None = None, heads: Iterable[int] | None = None
) -> pd.DataFrame:
    """Long table of weights for CSV: layer (1-based), head (0-based), query/key index and token."""
    layers = list(range(1, amap.n_attention_layers + 1)) if layers is None else list(layers)
    heads = list(range(amap.n_heads)) if heads is None else list(heads)
    n = amap.n_tokens
    q, k = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    tokens = np.asarray(amap.tokens, dtype=object)
    parts = []
    for layer in layers:
        for head in heads:
            parts.append(
                pd.DataFrame(
                    {
                        "layer": layer,
                        "head": head,
                        "from_index": q.ravel(),
                        "from_token": tokens[q.ravel()],
                        "to_index": k.ravel(),
                        "to_token": tokens[k.ravel()],
                        "weight": amap.weights[layer - 1, head].ravel(),
                    }
                )
            )
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()


# ----------------------------------------------------------------------------------------
# Head statistics (Clark et al. 2019)
# ----------------------------------------------------------------------------------------

# name -> description; entropy in nats (natural log), every other one a share in [0, 1].
STATISTICS: dict[str, str] = {
    "entropy": "attention entropy (nats)",
    "cls": "share of attention to [CLS]",
    "sep": "share of attention to [SEP]",
    "punct": 'share of attention to punctuation ("." and ",")',
    "prev": "share of attention to the previous token",
    "next": "share of attention to the next token",
    "self": "share of attention to the token itself",
}


@dataclass
class HeadStatistics:
    """Per layer × head statistics, each the mean over all query positions seen.

    Attributes:
        values: statistic name (see ``STATISTICS``) -> float64 (layers, heads).
        n_sentences: inputs that went in.
        n_queries: query positions (pieces, special tokens included) averaged over.
        skipped: inputs left out (too long for the model in one pass).
        model: the model's name.
        n_documents: examples averaged with equal weight when they are documents (0: every
            input is its own example).
        averaging: ``input`` (mean of per-input means), ``document`` (mean of per-document
            means) or ``query`` (all query positions pooled).
        ci: statistic -> (low, high), each (layers, heads): 95 % percentile intervals with
            the documents resampled (document averaging only; empty otherwise).
    """

    values: dict[str, np.ndarray]
    n_sentences: int
    n_queries: int
    skipped: int = 0
    model: str = ""
    n_documents: int = 0
    averaging: str = "input"
    ci: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)

    def __getitem__(self, name: str) -> np.ndarray:
        return self.values[name]

    @property
    def shape(self) -> tuple[int, int]:
        return next(iter(self.values.values())).shape  # type: ignore[return-value]

    def to_frame(self) -> pd.DataFrame:
        """Long table: layer (1-based), head (0-based), then one column per statistic."""
        n_layers, n_heads = self.shape
        layer, head = np.meshgrid(np.arange(1, n_layers + 1), np.arange(n_heads), indexing="ij")
        data = {"layer": layer.ravel(), "head": head.ravel()}
        data.update({name: v.ravel() for name, v in self.values.items()})
        for name, (low, high) in self.ci.items():
            data[f"{name}_ci_low"], data[f"{name}_ci_high"] = low.ravel(), high.ravel()
        return pd.DataFrame(data)


def token_kinds(amap: AttentionMap) -> dict[str, np.ndarray]:
    """Boolean masks (n,) of the key tokens each share statistic counts: cls, sep, punct.

    A special token is [CLS]-like when its piece is a known start token (or, failing that,
    it is the first token), [SEP]-like otherwise. Punctuation, as Clark et al.'s code: a
    piece that is "." or "," (a word-start marker such as RoBERTa's "Ġ" aside); "--", "!"
    or "?" are not counted.
    """
    n = amap.n_tokens
    cls = np.zeros(n, bool)
    sep = np.zeros(n, bool)
    punct = np.zeros(n, bool)
    for i, (tok, w) in enumerate(zip(amap.tokens, amap.word_ids, strict=True)):
        if w is None:
            if tok in CLS_TOKENS or (tok not in SEP_TOKENS and i == 0):
                cls[i] = True
            else:
                sep[i] = True
        elif tok.lstrip("Ġ▁") in CLARK_PUNCTUATION:
            punct[i] = True
    return {"cls": cls, "sep": sep, "punct": punct}


# The pieces Clark et al.'s code counts as punctuation.
CLARK_PUNCTUATION = frozenset({".", ","})


def is_punctuation(word: str) -> bool:
    """True when every character of ``word`` is Unicode punctuation (category P*)."""
    return bool(word) and all(unicodedata.category(c).startswith("P") for c in word)


def sentence_sums(amap: AttentionMap) -> dict[str, np.ndarray]:
    """Per-statistic sums over the query positions of one map, each float64 (layers, heads).

    Divide by ``amap.n_tokens`` for this map's means (what :func:`head_statistics` averages
    over inputs), or add them up over the inputs of one document and divide by its query
    positions (a document's means).
    """
    w = amap.weights.astype(np.float64)  # (L, H, n, n)
    kinds = token_kinds(amap)
    # 0 · log 0 = 0: the entropy of a one-hot row is 0.
    plogp = np.where(w > 0, w * np.log(np.where(w > 0, w, 1.0)), 0.0)
    sums = {
        "entropy": -plogp.sum(axis=(-1, -2)),
        "cls": w[..., kinds["cls"]].sum(axis=(-1, -2)),
        "sep": w[..., kinds["sep"]].sum(axis=(-1, -2)),
        "punct": w[..., kinds["punct"]].sum(axis=(-1, -2)),
        # The first query has no previous token and the last no next one: they add 0.
        "prev": np.diagonal(w, offset=-1, axis1=-2, axis2=-1).sum(axis=-1),
        "next": np.diagonal(w, offset=1, axis1=-2, axis2=-1).sum(axis=-1),
        "self": np.diagonal(w, axis1=-2, axis2=-1).sum(axis=-1),
    }
    return sums


def head_statistics(
    items: Iterable[Encoding | AttentionMap],
    progress: ProgressFn | None = None,
    total: int | None = None,
    pool_queries: bool = False,
) -> HeadStatistics:
    """Clark et al.'s head statistics over many inputs, streamed.

    Each input is reduced to (layers, heads) sums at once, so memory does not grow with the
    number of inputs (pass a generator such as :func:`iter_encodings` to keep it so).

    Args:
        items: Encodings made with ``attentions=True`` (used at piece level, special
            tokens included, as in the paper) or AttentionMaps (used as given).
        progress: called with (inputs done, total) after each input.
        total: the number of inputs, for ``progress`` (defaults to ``len(items)`` if any).
        pool_queries: pool all query positions (the means of one example made of several
            inputs, e.g. a document); default: each input's means, then their mean (every
            input one example, as the reference code averages).

    Returns:
        The means; entropy in nats.

    Raises:
        NoAttentionError: an input has no attention, or there were no inputs.
    """
    if total is None and isinstance(items, Sequence):
        total = len(items)
    acc: dict[str, np.ndarray] | None = None
    n_sentences = n_queries = 0
    model = ""
    for item in items:
        amap = attention_from_encoding(item) if isinstance(item, Encoding) else item
        sums = sentence_sums(amap)
        if not pool_queries:
            sums = {k: v / max(amap.n_tokens, 1) for k, v in sums.items()}
        if acc is None:
            acc = sums
            model = amap.model
        else:
            if sums["entropy"].shape != acc["entropy"].shape:
                raise ValueError("all inputs must come from the same model (layers × heads differ)")
            for k in acc:
                acc[k] += sums[k]
        n_sentences += 1
        n_queries += amap.n_tokens
        if progress is not None:
            progress(n_sentences, total or n_sentences)
    if acc is None or n_queries == 0:
        raise NoAttentionError("No inputs with attention weights to compute statistics over.")
    return HeadStatistics(
        values={k: v / (n_queries if pool_queries else n_sentences) for k, v in acc.items()},
        n_sentences=n_sentences,
        n_queries=n_queries,
        model=model,
        averaging="query" if pool_queries else "input",
    )


# ----------------------------------------------------------------------------------------
# A corpus sample
# ----------------------------------------------------------------------------------------


def sample_sentences(
    dataset: str = "ud-ewt", split: str = "dev", n: int = 200, data_dir: str | Path | None = None
) -> list[list[str]]:
    """``n`` sentences (word lists) spread evenly over a data set's split, in file order.

    Evenly spaced rather than the first ``n``: the first sentences of a split come from a
    handful of documents of one genre. Deterministic, so figures and CSVs are reproducible.

    Raises:
        DatasetNotFoundError: the data set is not in the data folder (says how to get it).
        ValueError: unknown data set or split.
    """
    from probing.datasets import read_sentences

    # An unknown name is an UnknownDatasetError, a ValueError as the docstring says.
    words = [s.words for s in read_sentences(dataset, split, data_dir) if s.words]
    if n <= 0 or not words:
        return []
    if n >= len(words):
        return words
    picks = np.linspace(0, len(words) - 1, n).round().astype(int)
    return [words[i] for i in picks]


def iter_encodings(
    encoder: Encoder,
    sentences: Sequence[Sequence[str]],
    batch_size: int = 8,
    progress: ProgressFn | None = None,
    skipped: list[int] | None = None,
) -> Iterator[Encoding]:
    """Encode pre-split sentences with attentions, one batch at a time, yielding each.

    Only one batch of attentions is alive at a time. Sentences are taken shortest first (less
    padding), so the yield order is not the input order. Sentences too long for the model in one
    pass are left out (their indices are appended to ``skipped``), since windowed encodings
    have no attentions.

    Args:
        encoder: a BERT-family encoder (has_attention).
        sentences: word lists.
        batch_size: sentences per forward pass (attention memory ~ batch · layers · heads · T²).
        progress: called with (sentences done, total) after each batch.
        skipped: a list to collect the indices of left-out sentences.
    """
    if not encoder.info.has_attention:
        raise NoAttentionError(f"{encoder.name} has no attention, so no head statistics.")
    total = len(sentences)
    # Length order keeps padding (and so wasted compute) small; the statistics are sums, so
    # the order they are added in does not matter.
    order = sorted(range(total), key=lambda i: len(sentences[i]))
    for start in range(0, total, batch_size):
        ids = order[start : start + batch_size]
        batch = [list(sentences[i]) for i in ids]
        try:
            encs = encoder.encode(batch, attentions=True, batch_size=batch_size)
        except InputTooLongError:
            # One sentence spoils the batch: retry one by one and leave out the long ones.
            encs = []
            for i, words in zip(ids, batch, strict=True):
                try:
                    encs.extend(encoder.encode([words], attentions=True))
                except InputTooLongError:
                    if skipped is not None:
                        skipped.append(i)
        yield from encs
        if progress is not None:
            progress(min(start + batch_size, total), total)


def corpus_statistics(
    encoder: Encoder,
    sentences: Sequence[Sequence[str]],
    batch_size: int = 8,
    progress: ProgressFn | None = None,
) -> HeadStatistics:
    """:func:`head_statistics` over pre-split sentences, encoded batch by batch."""
    skipped: list[int] = []
    stats = head_statistics(iter_encodings(encoder, sentences, batch_size, progress, skipped))
    stats.skipped = len(skipped)
    return stats


def document_statistics(
    encoder: Encoder,
    sentences: Sequence[Sequence[str]],
    documents: Sequence[str],
    batch_size: int = 8,
    progress: ProgressFn | None = None,
) -> HeadStatistics:
    """Head statistics averaged per document: each document's means over all its query
    positions, then the mean over documents (each document one example, as Clark et al.
    average over their examples).

    Args:
        sentences: word lists; documents: (n,) the document of each sentence.
    """
    if len(documents) != len(sentences):
        raise ValueError(f"{len(documents)} document ids for {len(sentences)} sentences")
    by_doc: dict[str, list[int]] = {}
    for i, doc in enumerate(documents):
        by_doc.setdefault(str(doc), []).append(i)
    per_doc: list[HeadStatistics] = []
    skipped: list[int] = []
    done = 0
    for rows in by_doc.values():
        part: list[int] = []
        encs = iter_encodings(encoder, [sentences[i] for i in rows], batch_size, None, part)
        with contextlib.suppress(NoAttentionError):  # all its sentences too long
            per_doc.append(head_statistics(encs, pool_queries=True))
        skipped += [rows[i] for i in part]
        done += len(rows)
        if progress is not None:
            progress(done, len(sentences))
    if not per_doc:
        raise NoAttentionError("No inputs with attention weights to compute statistics over.")
    stacked = {k: np.stack([d.values[k] for d in per_doc]) for k in per_doc[0].values}
    picks = np.random.default_rng(0).integers(0, len(per_doc), size=(1000, len(per_doc)))
    ci = {}
    for k, v in stacked.items():  # (docs, L, H): documents resampled, 1,000 draws
        draws = v[picks].mean(axis=1)
        ci[k] = (np.quantile(draws, 0.025, axis=0), np.quantile(draws, 0.975, axis=0))
    return HeadStatistics(
        values={k: v.mean(axis=0) for k, v in stacked.items()},
        ci=ci,
        n_sentences=sum(d.n_sentences for d in per_doc),
        n_queries=sum(d.n_queries for d in per_doc),
        skipped=len(skipped),
        model=per_doc[0].model,
        n_documents=len(per_doc),
        averaging="document",
    )


def sample_documents(
    dataset: str = "ud-ewt", split: str = "dev", n: int = 200, data_dir: str | Path | None = None
) -> tuple[list[list[str]], list[str]]:
    """Whole documents spread evenly over a split until they hold at least ``n`` sentences:
    (sentences as word lists, each sentence's document id), in file order. Deterministic.

    Raises:
        DatasetNotFoundError: the data set is not in the data folder.
        ValueError: unknown data set or split.
    """
    from probing.datasets import read_sentences

    sents = [s for s in read_sentences(dataset, split, data_dir) if s.words]
    docs: dict[str, list] = {}
    for s in sents:
        docs.setdefault(s.doc_id, []).append(s)
    if n <= 0 or not docs:
        return [], []
    names = list(docs)
    mean_len = len(sents) / len(names)
    want = min(len(names), max(1, math.ceil(n / mean_len)))
    while True:  # evenly spaced documents, more of them until n sentences are in
        picks = sorted(set(np.linspace(0, len(names) - 1, want).round().astype(int).tolist()))
        if sum(len(docs[names[i]]) for i in picks) >= n or want >= len(names):
            break
        want += 1
    chosen = [s for i in picks for s in docs[names[i]]]
    return [s.words for s in chosen], [s.doc_id for s in chosen]


def run_statistics(
    encoders: Sequence[Encoder],
    params: AttentionStatsParams,
    progress: Callable[[str, int, int], None],
) -> HeadStatistics:
    """The registry's ``attention-stats``: whole documents (or single sentences with
    ``per_sentence``) sampled from the split, then :func:`document_statistics` (or
    :func:`corpus_statistics`).

    Raises:
        InvalidArgumentError: the split has no sentences.
    """
    from probing.errors import InvalidArgumentError

    encoder = encoders[0]
    if params.per_sentence:
        sentences = sample_sentences(params.dataset, params.split, params.n_sentences)
        docs = None
    else:
        sentences, docs = sample_documents(params.dataset, params.split, params.n_sentences)
    if not sentences:
        raise InvalidArgumentError(f"No sentences in {params.dataset} {params.split}.")

    def report(done: int, total: int) -> None:
        progress("sentences", done, total)

    if docs is None:
        return corpus_statistics(encoder, sentences, params.batch_size, report)
    return document_statistics(encoder, sentences, docs, params.batch_size, report)
