"""Norm-weighted attention (Kobayashi et al. 2020) and Clark et al.'s [SEP]/punctuation
shares re-measured under it.

A head adds Σ_j α_ij f_h(x_j) to token i; how much token j contributes is ‖α_ij f_h(x_j)‖ =
α_ij ‖f_h(x_j)‖, not α_ij alone (the norms come from the encoder's
:class:`~probing.encoders.base.AttentionNorms` capability). The maps here hold each row's
*shares* of Σ_j ‖α_ij f_h(x_j)‖ (rows sum to 1, as raw maps do), so word pooling, hiding
special tokens, the head/model views and the head statistics apply unchanged; the share of
the [SEP] columns is the ratio Kobayashi et al. plot (their Fig. 2 / Table 1 compare the
sums to [SEP] and punctuation under α and under ‖αf‖ the same way).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from probing.analyses.attention import (
    AttentionMap,
    attention_from_encoding,
    encode_attention,
    sample_documents,
    sentence_sums,
)
from probing.analyses.params import AttentionNormsParams
from probing.encoders.base import Encoder
from probing.errors import InputTooLongError, NoAttentionError

ProgressFn = Callable[[int, int], None]
COMPARED = ("sep", "punct", "cls")  # statistics compared raw vs norm-weighted


def norm_weighted(amap: AttentionMap, norms: np.ndarray) -> AttentionMap:
    """``amap`` with each weight α_ij replaced by its row's share of α_ij ‖f_h(x_j)‖.

    Args:
        amap: a piece-level map (the level the norms are at).
        norms: float (layers, heads, n) from ``AttentionNorms.value_norms``.

    Raises:
        ValueError: a word-level map, or norms whose shape does not match the map.
    """
    if amap.level != "piece" or amap.special_hidden:
        raise ValueError("norm weighting needs the piece-level map with its special tokens")
    want = amap.weights.shape[:2] + (amap.n_tokens,)
    if norms.shape != want:
        raise ValueError(f"norms of shape {norms.shape} for a map needing {want}")
    w = amap.weights.astype(np.float32) * norms[:, :, None, :].astype(np.float32)
    sums = w.sum(axis=-1, keepdims=True)
    w = np.divide(w, sums, out=np.zeros_like(w), where=sums > 0)
    return replace(amap, weights=np.ascontiguousarray(w))


def value_norms_of(encoder: Encoder, amap: AttentionMap) -> np.ndarray:
    """The encoder's ‖f_h(x_j)‖ for the input of ``amap`` (a sentence or a pair).

    Raises:
        NoAttentionError: the encoder has no norm capability (ELMo, other architectures).
    """
    info = encoder.info
    if not info.has_value_norms:
        why = info.no_hooks_reason or (
            f"{info.name} has no attention" if not info.has_attention else ""
        )
        raise NoAttentionError(
            f"{info.name} cannot give value-vector norms, so norm-weighted attention is not "
            "available" + (f": {why.rstrip('.')}." if why else ".")
        )
    if amap.is_pair:
        n_a = max(i for i, s in zip(amap.word_ids, amap.segments, strict=True) if s == 0) + 1
        return encoder.value_norms(amap.words[:n_a], amap.words[n_a:])
    return encoder.value_norms(list(amap.words))


def encode_norm_attention(encoder: Encoder, text: str, text_b: str | None = None) -> AttentionMap:
    """Piece-level norm-weighted attention of a sentence (or pair); see :func:`norm_weighted`."""
    amap = encode_attention(encoder, text, text_b)
    return norm_weighted(amap, value_norms_of(encoder, amap))


# ----------------------------------------------------------------------------------------
# Clark et al.'s shares, raw vs norm-weighted, per layer on a corpus
# ----------------------------------------------------------------------------------------


@dataclass
class ShareComparison:
    """Per-layer shares of attention to [SEP], punctuation and [CLS], raw vs norm-weighted.

    ``table`` has one row per (statistic, layer): the raw and norm-weighted means over heads
    (each head's value as :func:`probing.analyses.attention.head_statistics` averages it,
    per document), their difference norm − raw, and 95 % percentile intervals from a
    paired document bootstrap (the same documents resampled for raw and norm).
    """

    table: pd.DataFrame
    model: str
    n_sentences: int
    n_documents: int
    skipped: int
    n_boot: int


def compare_shares(
    encoder: Encoder,
    sentences: Sequence[Sequence[str]],
    documents: Sequence[str],
    n_boot: int = 1000,
    seed: int = 0,
    progress: ProgressFn | None = None,
) -> ShareComparison:
    """Raw vs norm-weighted shares to [SEP]/punctuation/[CLS] per layer, documents as examples.

    Each sentence is encoded alone (as the Attention page does); a document's value is the
    mean over all its query positions; layers report the mean over heads.

    Raises:
        NoAttentionError: the encoder has no norms, or no sentence fitted the model.
        ValueError: documents and sentences differ in number.
    """
    if len(documents) != len(sentences):
        raise ValueError(f"{len(documents)} document ids for {len(sentences)} sentences")
    sums: dict[str, dict[str, np.ndarray]] = {}  # doc -> "raw:sep" … -> (L, H)
    queries: dict[str, int] = {}
    skipped = 0
    for done, (words, doc) in enumerate(zip(sentences, documents, strict=True), start=1):
        try:
            (enc,) = encoder.encode([list(words)], attentions=True)
            amap = attention_from_encoding(enc)
            nmap = norm_weighted(amap, value_norms_of(encoder, amap))
        except InputTooLongError:
            skipped += 1
            continue
        acc = sums.setdefault(str(doc), {})
        for kind, m in (("raw", amap), ("norm", nmap)):
            s = sentence_sums(m)
            for stat in COMPARED:
                key = f"{kind}:{stat}"
                acc[key] = acc.get(key, 0.0) + s[stat]
        queries[str(doc)] = queries.get(str(doc), 0) + amap.n_tokens
        if progress is not None:
            progress(done, len(sentences))
    if not sums:
        raise NoAttentionError("No sentence fitted the model: nothing to compare.")
    docs = list(sums)
    # (docs, L) per key: a document's per-head means, then the mean over heads.
    per_doc = {
        key: np.stack([(sums[d][key] / queries[d]).mean(axis=1) for d in docs])
        for key in sums[docs[0]]
    }
    picks = np.random.default_rng(seed).integers(0, len(docs), size=(n_boot, len(docs)))
    rows = []
    for stat in COMPARED:
        raw, norm = per_doc[f"raw:{stat}"], per_doc[f"norm:{stat}"]
        draws = {"raw": raw[picks].mean(1), "norm": norm[picks].mean(1)}  # (boot, L)
        draws["diff"] = draws["norm"] - draws["raw"]
        point = {"raw": raw.mean(0), "norm": norm.mean(0)}
        point["diff"] = point["norm"] - point["raw"]
        for layer in range(raw.shape[1]):
            row = {"statistic": stat, "layer": layer + 1}
            for name in ("raw", "norm", "diff"):
                lo, hi = np.quantile(draws[name][:, layer], [0.025, 0.975])
                row.update({name: point[name][layer], f"{name}_lo": lo, f"{name}_hi": hi})
            rows.append(row)
    return ShareComparison(
        table=pd.DataFrame(rows),
        model=encoder.info.name,
        n_sentences=len(sentences) - skipped,
        n_documents=len(docs),
        skipped=skipped,
        n_boot=n_boot,
    )


def run(
    encoders: Sequence[Encoder],
    params: AttentionNormsParams,
    progress: Callable[[str, int, int], None],
) -> ShareComparison:
    """The registry's ``attention-norms``: whole documents sampled from the split, then
    :func:`compare_shares`.

    Raises:
        InvalidArgumentError: the split has no sentences.
    """
    from probing.errors import InvalidArgumentError

    sentences, docs = sample_documents(params.dataset, params.split, params.n_sentences)
    if not sentences:
        raise InvalidArgumentError(f"No sentences in {params.dataset} {params.split}.")
    return compare_shares(
        encoders[0],
        sentences,
        docs,
        n_boot=params.n_boot,
        progress=lambda done, total: progress("sentences", done, total),
    )
