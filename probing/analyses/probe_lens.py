"""The probe lens: every saved probe applied to one sentence, at every layer.

Given an :class:`~probing.encoding.Encoding` and the probes saved with a model's results
(:mod:`probing.probes.saved`), :func:`apply_lens` gives, per task, word and layer, what the
probe predicts and how sure it is, and the first layer from which the prediction stays the
top layer's answer. The word-sense probe (nearest SemCor sense centroid) labels content
words — nouns, verbs, adjectives, adverbs by the gold UPOS or else by the UPOS probe's
top-layer answer — with a WordNet sense and its gloss. Structural probes give a tree per layer (the minimum spanning tree of
the predicted distances; the root = the word of least predicted depth). With a gold UD
sentence, each answer is marked right or wrong, and ``deprel`` is probed on the gold arcs
(an edge probe needs a head for every word; a typed sentence has none).

Supersense and word sense label only what SemCor labels: nouns, verbs, adjectives and
adverbs that WordNet has senses for (supersense also proper nouns, which SemCor tags as
``noun.person``, ``noun.location``, ``noun.group``). Their probes are asked only about those
words; every other word is listed in :attr:`LensResult.masked` with the reason (a probe
applied to "The" would still answer, say ``verb.stative``, but the task has no such label).

Vectors are rounded to float16 before probing, as the feature cache stores them for
training, so a sentence from the data set gets exactly the vectors its probe saw.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from probing.errors import DataFormatError
from probing.probes.edge import base_relation
from probing.probes.saved import SavedProbes, probe_dir
from probing.probes.structural import gold_edges, mst_edges
from probing.probes.tasks import task_names

if TYPE_CHECKING:
    from probing.encoding import Encoding

LENS_TASKS = tuple(task_names(lens=True))  # the registry's tasks the lens applies
GOLD_FIELDS = {"pos": "upos", "xpos": "xpos", "deprel": "deprel"}


def saved_probes(
    results_dir: str | Path, model: str, unreadable: list[str] | None = None
) -> dict[str, SavedProbes]:
    """The probes saved for ``model`` in ``results_dir/probes`` (task -> probes).

    A saved probe that cannot be read (a truncated file) is left out and its file name
    appended to ``unreadable``; without that list its DataFormatError propagates.
    """
    from probing.probes.store import output_stem

    found = {}
    folder = probe_dir(results_dir)
    for task in LENS_TASKS:
        for dataset in ("ud-ewt", "semcor"):
            stem = folder / output_stem(model, dataset, task)
            if Path(str(stem) + ".json").is_file():
                try:
                    found[task] = SavedProbes.load(stem)
                except DataFormatError:
                    if unreadable is None:
                        raise
                    unreadable.append(f"{stem.name} (.json + .safetensors)")
                break
    return found


@dataclass
class LensResult:
    """What the probes say about one sentence.

    Attributes:
        words: the sentence's words.
        labels: tidy DataFrame, one row per (task, word, layer) of a labelling probe:
            task, word_index, word, layer, label, confidence, final, first_layer, gold,
            correct (gold/correct empty without gold).
        trees: task -> layer -> undirected edges (i, j) of the predicted tree
            (``dep-distance``), and ``"root"`` -> layer -> predicted root index
            (``dep-depth``).
        gold_edges: the gold tree's edges (None without gold).
        missing: lens tasks with no saved probe.
        absent: task -> why its saved probe gives nothing on this sentence (``deprel``
            without gold arcs: the edge probe labels the gold tree's arcs).
        masked: task -> {word index: why the task gives that word no label} (supersense,
            wsd: words that are not content words with WordNet senses).
    """

    words: list[str]
    labels: pd.DataFrame
    trees: dict[str, dict[int, object]] = field(default_factory=dict)
    gold_edges: set | None = None
    gold_root: int | None = None
    missing: list[str] = field(default_factory=list)
    masked: dict[str, dict[int, str]] = field(default_factory=dict)
    absent: dict[str, str] = field(default_factory=dict)


NO_GOLD_ARCS = (
    "the edge probe labels the arcs of the gold tree (head → dependent), and a typed "
    "sentence has no gold tree"
)


def apply_lens(
    encoding: Encoding,
    probes: dict[str, SavedProbes],
    gold: dict[str, list[str]] | None = None,
) -> LensResult:
    """Apply every probe in ``probes`` to every layer of ``encoding``.

    Args:
        encoding: the sentence through the probes' model (same pooling as their training).
        probes: task -> :class:`SavedProbes` (see :func:`saved_probes`).
        gold: UD labels of the sentence (``upos``, ``xpos``, ``head``, ``deprel``), or None.
    """
    layers = np.asarray(encoding.layers, dtype=np.float16).astype(np.float32)
    words = list(encoding.words)
    frames, trees, absent = [], {}, {}
    heads = [int(h) for h in gold["head"]] if gold and "head" in gold else None
    for task, probe in probes.items():
        if probe.kind == "wsd-centroids" or task in SENSE_TASKS:
            continue  # needs the POS answers: below
        if probe.kind == "linear":
            if task == "deprel":
                if heads is None:
                    absent[task] = NO_GOLD_ARCS
                    continue
                frames.append(_deprel(probe, layers, words, heads, gold))
            else:
                truth = gold.get(GOLD_FIELDS.get(task, "")) if gold else None
                frames.append(_labels(task, probe, layers, words, list(range(len(words))), truth))
        elif probe.kind == "structural-distance":
            trees["dep-distance"] = {
                la: mst_edges(probe.predict(la, layers[la])) for la in probe.layers
            }
        else:
            trees["dep-depth"] = {
                la: int(np.argmin(probe.predict(la, layers[la]))) for la in probe.layers
            }
    masked: dict[str, dict[int, str]] = {}
    for task in [t for t in SENSE_TASKS if t in probes]:
        targets, masked[task] = sense_words(words, frames, gold, task)
        if task == "wsd":
            frames.append(_wsd(probes["wsd"], layers, words, targets))
        elif targets:
            idx = [i for i, _ in targets]
            frames.append(_labels(task, probes[task], layers, words, idx, None))
    frames = [f for f in frames if not f.empty]
    table = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
    return LensResult(
        words=words,
        labels=table,
        trees=trees,
        gold_edges=None if heads is None else gold_edges(heads),
        gold_root=None if heads is None else heads.index(0),
        missing=[t for t in LENS_TASKS if t not in probes],
        masked={t: m for t, m in masked.items() if m},
        absent=absent,
    )


def _labels(
    task: str,
    probe: SavedProbes,
    layers: np.ndarray,
    words: list[str],
    rows: list[int] | Callable[[int], np.ndarray],
    truth: Sequence | None,
    shown: list[int] | None = None,
) -> pd.DataFrame:
    """Per layer predictions of a linear probe for the instances ``rows``."""
    per_layer = {}
    for la in probe.layers:
        X = layers[la][rows] if not callable(rows) else rows(la)
        proba = probe.predict_proba(la, X)
        per_layer[la] = (probe.classes[proba.argmax(1)], proba.max(1))
    return _rows(task, per_layer, words, shown if shown is not None else rows, truth)


def _rows(
    task: str,
    per_layer: dict[int, tuple[np.ndarray, np.ndarray]],
    words: list[str],
    idx: Sequence[int],
    truth: Sequence | None,
    extra: Callable[[int, int], dict] | None = None,
) -> pd.DataFrame:
    """The tidy rows of one task from ``{layer: (labels, confidences)}`` over words ``idx``;
    ``extra(layer, k)`` adds columns to instance k's row."""
    if not per_layer or not len(idx):
        return pd.DataFrame()
    final = per_layer[max(per_layer)][0]
    first = _first_stable(per_layer, final)
    out = []
    for la, (pred, conf) in per_layer.items():
        for k, i in enumerate(idx):
            g = None if truth is None else truth[k]
            out.append(
                {
                    "task": task,
                    "word_index": int(i),
                    "word": words[i],
                    "layer": la,
                    "label": str(pred[k]),
                    "confidence": float(conf[k]),
                    "final": str(final[k]),
                    "first_layer": int(first[k]),
                    "gold": g,
                    "correct": None if g is None else bool(pred[k] == g),
                    **(extra(la, k) if extra else {}),
                }
            )
    return pd.DataFrame(out)


SENSE_TASKS = ("supersense", "wsd")  # label only content words with WordNet senses
_POS_NAMES = {"n": "noun", "v": "verb", "a": "adjective", "r": "adverb"}


def sense_words(
    words: list[str], frames: list[pd.DataFrame], gold: dict | None, task: str
) -> tuple[list[tuple[int, str]], dict[int, str]]:
    """The words ``task`` (supersense or wsd) labels, as (word index, lemma key
    ``lemma%n``), and {every other word's index: why it gets no label}.

    Content words are nouns, verbs, adjectives and adverbs by the gold UPOS, else by the
    UPOS probe's top-layer answer (without either, no word can be told apart: all are
    masked); each needs a WordNet sense for its lemma (gold lemma, else WordNet's
    morphological lookup). Proper nouns count for supersense only (SemCor tags named
    entities as noun.person/location/group); they have no WordNet sense to choose.
    """
    from probing.datasets.wordnet import wordnet_pos

    upos = _upos(words, frames, gold)
    if upos is None:
        why = "which words are content words needs gold UPOS or a saved UPOS probe"
        return [], {i: why for i in range(len(words))}
    lemmas = gold.get("lemma") if gold else None
    targets, masked = [], {}
    for i, word in enumerate(words):
        if upos[i] == "PROPN":
            if task == "supersense":
                targets.append((i, f"{word.lower()}%n"))
            else:
                masked[i] = "a proper noun: word senses are WordNet's senses of common words"
            continue
        letter = wordnet_pos(upos[i])
        if letter is None:
            masked[i] = (
                f"{upos[i]}: {'supersenses' if task == 'supersense' else 'word senses'} label "
                "only nouns, verbs, adjectives and adverbs"
            )
            continue
        lemma = "_".join((lemmas[i] if lemmas else _morphy(word, letter)).lower().split())
        if not _has_senses(lemma, letter):
            masked[i] = f"WordNet has no {_POS_NAMES[letter]} sense of “{lemma}”"
            continue
        targets.append((i, f"{lemma}%{letter}"))
    return targets, masked


def _upos(
    words: list[str], frames: list[pd.DataFrame], gold: dict[str, list[str]] | None
) -> list[str] | None:
    """Each word's UPOS: gold, else the UPOS probe's top-layer answer, else None."""
    if gold and gold.get("upos") is not None:
        return list(gold["upos"])
    pos_rows = [f for f in frames if not f.empty and f["task"].iat[0] == "pos"]
    if not pos_rows:
        return None
    top = pos_rows[0][pos_rows[0]["layer"] == pos_rows[0]["layer"].max()]
    answer = dict(zip(top["word_index"], top["final"], strict=True))
    return [answer.get(i, "X") for i in range(len(words))]


def _has_senses(lemma: str, letter: str) -> bool:
    """WordNet has a synset for ``lemma`` as ``letter`` (True when WordNet is missing: it
    cannot tell, and the probe's answer is shown)."""
    from probing.datasets.wordnet import wordnet

    try:
        return bool(wordnet().synsets(lemma, pos=letter))
    except Exception:  # no WordNet files
        return True


def _morphy(word: str, letter: str) -> str:
    """WordNet's base form of ``word`` as ``letter`` (the word itself without WordNet)."""
    from probing.datasets.wordnet import wordnet

    try:
        return wordnet().morphy(word.lower(), letter) or word.lower()
    except Exception:  # no WordNet files: the surface form is the best guess
        return word.lower()


def _wsd(
    probe: SavedProbes, layers: np.ndarray, words: list[str], targets: list[tuple[int, str]]
) -> pd.DataFrame:
    """Per layer the nearest sense centroid of each content word (see SavedProbes.predict_senses);
    a lemma unseen in training gets WordNet's first sense at every layer."""
    if not targets:
        return pd.DataFrame()
    idx = [i for i, _ in targets]
    keys = [k for _, k in targets]
    per_layer, sources = {}, {}
    first: dict[str, str] = {}  # WordNet's first sense of a lemma unseen in training
    for la in probe.layers:
        senses, src, cos = probe.predict_senses(la, layers[la][idx], keys)
        unseen = src == "unseen"
        if unseen.any():
            senses = senses.astype(object)
            senses[unseen] = [
                first.setdefault(k, _first_sense(k)) for k in np.asarray(keys)[unseen]
            ]
            src = np.where(unseen & (senses != ""), "wordnet-first", src)
        per_layer[la] = (senses.astype(str), cos)
        sources[la] = src
    keys_seen = {s for pred, _ in per_layer.values() for s in pred}
    glosses = {s: _gloss(s) for s in keys_seen}
    names = {s: sense_label(s) for s in keys_seen}
    table = _rows(
        "wsd",
        per_layer,
        words,
        idx,
        None,
        extra=lambda la, k: {
            "lemma": keys[k],
            "source": str(sources[la][k]),
            "sense_key": per_layer[la][0][k],
            "gloss": glosses[per_layer[la][0][k]],
        },
    )
    # Readable labels ("bank.n.2": WordNet's 2nd noun sense of bank); keys stay in sense_key.
    table["label"] = table["label"].map(names)
    table["final"] = table["final"].map(names)
    return table


def sense_label(sense_key: str) -> str:
    """``bank%1:14:00::`` -> ``bank.n.2`` (lemma, POS, rank of the sense in WordNet's order
    for that lemma); the key itself without WordNet, "—" for no sense."""
    if not sense_key:
        return "—"
    try:
        from probing.datasets.wordnet import wordnet

        wn = wordnet()
        lemma = wn.lemma_from_key(sense_key)
        synset = lemma.synset()
        pos = "a" if synset.pos() == "s" else synset.pos()
        ranked = wn.synsets(lemma.name(), pos=pos)
        return f"{lemma.name().lower()}.{pos}.{ranked.index(synset) + 1}"
    except Exception:  # no WordNet files or a key it lacks: show the key
        return sense_key


def _first_sense(lemma_key: str) -> str:
    from probing.datasets.wordnet import first_sense_key

    lemma, _, letter = lemma_key.rpartition("%")
    try:
        return first_sense_key(lemma, letter) or ""
    except Exception:  # no WordNet files: no answer for an unseen lemma
        return ""


def _gloss(sense_key: str) -> str:
    from probing.datasets.wordnet import sense_gloss

    if not sense_key:
        return ""
    try:
        return sense_gloss(sense_key)
    except Exception:  # no WordNet files or an unknown key: no gloss
        return ""


def _deprel(
    probe: SavedProbes,
    layers: np.ndarray,
    words: list[str],
    heads: list[int],
    gold: dict[str, list[str]],
) -> pd.DataFrame:
    deps = [i for i, h in enumerate(heads) if h > 0]
    hd = [heads[i] - 1 for i in deps]
    truth = [base_relation(gold["deprel"][i]) for i in deps] if "deprel" in gold else None
    pair = lambda la: np.concatenate([layers[la][hd], layers[la][deps]], axis=1)  # noqa: E731
    return _labels("deprel", probe, layers, words, pair, truth, shown=deps)


def _first_stable(per_layer: dict[int, tuple], final: np.ndarray) -> np.ndarray:
    """Per instance, the lowest layer from which every higher layer predicts ``final``."""
    order = sorted(per_layer)
    first = np.full(len(final), order[-1])
    for la in reversed(order):
        same = per_layer[la][0] == final
        still = same & (first == _next(order, la))
        first[still] = la
    return first


def _next(order: list[int], la: int) -> int:
    i = order.index(la)
    return order[i + 1] if i + 1 < len(order) else order[-1]
