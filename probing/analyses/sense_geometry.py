"""Sense geometry: where the occurrences of one lemma lie, layer by layer, by WordNet sense.

For a lemma (``bank``, ``play``…) the occurrences tagged with a WordNet sense in SemCor are
collected, their sentences encoded, and each layer's occurrence vectors

- projected to 2-D (PCA, or UMAP with an exact neighbour graph) so that they can be drawn
  coloured by sense, with new sentences placed into the same map;
- scored for how well the senses separate: 1-nearest-neighbour sense accuracy within the
  lemma (leave-one-out, cosine) and the silhouette (cosine), for the static vectors too.

Results are cached in the process per (model, lemma, layer) so that moving a slider does not
recompute anything; the page adds ``st.cache_data`` on top.

One module (about 600 lines) on purpose: collection, projection and separability share the
occurrence table and its per-process cache, and splitting them would pass that state around.
"""

from __future__ import annotations

import threading
import time
import warnings
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from probing.analyses.contextual import cosine_matrix, layer_names_of, unit_rows
from probing.cache import LRUCache
from probing.encoders.base import Encoder, ProgressFn
from probing.encoding import STATIC, Pooling
from probing.errors import EmptyInputError, TooFewSensesError

if TYPE_CHECKING:
    import umap

    from probing.analyses.static_vectors import StaticVectors

# Lemmas with several well-attested senses in SemCor (lemma, POS letter), for the UI.
SUGGESTED_LEMMAS: tuple[tuple[str, str], ...] = (
    ("bank", "n"),
    ("line", "n"),
    ("interest", "n"),
    ("point", "n"),
    ("power", "n"),
    ("play", "v"),
    ("run", "v"),
    ("call", "v"),
    ("work", "v"),
    ("order", "n"),
)
POS_NAMES = {"n": "noun", "v": "verb", "a": "adjective", "r": "adverb"}
_SS_TYPE_POS = {"1": "n", "2": "v", "3": "a", "4": "r", "5": "a"}  # 5 = adjective satellite


# -- occurrences of a lemma in SemCor -----------------------------------------------------


@dataclass(frozen=True)
class SemCorIndex:
    """SemCor sentences and, per (lemma, POS), the sense-tagged occurrences.

    Attributes:
        sentences: word lists of every sentence.
        sent_ids: SemCor sentence ids (``br-a01.12``).
        occurrences: (lemma, pos letter) -> list of (sentence, word index, sense key).
    """

    sentences: list[list[str]]
    sent_ids: list[str]
    occurrences: dict[tuple[str, str], list[tuple[int, int, str]]]


@lru_cache(maxsize=2)
def _semcor_index(data_dir: str | None) -> SemCorIndex:
    from probing.datasets.semcor import read_semcor

    sentences, sent_ids = [], []
    occ: dict[tuple[str, str], list[tuple[int, int, str]]] = defaultdict(list)
    for s, sent in enumerate(read_semcor(None, data_dir)):
        sentences.append(sent.words)
        sent_ids.append(sent.sent_id)
        for i, (key, mwe) in enumerate(zip(sent.labels["sense"], sent.labels["mwe"], strict=True)):
            # Pieces of a multi-word form ("bank_account") carry the form's sense, not the
            # word's own, so they are left out.
            if key is None or mwe is not None or "%" not in key:
                continue
            lemma, lexsn = key.split("%", 1)
            pos = _SS_TYPE_POS.get(lexsn[:1])
            if pos is not None:
                occ[(lemma, pos)].append((s, i, key))
    return SemCorIndex(sentences, sent_ids, dict(occ))


def semcor_index(data_dir: str | Path | None = None) -> SemCorIndex:
    """The SemCor index (read once per process, ~5 s)."""
    from probing.config import data_dir as default_dir

    return _semcor_index(str(Path(data_dir) if data_dir is not None else default_dir()))


