"""Senses in the occurrence comparison: same-sense vs different-sense pairs, SemCor examples,
and a sense-tagged SemCor neighbour pool.

The static-vs-contextual point is that occurrences of one sense stay close while different
senses drift apart, layer by layer. That can be shown only where the senses are known: the
user's own labels (a line ending in ``| label``) or SemCor's sense tags. With many sentences
the per-pair lines tangle; the mean cosine of same-sense and of different-sense pairs per
layer makes the point in two lines.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Collection, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from probing.analyses.contextual import (
    NeighbourVocabulary,
    OccurrenceComparison,
    build_vocabulary,
    corpus_word_sample,
    unit_rows,
)
from probing.encoders.base import Encoder, ProgressFn
from probing.errors import CacheNotWritableError, DiskFullError

SAME, DIFFERENT = "same sense", "different senses"
LABEL_MARK = "|"


def split_sense_labels(text: str) -> tuple[str, list[str | None]]:
    """``text`` without ``| label`` line endings, and each line's label (None if unlabelled).

    Blank lines are dropped, as :func:`probing.analyses.contextual.split_lines` does, so the
    labels line up with the sentences the comparison numbers S1, S2, …
    """
    lines, labels = [], []
    for line in text.splitlines():
        body, mark, label = line.rpartition(LABEL_MARK) if LABEL_MARK in line else (line, "", "")
        if not body.strip():
            continue
        lines.append(body.rstrip())
        labels.append(label.strip() or None if mark else None)
    return "\n".join(lines), labels


def occurrence_senses(comp: OccurrenceComparison, labels: Sequence[str | None]) -> list[str | None]:
    """The sense label of each compared occurrence (its sentence's label)."""
    return [labels[o.sentence] if o.sentence < len(labels) else None for o in comp.occurrences]


def sense_pair_table(comp: OccurrenceComparison, labels: Sequence[str | None]) -> pd.DataFrame:
    """Mean cosine of same-sense and of different-sense pairs per layer (labelled pairs only).

    Columns: model, layer, layer_name, depth, relation (``same sense`` / ``different
    senses``), cosine (mean), sd, n_pairs, static_cosine (mean over the same pairs).
    """
    senses = occurrence_senses(comp, labels)
    groups: dict[str, list[tuple[int, int]]] = {SAME: [], DIFFERENT: []}
    for i, j in comp.pairs():
        if senses[i] is not None and senses[j] is not None:
            groups[SAME if senses[i] == senses[j] else DIFFERENT].append((i, j))
    rows = []
    depth_den = max(comp.n_contextual_layers, 1)
    for relation, pairs in groups.items():
        if not pairs:
            continue
        ii, jj = np.array(pairs).T
        static = float(comp.static_similarity[ii, jj].mean())
        for layer in range(comp.layers.shape[0]):
            sims = comp.similarity[layer, ii, jj]
            rows.append(
                (
                    comp.model,
                    layer,
                    comp.layer_names[layer],
                    layer / depth_den,
                    relation,
                    float(sims.mean()),
                    float(sims.std()),
                    len(pairs),
                    static,
                )
            )
    return pd.DataFrame(
        rows,
        columns=[
            "model",
            "layer",
            "layer_name",
            "depth",
            "relation",
            "cosine",
            "sd",
            "n_pairs",
            "static_cosine",
        ],
    )


def short_gloss(gloss: str, width: int = 40) -> str:
    """A gloss's first clause, cut at a word boundary."""
    first = gloss.split(";")[0].strip()
    return first if len(first) <= width else first[: width + 1].rsplit(" ", 1)[0] + "…"


def semcor_examples(
    lemma: str, pos: str = "n", per_sense: int = 3, max_senses: int = 3, data_dir=None
) -> str:
    """SemCor sentences using ``lemma`` (as that very word form), ``per_sense`` for each of its
    ``max_senses`` most frequent senses, one per line ending in ``| sense``.

    Raises:
        as :func:`probing.analyses.sense_geometry.lemma_occurrences`.
    """
    from probing.analyses.sense_geometry import lemma_occurrences

    occ = lemma_occurrences(lemma, pos, max_occurrences=100_000, data_dir=data_dir)
    by_sense: dict[str, list[str]] = {}
    for s, w, key in zip(occ.sentence_index, occ.word_index, occ.senses, strict=True):
        words = occ.sentences[s]
        if words[w].casefold() != occ.lemma.replace("_", " ").casefold():
            continue  # "banks" would not be found by the comparison's whole-word match
        lines = by_sense.setdefault(key, [])
        line = " ".join(words)
        if len(lines) < per_sense and len(words) <= 40 and line not in lines:
            lines.append(line)
    ranked = sorted(by_sense, key=lambda k: -occ.senses.count(k))[:max_senses]
    out = []
    for n, key in enumerate(ranked, start=1):
        label = f"{n}: {short_gloss(occ.glosses.get(key, key))}"
        out += [f"{line} | {label}" for line in by_sense[key]]
    return "\n".join(out)


class SenseVocabulary(NeighbourVocabulary):
    """A neighbour pool whose occurrences carry a WordNet sense key and gloss ('' if none)."""

    def __init__(self, base: NeighbourVocabulary, senses: list[str], glosses: list[str]) -> None:
        super().__init__(base.model, base.words, base.contexts, base.layers, base.static)
        self.senses = senses
        self.glosses = glosses


_pool_cache: dict[tuple, SenseVocabulary] = {}
_pool_lock = threading.Lock()


def _memory_key(encoder: Encoder, pooling: str, max_occurrences: int) -> tuple:
    return (encoder.info.name, encoder.info.source, pooling, max_occurrences)


def _disk_key(
    encoder: Encoder, pooling: str, max_occurrences: int, data_dir: str | Path | None
) -> str | None:
    """The pool's name on disk, or None when it is not kept there: only pools of the
    configured data folder are (its files are what the key hashes)."""
    from probing import config
    from probing.analyses import pool_store

    if data_dir is not None and Path(data_dir).resolve() != config.data_dir().resolve():
        return None
    return pool_store.pool_key(encoder, "semcor", "train", pooling, max_occurrences)


def held_semcor_vocabulary(
    encoder: Encoder,
    max_occurrences: int = 20_000,
    pooling: str = "first",
    *,
    from_disk: bool = False,
) -> SenseVocabulary | None:
    """The pool :func:`semcor_vocabulary` would return, if this process already holds it
    (``from_disk``: or can read it from disk, a second or more for a large model); None
    otherwise. Never encodes: a page asks this to know whether the pool must be built first."""
    key = _memory_key(encoder, pooling, max_occurrences)
    with _pool_lock:
        if key in _pool_cache or not from_disk:
            return _pool_cache.get(key)
    disk_key = _disk_key(encoder, pooling, max_occurrences, None)
    return _stored(encoder, disk_key, max_occurrences, pooling) if disk_key else None


def _stored(
    encoder: Encoder, disk_key: str, max_occurrences: int, pooling: str
) -> SenseVocabulary | None:
    """The pool stored under ``disk_key``, now held; None when there is none."""
    from probing.analyses import pool_store

    found = pool_store.load_pool(disk_key)
    if found is None:
        return None
    fields, layers, static = found
    base = NeighbourVocabulary(encoder.name, fields["words"], fields["contexts"], layers, static)
    pool = SenseVocabulary(base, fields["senses"], fields["glosses"])
    return keep_semcor_vocabulary(encoder, pool, max_occurrences, pooling)


def keep_semcor_vocabulary(
    encoder: Encoder, pool: SenseVocabulary, max_occurrences: int, pooling: str = "first"
) -> SenseVocabulary:
    """Hold ``pool`` (built elsewhere, e.g. in a worker process) as this process's pool of
    ``encoder``; returns the one held (an earlier one wins)."""
    with _pool_lock:
        return _pool_cache.setdefault(_memory_key(encoder, pooling, max_occurrences), pool)


def semcor_pool_stored(encoder: Encoder, max_occurrences: int, pooling: str = "first") -> bool:
    """Whether the pool is kept on disk (so another process can read it instead of encoding)."""
    from probing.analyses import pool_store

    disk_key = _disk_key(encoder, pooling, max_occurrences, None)
    return disk_key is not None and pool_store.has_pool(disk_key)


def semcor_vocabulary(
    encoder: Encoder,
    max_occurrences: int = 20_000,
    pooling: str = "first",
    progress=None,
    data_dir=None,
) -> SenseVocabulary:
    """Neighbour candidates from SemCor train: ~``max_occurrences`` word occurrences, each
    with its sense where SemCor tags one; encoded once per model and data (kept on disk,
    :mod:`probing.analyses.pool_store`) and held once per process.

    Encoding takes a minute or more on CPU (8,000 occurrences: ~30 s for minilm-l6, ~100 s
    for mpnet-base): an interactive caller asks :func:`held_semcor_vocabulary` first and
    builds in the background. ``progress(done, total)`` follows the encoding (sentences); a
    stored pool reports done."""
    from probing.analyses import pool_store

    pool = held_semcor_vocabulary(encoder, max_occurrences, pooling)
    disk_key = None
    if pool is None:
        disk_key = _disk_key(encoder, pooling, max_occurrences, data_dir)
        pool = _stored(encoder, disk_key, max_occurrences, pooling) if disk_key else None
    if pool is not None:
        if progress is not None:
            progress(1, 1)
        return pool
    pool = _build_semcor_pool(encoder, max_occurrences, pooling, progress, data_dir)
    if disk_key:
        fields = {
            "model": encoder.name,
            "words": pool.words,
            "contexts": pool.contexts,
            "senses": pool.senses,
            "glosses": pool.glosses,
        }
        try:
            pool_store.save_pool(disk_key, fields, pool.layers, pool.static)
        except (DiskFullError, CacheNotWritableError) as exc:
            # The pool is built and kept in memory below: a cache that cannot take it only
            # costs the next server start a rebuild (the operator's log says why).
            logging.getLogger("contextlens").warning("neighbour pool not stored: %s", exc)
    return keep_semcor_vocabulary(encoder, pool, max_occurrences, pooling)


def _build_semcor_pool(
    encoder: Encoder,
    max_occurrences: int,
    pooling: str,
    progress: ProgressFn | None,
    data_dir: str | Path | None,
) -> SenseVocabulary:
    """Encode the leading SemCor train sentences and attach each occurrence's sense."""
    from probing.datasets.semcor import read_semcor
    from probing.datasets.wordnet import sense_gloss

    sentences = list(_leading(read_semcor("train", data_dir), max_occurrences))
    sample = corpus_word_sample([s.words for s in sentences], max_occurrences)
    base = build_vocabulary(encoder, sample, pooling=pooling, progress=progress)
    senses: list[str] = []
    for s in sentences[: len(sample)]:
        senses += [
            k or ""
            for w, k in zip(s.words, s.labels["sense"], strict=True)
            if any(c.isalpha() for c in w)
        ]
    glosses = []
    for k in senses:
        try:
            glosses.append(sense_gloss(k, data_dir) if k else "")
        except ValueError:
            glosses.append("")
    return SenseVocabulary(base, senses, glosses)


def _leading(sentences, max_occurrences: int):
    n = 0
    for s in sentences:
        if n >= max_occurrences:
            return
        yield s
        n += len(s.words)


def sense_neighbours(
    comp: OccurrenceComparison, pool: SenseVocabulary, k: int = 5, exclude: Collection[str] = ()
) -> pd.DataFrame:
    """Nearest pool occurrences of each compared occurrence per layer, with their senses.

    One row per neighbour: model, layer, layer_name, occurrence, rank, word, sense (key or
    ''), gloss, cosine, context. Each (word, sense) appears once per list with its best cosine.
    """
    skip = {w.casefold() for w in exclude}
    rows = []
    spaces = [("static", "static", comp.static, pool.static)] + [
        (str(k_), comp.layer_names[k_], comp.layers[k_], pool.layers[k_])
        for k_ in range(comp.layers.shape[0])
    ]  # the same layer keys as nearest_neighbours
    for layer, name, queries, cands in spaces:
        sims = unit_rows(queries) @ cands.T  # (n_occ, n_pool)
        for o, row in enumerate(sims):
            seen: set[tuple[str, str]] = set()
            for j in np.argsort(-row, kind="stable"):
                ident = (pool.words[j].casefold(), pool.senses[j])
                if ident[0] in skip or ident in seen:
                    continue
                seen.add(ident)
                rows.append(
                    (
                        pool.model,
                        layer,
                        name,
                        comp.labels[o],
                        len(seen),
                        pool.words[j],
                        pool.senses[j],
                        pool.glosses[j],
                        float(row[j]),
                        pool.contexts[j],
                    )
                )
                if len(seen) >= k:
                    break
    return pd.DataFrame(
        rows,
        columns=[
            "model",
            "layer",
            "layer_name",
            "occurrence",
            "rank",
            "word",
            "sense",
            "gloss",
            "cosine",
            "context",
        ],
    )
