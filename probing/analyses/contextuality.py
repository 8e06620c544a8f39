"""How contextual are a model's word vectors, layer by layer (Ethayarajh 2019).

Ethayarajh, "How Contextual are Contextualized Word Representations?" (EMNLP 2019) defines,
for layer ℓ and word type w occurring at (sentence, position) pairs (s₁,i₁)…(sₙ,iₙ):

- **self-similarity**: mean cosine between w's vectors in different contexts,
  ``1/(n²−n) Σ_{j≠k} cos(f(sⱼ,iⱼ), f(sₖ,iₖ))``, averaged over word types. Here only pairs
  from *different sentences* count (two uses in one sentence share their context) and only
  types occurring at least ``min_count`` (5) times. 1 for a static embedding.
- **intra-sentence similarity**: mean cosine between each word's vector and its sentence's
  mean vector, averaged over sentences: how much context makes words of one sentence alike.
- **maximum explainable variance (MEV)**: σ₁² / Σᵢ σᵢ² of w's occurrence matrix (n × dim),
  the share of its variance the first principal component explains. As in the paper's code
  (``sklearn.decomposition.PCA``) the matrix is **centred** by default; then a static
  embedding (n identical rows) has no variance and no MEV (NaN), and the reference code
  leaves the input layer out for that reason. ``centred=False`` gives the uncentred
  variant (σ's of the raw matrix: 1 for a static embedding), labelled ``mev_kind`` =
  ``uncentred`` in the table.

Contextual vectors are anisotropic (they crowd into a narrow cone: two random words already
have a high cosine), so each metric comes with a **baseline** from random word occurrences
and an **adjusted** value (metric − baseline):

- self-similarity and intra-sentence similarity: the mean cosine between random pairs of
  word occurrences from different sentences (seeded);
- MEV: the MEV of a random set of occurrences of the same size as each type's set, averaged
  over types (the paper's "first principal component of uniformly randomly sampled word
  representations", matched in size because MEV grows as n shrinks).

Which words count, as in the reference code (kawine/contextual, ``preprocess.py``): every
occurrence of a token that is not punctuation, and the types with at least ``min_count`` (5)
occurrences. Remaining differences from the reference: self-similarity here averages over
*all* pairs from different sentences (the reference samples ≤ 1,000 pairs of occurrences
and also counts two uses in one sentence); the MEV baseline is size-matched random sets
with the same centring (the reference: TruncatedSVD, uncentred, of 1,000 random words);
punctuation is "made only of Unicode punctuation characters" (the reference: spaCy's
``is_punct``); intra-sentence similarity uses the same non-punctuation tokens.
"""

from __future__ import annotations

import math
import unicodedata
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from probing.analyses.contextual import layer_names_of
from probing.analyses.params import ContextualityParams
from probing.encoders.base import Encoder, ProgressFn
from probing.encoding import STATIC, Pooling
from probing.errors import InvalidArgumentError

METRICS: dict[str, str] = {
    "self_similarity": "Self-similarity",
    "intra_sentence": "Intra-sentence similarity",
    "mev": "Maximum explainable variance",
}


# -- the three metrics on arrays ----------------------------------------------------------


