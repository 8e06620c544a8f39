"""What fine-tuning changes, per layer: CKA, distance moved, the other task's probe.

Merchant et al. (2020) and Zhou & Srikumar (2021) compare a pre-trained encoder with its
fine-tuned copies layer by layer; the measurements here, on the same words for both:

- **linear CKA** (:func:`probing.analyses.cka.linear_cka`, the unbiased estimator) between
  a layer before and the same layer after fine-tuning;
- **distance moved**: the mean cosine distance ``1 − cos(h_before, h_after)`` of each word's
  vector at that layer;
- **the other task's probe**: UPOS probed on the genre-tuned model through the project's
  probe runner (:func:`probing.probes.run.probe_layers`), genre probed on the UPOS-tuned
  model with the sentence probe's parts (mean pooling, a :class:`~probing.probes.linear.LinearProbe`
  per layer, C chosen on dev), stored as per-sentence (UPOS) or per-document (genre) counts;
- **the ELMo way beside full fine-tuning**: the frozen encoder and a learned scalar mix
  (:class:`~probing.probes.mix.ScalarMixProbe`) on the same task and the same test items.

Every comparison goes through the comparison engine (:mod:`probing.probes.compare`, paired
bootstrap over test sentences or documents and over seeds, Holm over a family); the
sentences :func:`claim_sentences` writes are made from its :class:`~probing.probes.compare.Difference`s.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from probing.probes.compare import Difference, SentenceCounts

if TYPE_CHECKING:
    from probing.encoders.base import Encoder
    from probing.training.finetune import Example

UPOS_UNIT = "ud-ewt:test"
GENRE_UNIT = "brown:test documents"


def layer_shift(
    before: Encoder, after: Encoder, sentences: Sequence[Sequence[str]]
) -> tuple[list[float], list[float]]:
    """Per layer (0 = embeddings), the linear CKA of before vs after and the mean cosine
    distance of each word's vectors (first-piece pooling), on the same words."""
    from probing.analyses.cka import encode_layers, linear_cka

    xs, ys = encode_layers(before, sentences), encode_layers(after, sentences)
    ckas, dists = [], []
    for x, y in zip(xs, ys, strict=True):
        x64, y64 = x.astype(np.float64), y.astype(np.float64)
        ckas.append(linear_cka(x64, y64))
        cos = np.sum(x64 * y64, 1) / (np.linalg.norm(x64, axis=1) * np.linalg.norm(y64, axis=1))
        dists.append(float(np.mean(1.0 - cos)))
    return ckas, dists


def upos_probe_counts(
    encoder: Encoder, *, mix: bool, max_train: int, max_dev: int, max_test: int
) -> tuple[dict[str, SentenceCounts], dict]:
    """Per-layer (and, with ``mix``, scalar-mix) UPOS accuracy counts per test sentence from
    the project's probe runner (one seed; no control task), and the run's meta."""
    from probing.probes.run import probe_layers

    res = probe_layers(
        encoder,
        "pos",
        "ud-ewt",
        max_train_sentences=max_train,
        max_dev_sentences=max_dev,
        max_test_sentences=max_test,
        seeds=1,
        control=False,
        cumulative_mix=False,
        scalar_mix=mix,
        n_boot=100,
    )
    keep = {
        k: v for k, v in res.sentence_counts.items() if k.startswith("layer ") or k == "scalar_mix"
    }
    best = (res.meta.get("best_layer") or {}) if isinstance(res.meta, dict) else {}
    return keep, {"best_layer": best}


def genre_vectors(encoder: Encoder, sentences: Sequence) -> np.ndarray:
    """Mean-pooled sentence vectors of every layer: float32 (n_layers + 1, n, dim)."""
    from probing.probes.sentence import encode_sentences

    vectors, _ = encode_sentences(encoder, list(sentences), ["mean"])
    return vectors["mean"]


def doc_groups(docs: Sequence[str]) -> tuple[np.ndarray, int]:
    """Each test sentence's document index and the number of documents (the unit)."""
    _, idx = np.unique(np.asarray(docs, dtype=str), return_inverse=True)
    return idx.astype(np.int64), int(idx.max()) + 1