def lemma_choices(
    min_senses: int = 2, min_count: int = 5, data_dir: str | Path | None = None
) -> pd.DataFrame:
    """Lemmas with at least ``min_senses`` senses that each occur ``min_count`` times.

    Returns:
        Columns lemma, pos, occurrences, senses (with ≥ min_count occurrences), most frequent
        first.
    """
    rows = []
    for (lemma, pos), occ in semcor_index(data_dir).occurrences.items():
        counts = Counter(k for _, _, k in occ)
        big = sum(1 for c in counts.values() if c >= min_count)
        if big >= min_senses:
            rows.append((lemma, pos, len(occ), big))
    table = pd.DataFrame(rows, columns=["lemma", "pos", "occurrences", "senses"])
    return table.sort_values(["occurrences", "lemma"], ascending=[False, True], ignore_index=True)


@dataclass
class LemmaOccurrences:
    """Sense-tagged occurrences of one lemma.

    Attributes:
        lemma: the lemma (lower case, ``_`` for spaces).
        pos: WordNet POS letter.
        sentences: the word lists of the sentences used (each once).
        sentence_index: (n,) which sentence each occurrence is in.
        word_index: (n,) its position in that sentence.
        senses: (n,) each occurrence's sense key.
        glosses: sense key -> WordNet definition.
        sent_ids: SemCor id of each sentence in ``sentences``.
        n_found: occurrences in SemCor before capping and dropping rare senses.
        dropped: sense key -> count of the senses left out (too rare, or not asked for).
    """

    lemma: str
    pos: str
    sentences: list[list[str]]
    sentence_index: np.ndarray
    word_index: np.ndarray
    senses: list[str]
    glosses: dict[str, str]
    sent_ids: list[str]
    n_found: int
    dropped: dict[str, int] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.senses)

    @property
    def words(self) -> list[str]:
        """Each occurrence's word as written (``bank``, ``Banks``…)."""
        return [
            self.sentences[s][i] for s, i in zip(self.sentence_index, self.word_index, strict=True)
        ]

    @property
    def forms(self) -> set[str]:
        """Lower-cased word forms seen for this lemma, plus the lemma itself."""
        return {w.casefold() for w in self.words} | {self.lemma.replace("_", " ").casefold()}

    def key(self) -> tuple:
        """A hashable identity of exactly these occurrences (for caches)."""
        return (
            self.lemma,
            self.pos,
            tuple(self.sent_ids[s] for s in self.sentence_index),
            tuple(int(i) for i in self.word_index),
        )

    def contexts(self, width: int = 6) -> list[str]:
        """A short context snippet per occurrence, the word in [brackets]."""
        out = []
        for s, i in zip(self.sentence_index, self.word_index, strict=True):
            words = self.sentences[s]
            lo, hi = max(0, i - width), min(len(words), i + width + 1)
            out.append(" ".join(words[lo:i] + [f"[{words[i]}]"] + words[i + 1 : hi]))
        return out


def _gloss(key: str, data_dir: str | Path | None) -> str:
    from probing.datasets.wordnet import sense_gloss

    try:
        return sense_gloss(key, data_dir)
    except ValueError:
        return "(not in WordNet 3.0)"


