"""Linear CKA (Kornblith et al. 2019) between layers, within a model and across two models.

CKA(X, Y) = HSIC(K, L) / sqrt(HSIC(K, K) · HSIC(L, L)) with linear kernels K = X Xᵀ,
L = Y Yᵀ over the same n words, and HSIC the unbiased estimator of Song et al. (2012) that
Kornblith et al.'s code uses with ``debiased=True``:

    HSIC_u = [tr(K̃ L̃) + 1ᵀK̃1 · 1ᵀL̃1 / ((n−1)(n−2)) − 2/(n−2) · 1ᵀK̃ L̃1] / (n(n−3)),

K̃, L̃ the Gram matrices with their diagonals set to 0. It is invariant to orthogonal
transforms and isotropic scaling of X or Y, and CKA(X, X) = 1.

Intervals: sentences are resampled with replacement (words of a sentence travel together).
A replicate is written as a count c_i per word, and every sum above runs over pairs of
*distinct* words, weighted by their counts (tr(K̃L̃) → cᵀ(K̃∘L̃)c, 1ᵀK̃1 → cᵀK̃c,
1ᵀK̃L̃1 → Σ c_i (K̃c)_i (L̃c)_i, n → Σc). Where we differ from resampling the rows
themselves: a word drawn twice does not pair with its own copy (that pair would be a
diagonal term the estimator exists to leave out, and would bias CKA towards 1).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from probing.analyses.params import CkaParams
from probing.encoders.base import Encoder
from probing.errors import ResultFileError

ProgressFn = Callable[[int, int], None]


def gram(x: np.ndarray) -> np.ndarray:
    """Linear-kernel Gram matrix with a zero diagonal: float64 (n, n)."""
    x = np.asarray(x, dtype=np.float64)
    k = x @ x.T
    np.fill_diagonal(k, 0.0)
    return k


def hsic_weighted(k: np.ndarray, lm: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Unbiased HSIC of zero-diagonal Grams ``k``, ``lm`` (n, n) under word counts
    ``counts`` (B, n) (one row per replicate; all ones = the sample itself): (B,)."""
    c = np.atleast_2d(np.asarray(counts, dtype=np.float64))  # (B, n)
    n = c.sum(axis=1)
    kc, lc = c @ k, c @ lm  # (B, n): (K̃c)ᵀ, (L̃c)ᵀ per replicate (Grams are symmetric)
    trace = np.einsum("bi,bi->b", c @ (k * lm), c)
    k_sum, l_sum = np.einsum("bi,bi->b", kc, c), np.einsum("bi,bi->b", lc, c)
    cross = np.einsum("bi,bi,bi->b", c, kc, lc)
    return (trace + k_sum * l_sum / ((n - 1) * (n - 2)) - 2 * cross / (n - 2)) / (n * (n - 3))


def linear_cka(x: np.ndarray, y: np.ndarray) -> float:
    """Linear CKA of two representations of the same n words, (n, d1) and (n, d2).

    Raises:
        ValueError: different numbers of rows, or fewer than 4 (the estimator needs n > 3).
    """
    if len(x) != len(y):
        raise ValueError(f"{len(x)} rows against {len(y)}: CKA compares the same words")
    if len(x) < 4:
        raise ValueError("CKA's unbiased estimator needs at least 4 words")
    k, lm = gram(x), gram(y)
    ones = np.ones((1, len(x)))
    xy = hsic_weighted(k, lm, ones)[0]
    return float(xy / np.sqrt(hsic_weighted(k, k, ones)[0] * hsic_weighted(lm, lm, ones)[0]))