def genre_probe_counts(
    train: tuple[np.ndarray, np.ndarray],
    dev: tuple[np.ndarray, np.ndarray],
    test: tuple[np.ndarray, np.ndarray, np.ndarray],
    *,
    mix_seeds: Sequence[int] = (),
) -> dict[str, SentenceCounts]:
    """Genre accuracy counts per test document: a LinearProbe per layer (C on dev) and, with
    ``mix_seeds``, a ScalarMixProbe per seed over every layer (C of the best dev layer).

    Args:
        train, dev: (vectors (L, n, D), labels (n,)).
        test: (vectors (L, n, D), labels (n,), docs (n,)).
    """
    from probing.probes.linear import LinearProbe
    from probing.probes.mix import ScalarMixProbe

    (xtr, ytr), (xdv, ydv), (xte, yte, docs) = train, dev, test
    group, n_groups = doc_groups(docs)
    out: dict[str, SentenceCounts] = {}
    dev_acc, cs = {}, {}
    for layer in range(xtr.shape[0]):
        probe = LinearProbe(max_train_words=None, random_state=0)
        probe.fit(xtr[layer], ytr, xdv[layer], ydv)
        dev_acc[layer] = float(np.mean(probe.predict(xdv[layer]) == ydv))
        cs[layer] = probe.C_
        out[f"layer {layer}"] = SentenceCounts.from_predictions(
            "accuracy", yte, [probe.predict(xte[layer])], group, n_groups
        )
    if mix_seeds:
        c = cs[max(dev_acc, key=dev_acc.get)]
        preds = []
        for s in mix_seeds:
            mix = ScalarMixProbe(max_train_words=None, C=c, random_state=s)
            mix.fit(xtr, ytr, xdv, ydv, layers=list(range(xtr.shape[0])))
            preds.append(mix.predict(xte))
        out["scalar_mix"] = SentenceCounts.from_predictions(
            "accuracy", yte, preds, group, n_groups, seeds=tuple(mix_seeds)
        )
    return out


def finetuned_counts(
    folder: str | Path, examples: Sequence[Example], group: np.ndarray | None = None
) -> SentenceCounts:
    """The accuracy counts of a fine-tuned model's own head (:func:`probing.training.finetune.load_finetuned`)
    on ``examples``: per sentence for a token task, per ``group`` (each sentence's document
    index) for a sentence task. A word cut off by the piece limit counts as wrong."""
    from probing.training.finetune import load_finetuned, predict

    model, batcher, _ = load_finetuned(folder)
    preds = predict(model, batcher, examples)
    if model.level == "token":
        y = [lab for e in examples for lab in e.label]
        sent = [i for i, e in enumerate(examples) for _ in e.words]
        flat = [batcher.labels[q] if q >= 0 else "" for p in preds for q in p]
        return SentenceCounts.from_predictions("accuracy", y, [flat], sent, len(examples))
    if group is None:
        group = np.arange(len(examples))
    flat = [batcher.labels[int(p[0])] for p in preds]
    y = [str(e.label) for e in examples]
    return SentenceCounts.from_predictions("accuracy", y, [flat], group, int(np.max(group)) + 1)


def stack_seeds(cells: Sequence[SentenceCounts], seeds: Sequence[int]) -> SentenceCounts:
    """One cell per seed (each a single fit) as one cell with a row per seed."""
    counts = np.concatenate([c.counts for c in cells])
    return SentenceCounts(cells[0].kind, counts, tuple(seeds))


def verdict(d: Difference) -> str:
    """What the engine allows one to say about ``a − b``."""
    if d.called:
        return "higher" if d.value > 0 else "lower"
    return "not distinguishable"


def claim_sentences(
    diffs: Sequence[Difference], scale: float = 100.0, unit: str = "points"
) -> list[str]:
    """One sentence per difference, written from the engine's output: the verdict (called
    with Holm and a sign that holds at every seed, or not), the estimate, its 95 % interval
    and the Holm-adjusted p."""
    out = []
    for d in diffs:
        v = verdict(d)
        head = (
            f"{d.a} is {v} than {d.b}"
            if v != "not distinguishable"
            else f"{d.a} and {d.b} are not distinguishable"
        )
        out.append(
            f"{head} (first − second {d.value * scale:+.2f} [{d.ci_low * scale:+.2f}, "
            f"{d.ci_high * scale:+.2f}] {unit}, p_Holm {_p(d.p_holm)})."
        )
    return out


def _p(p: float) -> str:
    if not np.isfinite(p):
        return "n/a"
    return f"{p:.3f}" if p >= 0.001 else f"{p:.0e}"