def lemma_occurrences(
    lemma: str,
    pos: str = "n",
    max_occurrences: int = 300,
    senses: Sequence[str] | None = None,
    min_sense_count: int = 2,
    seed: int = 0,
    data_dir: str | Path | None = None,
) -> LemmaOccurrences:
    """The sense-tagged SemCor occurrences of ``lemma`` as ``pos``.

    Args:
        lemma: e.g. ``bank`` (case-insensitive; spaces become ``_``).
        pos: WordNet letter ``n v a r`` (or ``noun``…).
        max_occurrences: cap; a seeded sample stratified by sense is kept beyond it.
        senses: keep only these sense keys (default: all).
        min_sense_count: senses with fewer occurrences are dropped: a sense seen once has no
            other occurrence to be the nearest neighbour of, nor a silhouette.
        seed: for the capping sample.

    Raises:
        EmptyInputError: a blank lemma.
        TooFewSensesError: fewer than two senses remain.
        DatasetNotFoundError: SemCor is not in the data folder.
    """
    name = lemma.strip().lower().replace(" ", "_")
    if not name:
        raise EmptyInputError("Type a lemma, e.g. bank.")
    letter = {"noun": "n", "verb": "v", "adjective": "a", "adverb": "r"}.get(pos, pos)
    index = semcor_index(data_dir)
    found = index.occurrences.get((name, letter), [])
    counts = Counter(k for _, _, k in found)
    wanted = set(senses) if senses is not None else set(counts)
    keep = {k for k, c in counts.items() if k in wanted and c >= min_sense_count}
    if len(keep) < 2:
        described = (
            ", ".join(f"{k} ×{c}" for k, c in counts.most_common(5)) or "no tagged occurrences"
        )
        raise TooFewSensesError(
            f"{name!r} as a {POS_NAMES.get(letter, letter)} has {len(keep)} sense(s) with at least "
            f"{min_sense_count} occurrences in SemCor ({described}); sense geometry needs two or "
            "more. Try bank, line or interest (nouns), or play or run (verbs)."
        )
    chosen = [o for o in found if o[2] in keep]
    if len(chosen) > max_occurrences:
        chosen = _stratified_sample(chosen, max_occurrences, min_sense_count, seed)
    sent_order = sorted({s for s, _, _ in chosen})
    where = {s: j for j, s in enumerate(sent_order)}
    data = data_dir
    return LemmaOccurrences(
        lemma=name,
        pos=letter,
        sentences=[index.sentences[s] for s in sent_order],
        sentence_index=np.asarray([where[s] for s, _, _ in chosen]),
        word_index=np.asarray([i for _, i, _ in chosen]),
        senses=[k for _, _, k in chosen],
        glosses={k: _gloss(k, data) for k in sorted(keep)},
        sent_ids=[index.sent_ids[s] for s in sent_order],
        n_found=len(found),
        dropped={k: c for k, c in counts.items() if k not in keep},
    )


def _stratified_sample(
    occ: list[tuple[int, int, str]], cap: int, floor: int, seed: int
) -> list[tuple[int, int, str]]:
    """About ``cap`` occurrences, each sense in proportion but with at least ``floor``."""
    rng = np.random.default_rng(seed)
    by_sense: dict[str, list[int]] = defaultdict(list)
    for j, (_, _, k) in enumerate(occ):
        by_sense[k].append(j)
    picks: list[int] = []
    for k in sorted(by_sense):
        idx = by_sense[k]
        n = max(floor, round(cap * len(idx) / len(occ)))
        picks += list(rng.choice(idx, size=min(n, len(idx)), replace=False))
    return [occ[j] for j in sorted(picks)]


# -- vectors ------------------------------------------------------------------------------


@dataclass
class LemmaVectors:
    """The occurrences' vectors in one model.

    Attributes:
        model: model name.
        layer_names: names of the L+1 layers.
        layers: float32 (L+1, n, dim).
        static: float32 (n, dim).
    """

    model: str
    layer_names: list[str]
    layers: np.ndarray
    static: np.ndarray

    def space(self, layer: int) -> np.ndarray:
        """(n, dim) vectors of ``layer`` (``STATIC`` = the static vectors)."""
        return self.static if layer == STATIC else self.layers[layer]

    def space_name(self, layer: int) -> str:
        return "static" if layer == STATIC else self.layer_names[layer]


_vectors_cache: LRUCache[LemmaVectors] = LRUCache(16)
_projection_cache: LRUCache[Projection] = LRUCache(64)


def _model_key(encoder: Encoder) -> tuple[str, str]:
    return (encoder.info.name, encoder.info.source)


def encode_lemma(
    encoder: Encoder,
    occ: LemmaOccurrences,
    pooling: Pooling = "first",
    progress: ProgressFn | None = None,
) -> LemmaVectors:
    """Encode the occurrences' sentences (cached per model and occurrence set)."""

    def make() -> LemmaVectors:
        encs = encoder.encode(
            occ.sentences, pooling=pooling, windowed=True, batch_size=16, progress=progress
        )
        layers = np.stack(
            [encs[s].layers[:, i] for s, i in zip(occ.sentence_index, occ.word_index, strict=True)],
            axis=1,
        )
        static = np.stack(
            [encs[s].static[i] for s, i in zip(occ.sentence_index, occ.word_index, strict=True)]
        )
        return LemmaVectors(
            encoder.name,
            layer_names_of(encs[0]),
            layers.astype(np.float32),
            static.astype(np.float32),
        )

    return _vectors_cache.get_or_make((_model_key(encoder), occ.key(), pooling), make)


