"""Static vs contextual: find a word's occurrences, compare them layer by layer, and look up
their nearest neighbours among corpus word occurrences.

A static embedding gives every occurrence of a word type the same vector, so two occurrences
have cosine exactly 1; a contextual encoder gives each occurrence its own vector per layer.
Everything here works on any encoder's :class:`~probing.encoding.Encoding` (BERT family or
ELMo): ``layers`` (L+1, n_words, dim) and ``static`` (n_words, dim).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np
import pandas as pd

from probing.cache import LRUCache
from probing.encoders.base import Encoder, normalize_sentences, split_words
from probing.encoding import Encoding, Pooling
from probing.errors import EmptyInputError, TargetNotFoundError

# -- cosine -------------------------------------------------------------------------------


def cosine_matrix(a: np.ndarray, b: np.ndarray | None = None) -> np.ndarray:
    """Cosine similarity between the rows of ``a`` (n, d) and ``b`` (m, d) -> (n, m) float64.

    Computed as dot / sqrt(|a|² |b|²) in float64 so that two identical vectors give exactly
    1.0 (sqrt(x·x) == x in IEEE arithmetic), which the static reference relies on. Zero
    vectors have similarity 0 with everything.
    """
    a = np.asarray(a, dtype=np.float64)
    b = a if b is None else np.asarray(b, dtype=np.float64)
    # einsum per pair keeps a·b and a·a bitwise comparable (no BLAS blocking differences).
    dots = np.einsum("id,jd->ij", a, b)
    sq_a = np.einsum("id,id->i", a, a)
    sq_b = np.einsum("id,id->i", b, b)
    denom = np.sqrt(np.outer(sq_a, sq_b))
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.where(denom > 0, dots / np.where(denom > 0, denom, 1.0), 0.0)
    return np.clip(out, -1.0, 1.0)


def unit_rows(x: np.ndarray) -> np.ndarray:
    """Rows of ``x`` (..., d) scaled to unit length (zero rows stay zero), float32."""
    x = np.asarray(x, dtype=np.float32)
    norms = np.linalg.norm(x, axis=-1, keepdims=True)
    return x / np.where(norms > 0, norms, 1.0)


# -- occurrences --------------------------------------------------------------------------


@dataclass(frozen=True)
class Occurrence:
    """One occurrence of a word: sentence ``sentence`` (0-based), word position ``index``."""

    sentence: int
    index: int
    word: str  # as written in the sentence

    def label(self, words: Sequence[str], width: int = 3) -> str:
        """Short readable label: ``S2 "…river bank was…"`` (``width`` words of context)."""
        lo, hi = max(0, self.index - width), min(len(words), self.index + width + 1)
        left = " ".join(words[lo : self.index])
        right = " ".join(words[self.index + 1 : hi])
        pre = "…" if lo > 0 else ""
        post = "…" if hi < len(words) else ""
        return f"S{self.sentence + 1}: {pre}{left} [{self.word}] {right}{post}".replace("  ", " ")


def normalize_target(target: str) -> str:
    """The target as one word; EmptyInputError when blank, ValueError-typed error when the
    user typed several words (occurrences are single words)."""
    words = split_words(target or "")
    if not words:
        raise EmptyInputError("Type a target word to compare.")
    if len(words) > 1:
        raise TargetNotFoundError(
            f"The target must be a single word; {target.strip()!r} is {len(words)} words."
        )
    return words[0]


def find_occurrences(sentences: Sequence[Sequence[str]], target: str) -> list[Occurrence]:
    """Every whole-word, case-insensitive occurrence of ``target`` in tokenized sentences.

    ``Bank`` matches ``bank``; ``banks`` and ``embankment`` do not (they are other words).

    Args:
        sentences: word lists (as :func:`probing.encoders.base.normalize_sentences` gives).
        target: one word.
    """
    key = normalize_target(target).casefold()
    return [
        Occurrence(s, i, w)
        for s, words in enumerate(sentences)
        for i, w in enumerate(words)
        if w.casefold() == key
    ]


def split_lines(text: str) -> list[str]:
    """Non-empty lines of a text box, stripped."""
    return [line.strip() for line in (text or "").splitlines() if line.strip()]


# -- per-layer similarity -----------------------------------------------------------------


@dataclass
class OccurrenceComparison:
    """Occurrences of one word compared layer by layer in one model.

    Attributes:
        model: model name.
        layer_names: names of the L+1 layers (``embeddings``, ``layer 1``…).
        sentences: the tokenized sentences.
        occurrences: the n compared occurrences.
        layers: float32 (L+1, n, dim) occurrence vectors per layer.
        static: float32 (n, dim) the model's context-free vectors of the occurrences.
        similarity: float64 (L+1, n, n) cosine between occurrences per layer.
        static_similarity: float64 (n, n) cosine between their static vectors.
    """

    model: str
    layer_names: list[str]
    sentences: list[list[str]]
    occurrences: list[Occurrence]
    layers: np.ndarray
    static: np.ndarray
    similarity: np.ndarray
    static_similarity: np.ndarray

    @property
    def n_contextual_layers(self) -> int:
        """Contextual layers (the arrays hold n_contextual_layers + 1)."""
        return self.layers.shape[0] - 1

    @property
    def labels(self) -> list[str]:
        """One readable label per occurrence."""
        return [o.label(self.sentences[o.sentence]) for o in self.occurrences]

    @property
    def short_labels(self) -> list[str]:
        """Compact unique labels: sentence number, the previous word and the word
        (``S1 river bank``), with ``#position`` added where two would read the same."""
        contexts = [self._context(o, after=0) for o in self.occurrences]
        # "S2 the bank" / "S3 The bank" tell nothing apart but case: add the next word
        # where the context reads the same case-insensitively.
        folded = [c.casefold() for c in contexts]
        contexts = [
            self._context(o, after=1) if folded.count(f) > 1 else c
            for o, c, f in zip(self.occurrences, contexts, folded, strict=True)
        ]
        out = [f"S{o.sentence + 1} {c}" for o, c in zip(self.occurrences, contexts, strict=True)]
        return [
            f"{lab} #{o.index + 1}" if out.count(lab) > 1 else lab
            for lab, o in zip(out, self.occurrences, strict=True)
        ]

    def _context(self, o: Occurrence, after: int) -> str:
        """The previous word, the word, and ``after`` following words."""
        words = self.sentences[o.sentence]
        return " ".join(words[max(0, o.index - 1) : o.index + 1 + after])

    def pairs(self) -> list[tuple[int, int]]:
        """All unordered occurrence pairs (i < j)."""
        return list(combinations(range(len(self.occurrences)), 2))

    def pair_table(self) -> pd.DataFrame:
        """Long table: one row per (layer, pair) plus a ``mean`` row per layer.

        Columns: model, layer (0..L), layer_name, depth (layer / L, 0..1), pair, cosine,
        static_cosine (the same pair's static similarity, the reference).
        """
        rows = []
        pairs = self.pairs()
        short = self.short_labels
        depth_den = max(self.n_contextual_layers, 1)
        for layer in range(self.layers.shape[0]):
            head = (self.model, layer, self.layer_names[layer], layer / depth_den)
            sims = [float(self.similarity[layer, i, j]) for i, j in pairs]
            statics = [float(self.static_similarity[i, j]) for i, j in pairs]
            for (i, j), sim, ref in zip(pairs, sims, statics, strict=True):
                rows.append((*head, f"{short[i]} – {short[j]}", sim, ref))
            rows.append((*head, "mean over pairs", float(np.mean(sims)), float(np.mean(statics))))
        return pd.DataFrame(
            rows,
            columns=["model", "layer", "layer_name", "depth", "pair", "cosine", "static_cosine"],
        )