@dataclass
class CKAResult:
    """CKA between every layer of model A (rows) and every layer of model B (columns).

    ``value``, ``low``, ``high``: float (layers_a, layers_b); the interval is the 95 %
    percentile interval of ``n_boot`` sentence-bootstrap replicates.
    """

    model_a: str
    model_b: str
    layers_a: list[str]
    layers_b: list[str]
    value: np.ndarray
    low: np.ndarray
    high: np.ndarray
    n_words: int
    n_sentences: int
    n_boot: int
    meta: dict = field(default_factory=dict)

    def to_record(self) -> dict:
        """The JSON record ``python -m probing cka`` and the report write (matrices rounded to
        6 decimals); :meth:`from_record` reads it back."""
        return {
            "model_a": self.model_a,
            "model_b": self.model_b,
            "layers_a": self.layers_a,
            "layers_b": self.layers_b,
            "n_words": self.n_words,
            "n_sentences": self.n_sentences,
            "n_boot": self.n_boot,
            **self.meta,
            "cka": self.value.round(6).tolist(),
            "ci_low": self.low.round(6).tolist(),
            "ci_high": self.high.round(6).tolist(),
        }

    @classmethod
    def from_record(cls, d: dict) -> CKAResult:
        """A result from :meth:`to_record`'s dict (KeyError/ValueError if it is not one)."""
        return cls(
            model_a=d["model_a"],
            model_b=d["model_b"],
            layers_a=list(d["layers_a"]),
            layers_b=list(d["layers_b"]),
            value=np.asarray(d["cka"], dtype=float),
            low=np.asarray(d["ci_low"], dtype=float),
            high=np.asarray(d["ci_high"], dtype=float),
            n_words=int(d["n_words"]),
            n_sentences=int(d["n_sentences"]),
            n_boot=int(d["n_boot"]),
            meta={k: d[k] for k in ("dataset", "split", "seed", "pooling") if k in d},
        )

    def to_rows(self) -> list[dict]:
        """One dict per (layer A, layer B): names, CKA and its interval."""
        return [
            {
                "model_a": self.model_a,
                "layer_a": a,
                "model_b": self.model_b,
                "layer_b": b,
                "cka": float(self.value[i, j]),
                "ci_low": float(self.low[i, j]),
                "ci_high": float(self.high[i, j]),
            }
            for i, a in enumerate(self.layers_a)
            for j, b in enumerate(self.layers_b)
        ]


def bootstrap_counts(sentence_of_word: np.ndarray, n_boot: int, seed: int = 0) -> np.ndarray:
    """Word counts (n_boot, n_words) from resampling sentences with replacement."""
    sentence_of_word = np.asarray(sentence_of_word)
    n_sent = int(sentence_of_word.max()) + 1
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, n_sent, size=(n_boot, n_sent))
    per_sentence = np.stack([np.bincount(d, minlength=n_sent) for d in draws])  # (B, S)
    return per_sentence[:, sentence_of_word].astype(np.float64)


