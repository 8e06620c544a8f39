"""Sentence-level probes: Brown genre (15 categories) per layer × sentence-pooling strategy.

Every sentence of a Brown file carries that file's genre (``cats.txt``: news, editorial,
reviews, religion, hobbies, lore, belles_lettres, government, learned, fiction, mystery,
science_fiction, adventure, romance, humor). What runs, per pooling strategy
(:mod:`probing.probes.sentence_pooling`):

1. sentences of the train, dev and test splits, split **by document** with the fixed Brown
   rule (:func:`probing.datasets.brown.brown_split`, the SemCor SHA-1 rule; the same one
   that keeps Brown's dev/test files out of the embedded models' LM training text), then a
   seeded sample of at most ``per_doc[split]`` sentences from each document, so that long
   documents do not dominate;
2. per layer, a :class:`~probing.probes.linear.LinearProbe` on the pooled sentence vectors
   (C chosen on dev), scored on **test** by accuracy and macro-F1;
3. baselines: the majority genre, and a linear probe on the mean of the context-free
   ``static`` vectors (a bag of word embeddings; genre is largely lexical).

Intervals: 95 % percentile bootstrap over **test documents** (each document's sentences
resampled together): all sentences of a document share its genre, so sentences are far from
independent and a sentence bootstrap would be much too narrow. With the fixed split the test
set has 45 documents and 13 of the 15 genres (humor and science_fiction have no test file),
so intervals are wide; claim only differences whose intervals do not overlap.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from probing import config
from probing.datasets.brown import read_brown
from probing.errors import InvalidArgumentError, PoolingUnavailableError
from probing.io import atomic_write_json
from probing.probes.baselines import MajorityBaseline
from probing.probes.linear import DEFAULT_CS, LinearProbe
from probing.probes.metrics import bootstrap_ci
from probing.probes.results import ProbeResults, typed_table
from probing.probes.sentence_pooling import missing_for_pooling, sentence_vector, strategies_for
from probing.probes.tasks import get_task

if TYPE_CHECKING:
    from probing.encoders.base import Encoder

ProbeProgress = Callable[[str, int, int], None]
DEFAULT_PER_DOC: dict[str, int] = {"train": 20, "dev": 20, "test": 50}
MAX_WORDS = 100  # longer Brown "sentences" (lists, tables) are left out, and counted


@dataclass
class SentenceSet:
    """Pooled vectors of one split: ``vectors[strategy]`` float32 (n_layers + 1, n, dim),
    ``static`` (n, dim) mean static vectors, ``labels`` (n,), ``docs`` (n,) document ids."""

    vectors: dict[str, np.ndarray]
    static: np.ndarray
    labels: np.ndarray
    docs: np.ndarray
    n_dropped_long: int


def sample_sentences(split: str, per_doc: int | None, seed: int = 0) -> tuple[list, int]:
    """Brown sentences of ``split``: at most ``per_doc`` per document (seeded), in corpus
    order, without those over :data:`MAX_WORDS` words. Returns (sentences, n left out)."""
    by_doc: dict[str, list] = {}
    for s in read_brown(split):
        by_doc.setdefault(s.doc_id, []).append(s)
    out, dropped = [], 0
    for doc, sents in by_doc.items():
        keep = [s for s in sents if len(s.words) <= MAX_WORDS]
        dropped += len(sents) - len(keep)
        if per_doc is not None and len(keep) > per_doc:
            # A per-document seed: a document's sample does not depend on the others.
            rng = np.random.default_rng([seed, int(hashlib.sha1(doc.encode()).hexdigest()[:8], 16)])
            idx = np.sort(rng.choice(len(keep), size=per_doc, replace=False))
            keep = [keep[i] for i in idx]
        out.extend(keep)
    return out, dropped


def encode_sentences(
    encoder: Encoder,
    sentences: Sequence,
    strategies: Sequence[str],
    progress: Callable[[int, int], None] | None = None,
    batch_size: int = 16,
) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """Pooled vectors ``{strategy: (n_layers + 1, n, dim)}`` and mean static vectors (n, dim)."""
    attn = "attention" in strategies
    n = len(sentences)
    vecs: dict[str, list[np.ndarray]] = {s: [] for s in strategies}
    static: list[np.ndarray] = []
    for start in range(0, n, batch_size):
        reset = getattr(encoder, "reset_state", None)
        if callable(reset):
            reset()  # stateful ELMo: vectors must not depend on batch order
        chunk = [s.words for s in sentences[start : start + batch_size]]
        for enc in encoder.encode(chunk, pooling="first", attentions=attn, batch_size=len(chunk)):
            for s in strategies:
                vecs[s].append(sentence_vector(enc, s))
            static.append(enc.static.mean(axis=0))
        if progress is not None:
            progress(min(start + batch_size, n), n)
    return {s: np.stack(v, axis=1) for s, v in vecs.items()}, np.stack(static).astype(np.float32)


def _cached_split(
    encoder: Encoder,
    split: str,
    per_doc: int | None,
    seed: int,
    strategies: Sequence[str],
    progress: Callable[[int, int], None] | None,
) -> SentenceSet:
    """Encode a split once per (model, sampling); kept as .npz under the cache folder."""
    spec = {
        "model": encoder.info.name,
        "source": encoder.info.source,
        "split": split,
        "per_doc": per_doc,
        "seed": seed,
        "strategies": sorted(strategies),
        "v": 1,
    }
    key = hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:16]
    path = (
        config.cache_dir() / "sentence_vectors" / f"{encoder.info.name}__brown__{split}__{key}.npz"
    )
    sentences, dropped = sample_sentences(split, per_doc, seed)
    labels = np.array([s.meta["genre"] for s in sentences], dtype=str)
    docs = np.array([s.doc_id for s in sentences], dtype=str)
    if path.exists():
        with np.load(path) as z:
            vectors = {s: z[f"v_{s}"] for s in strategies}
            return SentenceSet(vectors, z["static"], labels, docs, dropped)
    vectors, static = encode_sentences(encoder, sentences, strategies, progress)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp.npz")
    np.savez(tmp, static=static, **{f"v_{s}": v for s, v in vectors.items()})
    tmp.replace(path)
    return SentenceSet(vectors, static, labels, docs, dropped)


def probe_sentences(
    encoder_or_name: Encoder | str,  # a name for load_encoder
    task: str = "genre",
    dataset: str = "brown",
    strategies: Sequence[str] | None = None,
    *,
    per_doc: dict[str, int | None] | None = None,
    seed: int = 0,
    Cs: Sequence[float] = DEFAULT_CS,
    n_boot: int = 1000,
    progress: ProbeProgress | None = None,
) -> dict[str, ProbeResults]:
    """Probe every layer × pooling strategy for Brown genre; see the module doc.

    Args:
        encoder_or_name: an Encoder, or a name/path for :func:`probing.load_encoder`.
        task, dataset: ``genre`` on ``brown`` (the only sentence task so far).
        strategies: pooling strategies (default: all the model supports).
        per_doc: sentences sampled per document, by split (default :data:`DEFAULT_PER_DOC`).
        seed: seed of the sampling, the probes and the bootstrap.
        Cs: grid for the probes' C (chosen on dev).
        n_boot: bootstrap replicates (documents resampled).
        progress: ``(stage, done, total)`` callback.

    Returns:
        {strategy: ProbeResults}, each with the word-level probes' table layout.

    Raises:
        PoolingUnavailableError: a strategy the model cannot give (ELMo: cls, attention).
    """
    from probing.models.registry import load_encoder

    spec = get_task(task)
    spec.field_for(dataset)
    encoder = load_encoder(encoder_or_name) if isinstance(encoder_or_name, str) else encoder_or_name
    allowed = strategies_for(encoder.info)
    chosen = list(strategies or allowed)
    bad = [s for s in chosen if s not in allowed]
    if bad:
        raise PoolingUnavailableError(
            f"{encoder.info.name} cannot pool by {', '.join(bad)}; it offers {', '.join(allowed)}"
            + (
                f" ({missing_for_pooling(encoder.info)})."
                if missing_for_pooling(encoder.info)
                else "."
            )
        )
    caps = {**DEFAULT_PER_DOC, **(per_doc or {})}
    report = progress or (lambda stage, done, total: None)
    t0 = time.perf_counter()
    sets = {
        split: _cached_split(
            encoder,
            split,
            caps[split],
            seed,
            allowed,
            lambda d, t, split=split: report(f"extract {split}", d, t),
        )
        for split in ("train", "dev", "test")
    }
    t_extract = time.perf_counter() - t0
    out = {}
    for strategy in chosen:
        t1 = time.perf_counter()
        rows, chosen_c = _fit_strategy(
            sets, strategy, encoder.info.name, spec.name, dataset, seed, Cs, n_boot
        )
        meta = {
            "encoder": encoder.info.name,
            "layer_names": list(encoder.info.layer_names),
            "label_field": "genre (cats.txt, per document)",
            "sentence_pooling": strategy,
            "layers": list(range(encoder.info.n_contextual_layers + 1)),
            "seed": seed,
            "n_boot": n_boot,
            "bootstrap_unit": "document",
            "per_doc": caps,
            "max_words": MAX_WORDS,
            "C": chosen_c,
            "eval_split": "test",
            **{f"n_{k}_sentences": len(v.labels) for k, v in sets.items()},
            **{f"n_{k}_documents": len(set(v.docs)) for k, v in sets.items()},
            **{f"n_{k}_dropped_long": v.n_dropped_long for k, v in sets.items()},
            "n_labels_train": len(set(sets["train"].labels)),
            "n_labels_test": len(set(sets["test"].labels)),
            "timing_s": {"extract": round(t_extract, 2), "fit": round(time.perf_counter() - t1, 2)},
        }
        out[strategy] = ProbeResults(
            model=encoder.info.name,
            task=spec.name,
            dataset=dataset,
            table=typed_table(rows),
            meta=meta,
        )
        report("fit", chosen.index(strategy) + 1, len(chosen))
    return out


def _fit_strategy(
    sets: dict[str, SentenceSet],
    strategy: str,
    model: str,
    task: str,
    dataset: str,
    seed: int,
    Cs: Sequence[float],
    n_boot: int,
) -> tuple[list[dict], dict[str, float]]:
    tr, dev, te = sets["train"], sets["dev"], sets["test"]
    groups = np.unique(te.docs, return_inverse=True)[1]
    rows: list[dict] = []

    def add(probe: str, layer: int | None, pred: np.ndarray) -> None:
        for metric in ("accuracy", "macro_f1"):
            est = bootstrap_ci(te.labels, pred, metric, n_boot=n_boot, seed=seed, groups=groups)
            rows.append(
                {
                    "model": model,
                    "task": task,
                    "dataset": dataset,
                    "split": "test",
                    "probe": probe,
                    "layer": layer,
                    "metric": metric,
                    "value": est.value,
                    "ci_low": est.ci_low,
                    "ci_high": est.ci_high,
                    "control": float("nan"),
                    "selectivity": float("nan"),
                    "n": est.n,
                }
            )

    add("majority", None, MajorityBaseline().fit(tr.docs, tr.labels).predict(te.docs))
    kw = {"Cs": Cs, "max_train_words": None, "random_state": seed}
    static = LinearProbe(**kw).fit(tr.static, tr.labels, dev.static, dev.labels)
    add("static_mean", None, static.predict(te.static))
    chosen_c = {}
    for layer in range(tr.vectors[strategy].shape[0]):
        probe = LinearProbe(**kw).fit(
            tr.vectors[strategy][layer], tr.labels, dev.vectors[strategy][layer], dev.labels
        )
        chosen_c[str(layer)] = probe.C_
        add("linear", layer, probe.predict(te.vectors[strategy][layer]))
    return rows, chosen_c


def _layer_index(layer: int | str, n_layers: int) -> int:
    """``"last"`` or a layer number in 0 … n_layers - 1 as an index; InvalidArgumentError else."""
    if layer == "last":
        return n_layers - 1
    try:
        index = int(layer)
    except (TypeError, ValueError):
        index = -1
    if not 0 <= index < n_layers:
        raise InvalidArgumentError(
            f"layer must be 'last' or a number from 0 to {n_layers - 1}, not {layer!r}."
        )
    return index


def paired_difference(
    encoder_or_name: Encoder | str,
    strategy_a: str,
    strategy_b: str,
    layer: int | str = "last",
    *,
    per_doc: dict[str, int | None] | None = None,
    seed: int = 0,
    Cs: Sequence[float] = DEFAULT_CS,
    n_boot: int = 1000,
) -> dict:
    """Test accuracy of pooling ``a`` minus pooling ``b`` at one layer, with a **paired**
    bootstrap over test documents (both probes' predictions resampled together), which is
    what "a beats b" needs: two marginal intervals that overlap can still differ.

    The probes are those of :func:`probe_sentences` (same sample, seed, C grid on dev), so
    the two accuracies equal that run's. ``layer``: a layer number (0 = input layer) or
    ``"last"`` (the default: fixed in advance, not chosen on test). Negative numbers are
    refused: elsewhere -1 names the static vectors (:data:`probing.encoding.STATIC`).
    """
    from probing.models.registry import load_encoder

    encoder = load_encoder(encoder_or_name) if isinstance(encoder_or_name, str) else encoder_or_name
    allowed = strategies_for(encoder.info)
    caps = {**DEFAULT_PER_DOC, **(per_doc or {})}
    sets = {
        s: _cached_split(encoder, s, caps[s], seed, allowed, None) for s in ("train", "dev", "test")
    }
    tr, dev, te = sets["train"], sets["dev"], sets["test"]
    layer = _layer_index(layer, tr.vectors[allowed[0]].shape[0])
    kw = {"Cs": Cs, "max_train_words": None, "random_state": seed}
    preds = []
    for s in (strategy_a, strategy_b):
        probe = LinearProbe(**kw).fit(
            tr.vectors[s][layer], tr.labels, dev.vectors[s][layer], dev.labels
        )
        preds.append(probe.predict(te.vectors[s][layer]))
    both = np.stack(preds, axis=1)

    def diff(y: np.ndarray, p: np.ndarray) -> float:
        return float(np.mean(p[:, 0] == y) - np.mean(p[:, 1] == y))

    groups = np.unique(te.docs, return_inverse=True)[1]
    est = bootstrap_ci(te.labels, both, diff, n_boot=n_boot, seed=seed, groups=groups)
    return {
        "model": encoder.info.name,
        "a": strategy_a,
        "b": strategy_b,
        "layer": int(layer),
        "accuracy_a": float(np.mean(preds[0] == te.labels)),
        "accuracy_b": float(np.mean(preds[1] == te.labels)),
        "difference": est.value,
        "ci_low": est.ci_low,
        "ci_high": est.ci_high,
        "bootstrap_unit": "document (paired)",
        "n_boot": n_boot,
        "seed": seed,
        "n_test_documents": int(groups.max() + 1),
        "n_test_sentences": int(len(te.labels)),
    }


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m probing.probes.sentence --model minilm-l6 --paired mean,cls [--out results]``:
    the paired difference at the last layer, printed and written as JSON."""
    import argparse
    from pathlib import Path

    from probing.shipped import add_overwrite_argument, output_folder, refuse_shipped

    p = argparse.ArgumentParser(prog="python -m probing.probes.sentence")
    p.add_argument("--model", default="minilm-l6")
    p.add_argument("--paired", action="append", required=True, help="a,b (repeatable)")
    p.add_argument("--layer", default="last", help="'last' or a layer number (0 = input)")
    p.add_argument("--per-doc", help="train,dev,test sentences per document (as the probe run)")
    p.add_argument("--out", type=output_folder, default="results")
    add_overwrite_argument(p)
    args = p.parse_args(argv)
    path = Path(args.out) / f"{args.model}__brown__genre-paired.json"
    refuse_shipped([path], args.overwrite)
    rows = []
    for pair in args.paired:
        a, b = (x.strip() for x in pair.split(","))
        per_doc = None
        if args.per_doc:
            per_doc = dict(
                zip(("train", "dev", "test"), map(int, args.per_doc.split(",")), strict=True)
            )
        rows.append(paired_difference(args.model, a, b, args.layer, per_doc=per_doc))
        r = rows[-1]
        print(
            f"{r['model']} layer {r['layer']}: {a} {r['accuracy_a']:.3f} - {b} "
            f"{r['accuracy_b']:.3f} = {r['difference']:+.3f} [{r['ci_low']:+.3f}, {r['ci_high']:+.3f}]"
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_json(path, rows, indent=1)
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