def encode_user_occurrences(
    encoder: Encoder, lines: Sequence[str], forms: set[str], pooling: Pooling = "first"
) -> tuple[list[str], LemmaVectors | None]:
    """The user's own occurrences of any of ``forms`` (case-insensitive whole words).

    Returns:
        A label per occurrence (``S1: …[bank]…``) and their vectors (None when none found).
    """
    from probing.analyses.contextual import Occurrence
    from probing.encoders.base import normalize_sentences

    lines = [x for x in lines if x.strip()]
    if not lines:
        return [], None
    words = normalize_sentences(lines)
    occ = [
        Occurrence(s, i, w)
        for s, ws in enumerate(words)
        for i, w in enumerate(ws)
        if w.casefold() in forms
    ]
    if not occ:
        return [], None
    encs = encoder.encode(words, pooling=pooling)
    layers = np.stack([encs[o.sentence].layers[:, o.index] for o in occ], axis=1)
    static = np.stack([encs[o.sentence].static[o.index] for o in occ])
    labels = [o.label(words[o.sentence]) for o in occ]
    return labels, LemmaVectors(encoder.name, layer_names_of(encs[0]), layers, static)


# -- separability -------------------------------------------------------------------------


def one_nn_accuracy(vectors: np.ndarray, labels: Sequence[str]) -> float:
    """Leave-one-out 1-nearest-neighbour accuracy (cosine) of ``labels`` over ``vectors``.

    Each occurrence is given the sense of its most similar other occurrence. Ties (several
    neighbours equally similar, as for identical static vectors) count fractionally: the
    share of tied neighbours with the right sense, i.e. the expected accuracy when ties are
    broken at random. So identical vectors score chance, not whatever sorts first.

    Args:
        vectors: (n, dim).
        labels: (n,) sense labels.
    """
    sims = cosine_matrix(vectors)
    np.fill_diagonal(sims, -np.inf)
    lab = np.asarray(labels)
    best = sims.max(axis=1, keepdims=True)
    tied = sims >= best - 1e-12
    same = lab[:, None] == lab[None, :]
    return float(np.mean((tied & same).sum(axis=1) / tied.sum(axis=1)))


def silhouette(vectors: np.ndarray, labels: Sequence[str]) -> float:
    """Mean silhouette (cosine distance) of ``labels``; NaN with fewer than two labels or
    as many labels as points (it is undefined there)."""
    from sklearn.metrics import silhouette_score

    n_labels = len(set(labels))
    if n_labels < 2 or n_labels >= len(labels):
        return float("nan")
    d = np.clip(1.0 - cosine_matrix(vectors), 0.0, 2.0)
    np.fill_diagonal(d, 0.0)
    return float(silhouette_score(d, list(labels), metric="precomputed"))


def chance_accuracy(labels: Sequence[str]) -> float:
    """Expected leave-one-out 1-NN accuracy when the neighbour is random:
    Σₛ nₛ(nₛ−1) / (n(n−1))."""
    counts = np.asarray(list(Counter(labels).values()), dtype=np.float64)
    n = counts.sum()
    return float((counts * (counts - 1)).sum() / (n * (n - 1)))


def separability(vectors: LemmaVectors, senses: Sequence[str]) -> pd.DataFrame:
    """How well the senses separate in the static space and in every layer.

    Returns:
        One row per space (``layer`` ``STATIC`` = -1, then 0..L): model, layer, layer_name,
        depth (layer / L; NaN for static), knn_accuracy, silhouette, chance (1-NN accuracy
        with a random neighbour), majority (share of the commonest sense), n, n_senses.
    """
    n_layers = vectors.layers.shape[0] - 1
    chance = chance_accuracy(senses)
    majority = Counter(senses).most_common(1)[0][1] / len(senses)
    rows = []
    for layer in [STATIC, *range(n_layers + 1)]:
        x = vectors.space(layer)
        rows.append(
            {
                "model": vectors.model,
                "layer": layer,
                "layer_name": vectors.space_name(layer),
                "depth": layer / max(n_layers, 1) if layer >= 0 else float("nan"),
                "knn_accuracy": one_nn_accuracy(x, senses),
                "silhouette": silhouette(x, senses),
                "chance": chance,
                "majority": majority,
                "n": len(senses),
                "n_senses": len(set(senses)),
            }
        )
    return pd.DataFrame(rows)