def layer_names_of(encoding: Encoding) -> list[str]:
    """Names of an encoding's L+1 layers (``layer k`` when the model gives none)."""
    names = list(encoding.model.layer_names)
    if len(names) != encoding.n_layer_arrays:
        names = [f"layer {k}" for k in range(encoding.n_layer_arrays)]
    return names


def locate(sentences: str | Sequence[str], target: str) -> tuple[list[list[str]], list[Occurrence]]:
    """Tokenize the sentences and find the target's occurrences, checking the input.

    Args:
        sentences: a text with one sentence per line, or a list of sentences.
        target: one word.

    Returns:
        The sentences' word lists and the occurrences (at least two).

    Raises:
        EmptyInputError: no text, or no target.
        TargetNotFoundError: one sentence only, the target in no sentence, or found once.
    """
    lines = (
        split_lines(sentences)
        if isinstance(sentences, str)
        else [s for s in sentences if s.strip()]
    )
    if not lines:
        raise EmptyInputError("Type two or more sentences, one per line.")
    if len(lines) < 2:
        raise TargetNotFoundError(
            "Only one sentence: type two or more sentences (one per line) that use the word "
            "in different contexts."
        )
    words = normalize_sentences(lines)
    found = find_occurrences(words, target)
    if not found:
        raise TargetNotFoundError(
            f"{target.strip()!r} does not occur in any of the sentences (matching is whole-word "
            "and case-insensitive: 'bank' matches 'Bank' but not 'banks')."
        )
    if len(found) < 2:
        raise TargetNotFoundError(
            f"{target.strip()!r} occurs only once; use it in at least two sentences to compare."
        )
    return words, found