def cka_layers(
    layers_a: Sequence[np.ndarray],
    layers_b: Sequence[np.ndarray],
    sentence_of_word: np.ndarray,
    n_boot: int = 300,
    seed: int = 0,
    progress: ProgressFn | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """CKA of every (a, b) layer pair with bootstrap intervals: (value, low, high), each
    (len(layers_a), len(layers_b)). Each layer is (n_words, dim) over the same words."""
    ones = np.ones((1, len(sentence_of_word)))
    counts = np.vstack([ones, bootstrap_counts(sentence_of_word, n_boot, seed)])
    grams_a = [gram(x) for x in layers_a]
    same = layers_a is layers_b
    grams_b = grams_a if same else [gram(y) for y in layers_b]
    self_a = [hsic_weighted(k, k, counts) for k in grams_a]
    self_b = self_a if same else [hsic_weighted(k, k, counts) for k in grams_b]
    shape = (len(grams_a), len(grams_b))
    value, low, high = np.empty(shape), np.empty(shape), np.empty(shape)
    total, done = shape[0] * shape[1], 0
    for i, k in enumerate(grams_a):
        for j, lm in enumerate(grams_b):
            if same and j < i:
                value[i, j], low[i, j], high[i, j] = value[j, i], low[j, i], high[j, i]
            else:
                cka = hsic_weighted(k, lm, counts) / np.sqrt(self_a[i] * self_b[j])
                value[i, j] = cka[0]
                low[i, j], high[i, j] = np.quantile(cka[1:], [0.025, 0.975])
            done += 1
            if progress is not None:
                progress(done, total)
    return value, low, high


def sample_words(dataset: str, split: str, n_words: int) -> tuple[list[list[str]], np.ndarray]:
    """Whole sentences spread evenly over a split until they hold at least ``n_words``
    words: (sentences, each word's sentence index). Deterministic."""
    from probing.analyses.attention import sample_sentences

    every = sample_sentences(dataset, split, n=10**9)
    mean_len = max(1.0, sum(map(len, every)) / max(1, len(every)))
    n = min(len(every), max(4, int(np.ceil(n_words / mean_len))))
    while True:
        picks = sample_sentences(dataset, split, n=n)
        if sum(map(len, picks)) >= n_words or n >= len(every):
            break
        n += max(1, n // 20)
    sentence_of_word = np.concatenate([np.full(len(s), i) for i, s in enumerate(picks)])
    return picks, sentence_of_word


def encode_layers(encoder: Encoder, sentences: Sequence[Sequence[str]]) -> list[np.ndarray]:
    """Each layer's word vectors over all sentences, first-piece pooling: (n_words, dim)."""
    encs = encoder.encode([list(s) for s in sentences], windowed=True)
    return [
        np.concatenate([e.layers[layer] for e in encs]) for layer in range(encs[0].layers.shape[0])
    ]


def compare_models(
    encoder_a: Encoder,
    encoder_b: Encoder | None,
    dataset: str = "ud-ewt",
    split: str = "dev",
    n_words: int = 2000,
    n_boot: int = 300,
    seed: int = 0,
    progress: ProgressFn | None = None,
) -> CKAResult:
    """CKA between the layers of ``encoder_a`` and ``encoder_b`` (None: A with itself) on
    the same words of a data-set sample."""
    sentences, sentence_of_word = sample_words(dataset, split, n_words)
    layers_a = encode_layers(encoder_a, sentences)
    layers_b = layers_a if encoder_b is None else encode_layers(encoder_b, sentences)
    value, low, high = cka_layers(layers_a, layers_b, sentence_of_word, n_boot, seed, progress)
    info_b = (encoder_b or encoder_a).info
    return CKAResult(
        model_a=encoder_a.info.name,
        model_b=info_b.name,
        layers_a=_layer_names(encoder_a, len(layers_a)),
        layers_b=_layer_names(encoder_b or encoder_a, len(layers_b)),
        value=value,
        low=low,
        high=high,
        n_words=len(sentence_of_word),
        n_sentences=len(sentences),
        n_boot=n_boot,
        meta={"dataset": dataset, "split": split, "seed": seed, "pooling": "first"},
    )


def run(
    encoders: Sequence[Encoder], params: CkaParams, progress: Callable[[str, int, int], None]
) -> CKAResult:
    """The registry's entry (:mod:`probing.analyses.registry`): model A against model B, or
    against itself when one model is given."""
    return compare_models(
        encoders[0],
        encoders[1] if len(encoders) > 1 else None,
        params.dataset,
        params.split,
        params.n_words,
        params.n_boot,
        params.seed,
        lambda done, total: progress("layer pairs", done, total),
    )


def _layer_names(encoder: Encoder, n: int) -> list[str]:
    names = list(encoder.info.layer_names)
    return names if len(names) == n else [f"layer {i}" for i in range(n)]


def load_result(path: str | Path) -> CKAResult:
    """A result written by ``python -m probing cka`` (its JSON file).

    Raises:
        ResultFileError: a file that cannot be read or lacks the matrices (names it).
    """
    path = Path(path)
    try:
        return CKAResult.from_record(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ResultFileError(
            f"{path.name} is not a readable CKA result ({type(exc).__name__}); re-run "
            "`python -m probing cka` to make it again."
        ) from None


def shipped_results() -> list[Path]:
    """The committed CKA results (``results/cka/*.json``), by name."""
    from probing import config

    return sorted((config.results_dir() / "cka").glob("cka_*.json"))