def external_separability(
    vectors: StaticVectors, occ: LemmaOccurrences, name: str = "GloVe"
) -> dict:
    """Separability of ``occ``'s senses in a user's static vectors (GloVe, word2vec).

    Args:
        vectors: a :class:`probing.analyses.static_vectors.StaticVectors`.
        occ: the lemma's occurrences; those whose word is not in the vocabulary are left out.

    Returns:
        A row like :func:`separability`'s (``layer`` -2) plus ``missing``: the word forms not
        in the vocabulary.
    """
    words = occ.words
    keep = [i for i, w in enumerate(words) if w in vectors]
    missing = sorted({w for w in words if w not in vectors})
    senses = [occ.senses[i] for i in keep]
    row = {
        "model": name,
        "layer": -2,
        "layer_name": name,
        "depth": float("nan"),
        "knn_accuracy": float("nan"),
        "silhouette": float("nan"),
        "chance": float("nan"),
        "majority": float("nan"),
        "n": len(keep),
        "n_senses": len(set(senses)),
        "missing": ", ".join(missing),
    }
    if len(keep) >= 3 and len(set(senses)) >= 2:
        x = np.stack([vectors.vector(words[i]) for i in keep])
        row.update(
            knn_accuracy=one_nn_accuracy(x, senses),
            silhouette=silhouette(x, senses),
            chance=chance_accuracy(senses),
            majority=Counter(senses).most_common(1)[0][1] / len(senses),
        )
    return row


# -- 2-D projection -----------------------------------------------------------------------


class _ExactIndex:
    """Exact nearest neighbours by brute force, shaped like pynndescent's index.

    UMAP's small-data path computes all distances through a Python callback per pair
    (seconds for 2,000 points) and its approximate path JIT-compiles pynndescent (minutes on
    a cold start). A numpy matrix product gives the exact graph in milliseconds, and UMAP
    accepts it with this object as the search index that ``transform`` queries.
    """

    _angular_trees = False

    def __init__(self, data: np.ndarray) -> None:
        self.data = np.asarray(data, dtype=np.float32)
        self._sq = (self.data.astype(np.float64) ** 2).sum(axis=1)

    def query(
        self, queries: np.ndarray, k: int, epsilon: float = 0.1
    ) -> tuple[np.ndarray, np.ndarray]:
        """(indices, distances) of the ``k`` nearest rows (euclidean), each (m, k)."""
        q = np.asarray(queries, dtype=np.float64)
        d2 = (
            (q**2).sum(axis=1)[:, None]
            + self._sq[None, :]
            - 2.0 * q @ self.data.T.astype(np.float64)
        )
        dist = np.sqrt(np.clip(d2, 0.0, None))
        idx = np.argsort(dist, axis=1, kind="stable")[:, :k]
        return idx.astype(np.int32), np.take_along_axis(dist, idx, axis=1).astype(np.float32)


@dataclass
class Projection:
    """A fitted 2-D map of some vectors.

    Attributes:
        method: ``pca`` or ``umap``.
        coords: float32 (n, 2) the fitted points.
        seconds: how long fitting took.
        model: the fitted sklearn PCA or umap.UMAP (None for a degenerate input).
    """

    method: str
    coords: np.ndarray
    seconds: float
    model: object | None = None

    def transform(self, vectors: np.ndarray) -> np.ndarray:
        """Place new vectors (m, dim) into the map -> (m, 2)."""
        x = unit_rows(vectors)
        if len(x) == 0:
            return np.zeros((0, 2), np.float32)
        if self.model is None:
            return np.zeros((len(x), 2), np.float32)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return np.asarray(self.model.transform(x), dtype=np.float32)