def compare_occurrences(
    encoder: Encoder,
    sentences: str | Sequence[str],
    target: str,
    picks: Sequence[int] | None = None,
    pooling: Pooling = "first",
) -> OccurrenceComparison:
    """Encode ``sentences`` and compare the occurrences of ``target`` in every layer.

    Args:
        encoder: any encoder.
        sentences: raw sentences (a text with one sentence per line, or a list).
        target: the word to compare (case-insensitive, whole word).
        picks: indices into the found occurrences to keep (default: all).
        pooling: how subword pieces become word vectors.

    Raises:
        EmptyInputError: no text or no target.
        TargetNotFoundError: fewer than two sentences, or fewer than two occurrences picked.
    """
    words, found = locate(sentences, target)
    occ = [found[i] for i in picks] if picks is not None else found
    if len(occ) < 2:
        raise TargetNotFoundError(
            f"Found {len(found)} occurrence(s) of {target.strip()!r}; pick at least two to compare."
        )
    used = sorted({o.sentence for o in occ})
    encs = dict(zip(used, encoder.encode([words[s] for s in used], pooling=pooling), strict=True))
    layers = np.stack([encs[o.sentence].layers[:, o.index] for o in occ], axis=1)
    static = np.stack([encs[o.sentence].static[o.index] for o in occ])
    sim = np.stack([cosine_matrix(layer) for layer in layers])
    return OccurrenceComparison(
        model=encoder.name,
        layer_names=layer_names_of(next(iter(encs.values()))),
        sentences=words,
        occurrences=occ,
        layers=layers.astype(np.float32),
        static=static.astype(np.float32),
        similarity=sim,
        static_similarity=cosine_matrix(static),
    )


# -- nearest neighbours among corpus occurrences ------------------------------------------


@dataclass
class NeighbourVocabulary:
    """Word occurrences from a corpus sample, encoded once per model.

    Attributes:
        model: model name.
        words: the n occurrences' words.
        contexts: for each occurrence a short context snippet.
        layers: float32 (L+1, n, dim), unit-length rows (cosine = dot product).
        static: float32 (n, dim), unit-length rows.
    """

    model: str
    words: list[str]
    contexts: list[str]
    layers: np.ndarray
    static: np.ndarray

    def __len__(self) -> int:
        return len(self.words)


def corpus_word_sample(
    sentences: Sequence[Sequence[str]], max_occurrences: int = 3000
) -> list[list[str]]:
    """The leading sentences of ``sentences`` that together hold about ``max_occurrences``
    alphabetic words (the occurrences a vocabulary is built from)."""
    out, n = [], 0
    for words in sentences:
        if n >= max_occurrences:
            break
        out.append(list(words))
        n += sum(1 for w in words if _is_wordlike(w))
    return out


def _is_wordlike(word: str) -> bool:
    # Neighbours that are punctuation or numbers tell users nothing about meaning.
    return any(c.isalpha() for c in word)