def _unit64(x: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length in float64 (zero rows stay zero)."""
    x = np.asarray(x, dtype=np.float64)
    norms = np.linalg.norm(x, axis=-1, keepdims=True)
    return x / np.where(norms > 0, norms, 1.0)


def self_similarity(vectors: np.ndarray, sentence_ids: Sequence[int]) -> float:
    """Mean cosine over pairs of occurrences from different sentences.

    Args:
        vectors: (n, dim) one word type's occurrence vectors.
        sentence_ids: (n,) the sentence of each occurrence.

    Returns:
        The mean, or NaN when no two occurrences come from different sentences.
    """
    u = _unit64(vectors)
    sims = u @ u.T
    sid = np.asarray(sentence_ids)
    mask = sid[:, None] != sid[None, :]
    return float(sims[mask].mean()) if mask.any() else math.nan


def intra_sentence_similarity(vectors: np.ndarray) -> float:
    """Mean cosine between each word vector of one sentence (n, dim) and their mean vector."""
    v = np.asarray(vectors, dtype=np.float64)
    return float((_unit64(v) @ _unit64(v.mean(axis=0, keepdims=True)).T).mean())


def max_explainable_variance(vectors: np.ndarray, centred: bool = True) -> float:
    """σ₁² / Σ σᵢ² of the occurrence matrix (n, dim), centred (PCA's explained variance
    ratio, as the reference code) or not; NaN when there is no variance.

    The squared singular values are the eigenvalues of the Gram matrix, which is only n × n
    (n is usually far smaller than dim).
    """
    v = np.asarray(vectors, dtype=np.float64)
    if centred:
        v = v - v.mean(axis=0, keepdims=True)
    gram = v @ v.T if v.shape[0] <= v.shape[1] else v.T @ v
    eig = np.clip(np.linalg.eigvalsh(gram), 0.0, None)
    total = eig.sum()
    # Relative threshold: identical rows leave only rounding noise after centring.
    scale = float(np.square(np.asarray(vectors, dtype=np.float64)).sum())
    return float(eig[-1] / total) if total > 1e-20 * max(scale, 1e-300) else math.nan


def random_pairs(sentence_ids: np.ndarray, n_pairs: int, rng: np.random.Generator) -> np.ndarray:
    """(n_pairs, 2) indices of random occurrence pairs from different sentences."""
    sid = np.asarray(sentence_ids)
    if len(np.unique(sid)) < 2:
        raise InvalidArgumentError(
            "random pairs from different sentences need at least two sentences; use more"
        )
    out = np.empty((0, 2), dtype=np.int64)
    while len(out) < n_pairs:  # rejection sampling: same-sentence pairs are rare
        cand = rng.integers(0, len(sid), size=(2 * n_pairs, 2))
        cand = cand[sid[cand[:, 0]] != sid[cand[:, 1]]]
        out = np.concatenate([out, cand])
    return out[:n_pairs]


def mean_pair_cosine(vectors: np.ndarray, pairs: np.ndarray) -> float:
    """Mean cosine between rows ``pairs[:, 0]`` and ``pairs[:, 1]`` of ``vectors`` (N, dim)."""
    u = _unit64(vectors)
    return float(np.einsum("nd,nd->n", u[pairs[:, 0]], u[pairs[:, 1]]).mean())


# -- a corpus sample's vectors ------------------------------------------------------------


@dataclass
class CorpusVectors:
    """Word-like occurrences of a corpus sample through one model.

    Attributes:
        model: model name.
        layer_names: the L+1 layer names.
        words: (N,) each occurrence's word.
        sentence_ids: (N,) int, each occurrence's sentence.
        layers: float32 (L+1, N, dim).
        static: float32 (N, dim).
    """

    model: str
    layer_names: list[str]
    words: list[str]
    sentence_ids: np.ndarray
    layers: np.ndarray
    static: np.ndarray


def is_wordlike(word: str) -> bool:
    """True for tokens that are not punctuation (not made only of Unicode punctuation
    characters): the tokens the reference code indexes."""
    return bool(word) and not all(unicodedata.category(c).startswith("P") for c in word)


def encode_corpus(
    encoder: Encoder,
    sentences: Sequence[Sequence[str]],
    pooling: Pooling = "first",
    progress: ProgressFn | None = None,
) -> CorpusVectors:
    """Encode word-list sentences and keep the word-like occurrences."""
    encs = encoder.encode(
        [list(s) for s in sentences],
        pooling=pooling,
        windowed=True,
        batch_size=16,
        progress=progress,
    )
    words, sids, layers, static = [], [], [], []
    for s, enc in enumerate(encs):
        keep = [i for i, w in enumerate(enc.words) if is_wordlike(w)]
        words += [enc.words[i] for i in keep]
        sids += [s] * len(keep)
        layers.append(enc.layers[:, keep])
        static.append(enc.static[keep])
    return CorpusVectors(
        model=encoder.name,
        layer_names=layer_names_of(encs[0]),
        words=words,
        sentence_ids=np.asarray(sids, dtype=np.int64),
        layers=np.concatenate(layers, axis=1).astype(np.float32),
        static=np.concatenate(static, axis=0).astype(np.float32),
    )


def sample_corpus(
    dataset: str = "ud-ewt",
    split: str = "train",
    n_sentences: int = 500,
    seed: int = 0,
    min_words: int = 5,
    max_words: int = 60,
    data_dir: str | Path | None = None,
) -> list[list[str]]:
    """A seeded random sample of ``n_sentences`` sentences (word lists, in data-set order) of
    ``min_words``…``max_words`` words from one split of ``ud-ewt``, ``semcor`` or ``brown``.

    Raises:
        DatasetNotFoundError: the data set is not in the data folder.
    """
    from probing.datasets import read_sentences

    pool = [
        s.words
        for s in read_sentences(dataset, split, data_dir)
        if min_words <= len(s.words) <= max_words
    ]
    if n_sentences >= len(pool):
        return pool
    keep = np.sort(np.random.default_rng(seed).choice(len(pool), size=n_sentences, replace=False))
    return [pool[i] for i in keep]


# -- per-layer table ----------------------------------------------------------------------


def _type_groups(
    words: Sequence[str], sentence_ids: np.ndarray, min_count: int
) -> list[np.ndarray]:
    """Occurrence indices of each word type seen ≥ min_count times (every occurrence
    counts, as in the reference code)."""
    groups: dict[str, list[int]] = defaultdict(list)
    for i, w in enumerate(words):
        groups[w].append(i)
    return [np.asarray(idx) for idx in groups.values() if len(idx) >= min_count]


def contextuality_table(
    corpus: CorpusVectors,
    min_count: int = 5,
    n_pairs: int = 2000,
    seed: int = 0,
    max_per_type: int | None = None,
    centred: bool = True,
    n_boot: int = 1000,
) -> pd.DataFrame:
    """The three metrics, their baselines and adjusted values for the static vectors and
    every layer.

    Args:
        corpus: from :func:`encode_corpus`.
        min_count: types with fewer occurrences are left out of self-similarity and MEV.
        n_pairs: random occurrence pairs for the anisotropy baseline.
        seed: for the random pairs, the MEV baseline sets and per-type capping.
        max_per_type: use at most this many occurrences of a type (a seeded sample), so that
            "the" does not cost more than all other types together; None (default, as the
            reference) for all.
        centred: MEV of the centred occurrence matrix (PCA, the reference's definition);
            False for the uncentred variant (column ``mev_kind`` says which).
        n_boot: bootstrap draws for the 95 % intervals (``<metric>_ci_low/high``: word
            types resampled; sentences for intra-sentence similarity; baselines held fixed).

    Returns:
        One row per space: ``layer`` is ``STATIC`` (-1) for the static vectors and 0..L for the layers;
        columns model, layer, layer_name, depth (layer / L; NaN for static),
        self_similarity, self_similarity_baseline, self_similarity_adjusted, intra_sentence,
        intra_sentence_baseline, intra_sentence_adjusted, mev, mev_baseline, mev_adjusted,
        n_types, n_occurrences, n_sentences.
    """
    rng = np.random.default_rng(seed)
    sid = corpus.sentence_ids
    groups = _type_groups(corpus.words, sid, min_count)
    if max_per_type is not None:
        groups = [
            g if len(g) <= max_per_type else np.sort(rng.choice(g, max_per_type, replace=False))
            for g in groups
        ]
    if not groups:
        raise InvalidArgumentError(
            f"no word type occurs {min_count} or more times in the sample; use more sentences "
            "or a lower minimum count"
        )
    pairs = random_pairs(sid, n_pairs, rng)
    # The same random sets for every layer, so that the curves differ only by the layer.
    random_sets = [rng.choice(len(sid), size=len(g), replace=False) for g in groups]
    sentences = [np.flatnonzero(sid == s) for s in np.unique(sid)]
    sentences = [s for s in sentences if len(s) >= 2]
    n_layers = corpus.layers.shape[0] - 1
    spaces = [(STATIC, "static", corpus.static)] + [
        (k, corpus.layer_names[k], corpus.layers[k]) for k in range(n_layers + 1)
    ]
    # 95 % intervals: word types (and sentences for intra-sentence similarity) resampled,
    # the same draws for every space, so that two layers' intervals are comparable.
    ci_rng = np.random.default_rng(seed + 1)
    type_picks = ci_rng.integers(0, max(len(groups), 1), size=(n_boot, len(groups)))
    sent_picks = ci_rng.integers(0, max(len(sentences), 1), size=(n_boot, len(sentences)))
    rows = []
    for layer, name, vecs in spaces:
        baseline = mean_pair_cosine(vecs, pairs)
        selfsims = np.array([self_similarity(vecs[g], sid[g]) for g in groups])
        intras = np.array([intra_sentence_similarity(vecs[s]) for s in sentences])
        mevs = np.array([max_explainable_variance(vecs[g], centred) for g in groups])
        selfsim, intra, mev = _nanmean(selfsims), float(np.mean(intras)), _nanmean(mevs)
        mev_base = _nanmean([max_explainable_variance(vecs[r], centred) for r in random_sets])
        cis = {
            "self_similarity": _boot_ci(selfsims, type_picks),
            "intra_sentence": _boot_ci(intras, sent_picks),
            "mev": _boot_ci(mevs, type_picks),
        }
        rows.append(
            {
                "model": corpus.model,
                "layer": layer,
                "layer_name": name,
                "depth": layer / max(n_layers, 1) if layer >= 0 else math.nan,
                "self_similarity": selfsim,
                "self_similarity_baseline": baseline,
                "self_similarity_adjusted": selfsim - baseline,
                "intra_sentence": intra,
                "intra_sentence_baseline": baseline,
                "intra_sentence_adjusted": intra - baseline,
                "mev": mev,
                "mev_baseline": mev_base,
                "mev_adjusted": mev - mev_base,
                "mev_kind": "centred" if centred else "uncentred",
                **{
                    f"{k}_ci_{side}": v
                    for k, (lo, hi) in cis.items()
                    for side, v in (("low", lo), ("high", hi))
                },
                "n_types": len(groups),
                "n_occurrences": int(sum(len(g) for g in groups)),
                "n_sentences": len(sentences),
            }
        )
    return pd.DataFrame(rows)


def _boot_ci(values: np.ndarray, picks: np.ndarray) -> tuple[float, float]:
    """Percentile 95 % interval of the mean of ``values`` over resampled rows ``picks``
    (n_boot, n); NaN values (a type without a defined metric) are left out."""
    v = np.asarray(values, dtype=float)
    ok = np.isfinite(v)
    if not ok.any():
        return math.nan, math.nan
    sums = np.where(ok, v, 0.0)[picks].sum(axis=1)
    counts = ok[picks].sum(axis=1)
    means = sums[counts > 0] / counts[counts > 0]
    lo, hi = np.quantile(means, [0.025, 0.975])
    return float(lo), float(hi)


def _nanmean(values: Sequence[float]) -> float:
    """Mean of the finite values; NaN (no warning) when there are none (a static space has
    no centred MEV)."""
    arr = np.asarray(values, dtype=float)
    arr = arr[np.isfinite(arr)]
    return float(arr.mean()) if arr.size else math.nan


def run(
    encoders: Sequence[Encoder],
    params: ContextualityParams,
    progress: Callable[[str, int, int], None],
) -> pd.DataFrame:
    """The registry's entry (:mod:`probing.analyses.registry`): one sample of the corpus,
    each model's table on it (``model`` column), stacked in the order given."""
    sentences = sample_corpus(params.dataset, params.split, params.n_sentences, params.seed)
    tables = []
    for encoder in encoders:
        name = encoder.info.name
        corpus = encode_corpus(
            encoder,
            sentences,
            pooling=params.pooling,
            progress=lambda done, total, name=name: progress(f"{name}: encoding", done, total),
        )
        table = contextuality_table(
            corpus, min_count=params.min_count, seed=params.seed, centred=not params.uncentred_mev
        )
        table.insert(1, "dataset", f"{params.dataset}/{params.split}")
        tables.append(table)
    return pd.concat(tables, ignore_index=True)