def project(
    vectors: np.ndarray,
    method: str = "pca",
    seed: int = 0,
    n_neighbors: int = 15,
    min_dist: float = 0.1,
) -> Projection:
    """Fit a 2-D map of ``vectors`` (n, dim).

    Rows are scaled to unit length first, so distances in the map reflect cosine
    similarity, the measure used everywhere else on the page (and raw BERT vectors have a
    few huge "rogue" dimensions that would otherwise dominate PCA).

    Args:
        method: ``pca`` (fast, linear, exact ``transform``) or ``umap`` (non-linear).
        seed: random state (UMAP layout, PCA solver).
        n_neighbors: UMAP neighbourhood size (capped at n − 1).
        min_dist: UMAP minimum distance between embedded points.
    """
    x = unit_rows(vectors)
    n = len(x)
    if method not in ("pca", "umap"):
        raise ValueError(f"method must be 'pca' or 'umap', not {method!r}")
    if n < 3:
        raise ValueError("a 2-D map needs at least 3 points")
    start = time.perf_counter()
    if np.allclose(x, x[0], atol=1e-7):
        # Identical vectors (a static space of one word form): every point is the same one.
        return Projection(method, np.zeros((n, 2), np.float32), time.perf_counter() - start, None)
    if method == "pca":
        from sklearn.decomposition import PCA

        model = PCA(n_components=2, random_state=seed).fit(x)
        coords = model.transform(x)
    else:
        model = _fit_umap(x, seed, n_neighbors, min_dist)
        coords = model.embedding_
    return Projection(method, np.asarray(coords, np.float32), time.perf_counter() - start, model)


def _fit_umap(x: np.ndarray, seed: int, n_neighbors: int, min_dist: float) -> umap.UMAP:
    import umap

    k = max(2, min(n_neighbors, len(x) - 1))
    index = _ExactIndex(x)
    knn_idx, knn_dist = index.query(x, k)
    knn_dist[:, 0] = 0.0  # each point is its own first neighbour
    with warnings.catch_warnings():
        # "n_jobs overridden by random_state" and the like: expected, not for users.
        warnings.simplefilter("ignore")
        return umap.UMAP(
            n_neighbors=k,
            min_dist=min_dist,
            n_epochs=200,  # enough for ≤ a few thousand points; the default 500 only adds time
            init="spectral" if len(x) > k + 2 else "random",
            random_state=seed,
            precomputed_knn=(knn_idx, knn_dist, index),
        ).fit(x)


_warm = {"done": False, "seconds": 0.0}
_warm_lock = threading.Lock()


def warm_up_umap() -> float:
    """Compile UMAP's numba code once per process (fit + transform on a small random set).

    The first UMAP call in a process JIT-compiles its layout optimiser and graph code,
    which takes far longer than a 2,000-point fit afterwards; the page calls this on first
    use so that users see it as a one-off. Returns the seconds spent (0 when already warm).
    """
    with _warm_lock:
        if _warm["done"]:
            return 0.0
        start = time.perf_counter()
        x = np.random.default_rng(0).normal(size=(60, 16)).astype(np.float32)
        _fit_umap(unit_rows(x), 0, 15, 0.1).transform(unit_rows(x[:3]))
        _warm.update(done=True, seconds=time.perf_counter() - start)
        return _warm["seconds"]


def lemma_projection(
    encoder: Encoder,
    occ: LemmaOccurrences,
    layer: int,
    method: str = "pca",
    seed: int = 0,
    pooling: Pooling = "first",
) -> Projection:
    """The 2-D map of ``occ`` in ``layer`` (``STATIC`` = static); cached per model, lemma, layer,
    method and seed."""

    def make() -> Projection:
        if method == "umap":
            warm_up_umap()
        return project(encode_lemma(encoder, occ, pooling).space(layer), method, seed)

    return _projection_cache.get_or_make(
        (_model_key(encoder), occ.key(), pooling, layer, method, seed), make
    )