def build_vocabulary(
    encoder: Encoder,
    sentences: Sequence[Sequence[str]],
    pooling: Pooling = "first",
    progress=None,
) -> NeighbourVocabulary:
    """Encode ``sentences`` and keep every word-like occurrence as a neighbour candidate."""
    encs = encoder.encode(
        [list(s) for s in sentences],
        pooling=pooling,
        windowed=True,
        batch_size=32,
        progress=progress,
    )
    words, contexts, layers, static = [], [], [], []
    for enc in encs:
        keep = [i for i, w in enumerate(enc.words) if _is_wordlike(w)]
        for i in keep:
            words.append(enc.words[i])
            contexts.append(Occurrence(0, i, enc.words[i]).label(enc.words, 4).split(": ", 1)[1])
        layers.append(enc.layers[:, keep])
        static.append(enc.static[keep])
    return NeighbourVocabulary(
        model=encoder.name,
        words=words,
        contexts=contexts,
        layers=unit_rows(np.concatenate(layers, axis=1)),
        static=unit_rows(np.concatenate(static, axis=0)),
    )


_vocab_cache: LRUCache[NeighbourVocabulary] = LRUCache(8)


def ud_vocabulary(
    encoder: Encoder, max_occurrences: int = 3000, pooling: Pooling = "first", progress=None
) -> NeighbourVocabulary:
    """Neighbour candidates: the first ~``max_occurrences`` word occurrences of UD-EWT train,
    encoded once per model and process (the cache is keyed by model name and source).

    Raises:
        DatasetNotFoundError: UD-EWT is not in the data folder.
    """
    from probing.datasets.ud import read_ud

    key = (encoder.info.name, encoder.info.source, pooling, max_occurrences)

    def make() -> NeighbourVocabulary:
        sample = corpus_word_sample((s.words for s in read_ud("train")), max_occurrences)
        return build_vocabulary(encoder, sample, pooling=pooling, progress=progress)

    return _vocab_cache.get_or_make(key, make)


def nearest_neighbours(
    comparison: OccurrenceComparison,
    vocab: NeighbourVocabulary,
    k: int = 5,
    distinct_words: bool = True,
    exclude: Collection[str] = (),
) -> pd.DataFrame:
    """Nearest vocabulary occurrences of each compared occurrence, per layer and for static.

    Args:
        comparison: from :func:`compare_occurrences` (same model as ``vocab``).
        vocab: neighbour candidates.
        k: neighbours per occurrence and layer.
        distinct_words: keep only the best occurrence of each word (lower-cased), so one
            frequent word cannot fill the list.
        exclude: words (any case) never to list, e.g. the target itself, whose other
            occurrences would otherwise top every list.

    Returns:
        Long table: model, layer (``static`` or 0..L), layer_name, occurrence, rank, word,
        cosine, context.
    """
    if (
        comparison.layers.shape[0] != vocab.layers.shape[0]
        or comparison.layers.shape[2] != vocab.layers.shape[2]
    ):
        raise ValueError("the vocabulary was built with another model")
    rows = []
    labels = comparison.labels
    skip = {w.casefold() for w in exclude}
    spaces = [("static", "static", comparison.static, vocab.static)] + [
        (str(k_), comparison.layer_names[k_], comparison.layers[k_], vocab.layers[k_])
        for k_ in range(comparison.layers.shape[0])
    ]
    for layer, name, queries, cands in spaces:
        sims = unit_rows(queries) @ cands.T  # (n_occ, n_vocab)
        for o, row in enumerate(sims):
            order = np.argsort(-row, kind="stable")
            seen: set[str] = set()
            rank = 0
            for j in order:
                word = vocab.words[j]
                if word.casefold() in skip:
                    continue
                if distinct_words:
                    if word.casefold() in seen:
                        continue
                    seen.add(word.casefold())
                rank += 1
                rows.append(
                    (
                        vocab.model,
                        layer,
                        name,
                        labels[o],
                        rank,
                        word,
                        float(row[j]),
                        vocab.contexts[j],
                    )
                )
                if rank >= k:
                    break
    return pd.DataFrame(
        rows,
        columns=["model", "layer", "layer_name", "occurrence", "rank", "word", "cosine", "context"],
    )
