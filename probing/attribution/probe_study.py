"""The faithfulness study of probe attribution: which layer, which words, which label, then
every method's deletion/insertion AOPC against a random order, compared by the engine.

Choices, made before anything is scored and never on the test split's results:

- **Layer**: the layer whose saved probe is most accurate on the first ``n_dev`` UD-EWT
  *dev* sentences (:func:`dev_accuracy`; vectors as the lens and the feature cache give
  them, float16-rounded). On a tie, the first such layer.
- **Words**: UD-EWT *test* sentences in file order with 8 to 20 words; in each, one word
  drawn uniformly (seeded by the sentence's position) among its alphabetic words; the first
  ``n`` such sentences. Nothing about the model enters the choice.
- **Label explained**: the probe's own prediction on the word (faithfulness asks whether an
  explanation of *the prediction* names the words it rests on); the gold tag is recorded.

Methods: Integrated Gradients with the [MASK] baseline (the removal the curves use) and with
the [PAD] baseline, gradient × input, and the random order (mean of ``n_random`` seeded
permutations). The comparisons are :func:`probing.attribution.study.summarise`'s: sentence
bootstrap, paired across methods, every pair in one Holm family per metric.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from probing.attribution.integrated_gradients import DEFAULT_STEPS
from probing.attribution.probe_attribution import (
    importance_order,
    probe_curves,
    probe_gradient_x_input,
    probe_integrated_gradients,
    random_probe_curves,
)
from probing.attribution.probe_case import ProbeCase, prepare_probe_case
from probing.attribution.study import StudyRows, _curve_row
from probing.errors import InvalidArgumentError

if TYPE_CHECKING:
    from probing.encoders.bert import TransformersEncoder
    from probing.probes.saved import SavedProbes

MIN_WORDS, MAX_WORDS = 8, 20
STUDY_METHODS: tuple[str, ...] = (
    "integrated_gradients",
    "integrated_gradients_pad",
    "gradient_x_input",
    "random",
)
LABELS = {
    "integrated_gradients": "Integrated Gradients ([MASK] baseline)",
    "integrated_gradients_pad": "Integrated Gradients ([PAD] baseline)",
    "gradient_x_input": "Gradient × input",
    "random": "Random order",
}
GOLD_FIELD = {"pos": "upos", "xpos": "xpos"}


def dev_accuracy(
    encoder: TransformersEncoder, probes: SavedProbes, sentences: Iterable, n_dev: int = 200
) -> dict[int, float]:
    """Per saved layer, the probe's accuracy on the first ``n_dev`` sentences (their gold
    labels in ``GOLD_FIELD[task]``).

    Raises:
        InvalidArgumentError: a task UD-EWT has no labels for (supersense: give the layer).
    """
    if probes.task not in GOLD_FIELD:
        raise InvalidArgumentError(
            f"UD-EWT has no {probes.task} labels to choose the layer on: give the layer "
            f"(--layer; saved: {', '.join(map(str, probes.layers))})."
        )
    sents = list(itertools.islice(sentences, n_dev))
    field = GOLD_FIELD[probes.task]
    encs = encoder.encode([s.words for s in sents], windowed=True)
    gold = np.concatenate([np.asarray(s.labels[field], str) for s in sents])
    out = {}
    for layer in probes.layers:
        X = np.concatenate([e.layers[layer] for e in encs]).astype(np.float16).astype(np.float32)
        out[layer] = float(np.mean(probes.predict(layer, X) == gold))
    return out


def best_layer(accuracy: dict[int, float]) -> int:
    """The most accurate layer, the lower one on ties."""
    return min(accuracy, key=lambda la: (-accuracy[la], la))


def study_cases(
    encoder: TransformersEncoder,
    sentences: Iterable,
    probes: SavedProbes,
    layer: int,
    n: int = 50,
    seed: int = 0,
) -> tuple[list[ProbeCase], list[str], list[str]]:
    """The first ``n`` cases by the rule above: cases, their ``sent_id`` and gold labels."""
    field = GOLD_FIELD.get(probes.task, probes.task)
    cases: list[ProbeCase] = []
    ids: list[str] = []
    gold: list[str] = []
    for i, s in enumerate(sentences):
        if len(cases) >= n:
            break
        if not MIN_WORDS <= len(s.words) <= MAX_WORDS:
            continue
        alpha = [k for k, w in enumerate(s.words) if w.isalpha()]
        if not alpha:
            continue
        k = alpha[int(np.random.default_rng([seed, i]).integers(len(alpha)))]
        cases.append(prepare_probe_case(encoder, s.words, k, probes, layer))
        ids.append(s.sent_id)
        gold.append(str(s.labels[field][k]) if field in s.labels else "")
    return cases, ids, gold


def run_probe_study(
    encoder: TransformersEncoder,
    cases: Sequence[ProbeCase],
    sent_ids: Sequence[str],
    gold: Sequence[str],
    *,
    steps: int = DEFAULT_STEPS,
    n_random: int = 10,
    seed: int = 0,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[StudyRows, StudyRows]:
    """Score every case with every method and measure the curves in two scopes: ``all``
    (every word ranked and removed, the probed word too) and ``context`` (the probed word
    kept, the other words ranked and removed). Returns the ``all`` rows (with IG's
    completeness per case and baseline in ``ig``) and the ``context`` rows."""
    out = StudyRows()
    context: list[dict] = []
    for c, (case, sid, g) in enumerate(zip(cases, sent_ids, gold, strict=True)):
        key = {
            "case": c,
            "sent_id": sid,
            "word_index": case.word,
            "word": case.words[case.word],
            "layer": case.layer,
            "label": case.label,
            "gold": g,
            "n_words": len(case.words),
        }
        scores: dict[str, np.ndarray] = {}
        for name, baseline in (
            ("integrated_gradients", "mask"),
            ("integrated_gradients_pad", "pad"),
        ):
            ig = probe_integrated_gradients(encoder, case, baseline=baseline, steps=steps)
            scores[name] = ig.words
            out.ig.append(
                {
                    **key,
                    "baseline": baseline,
                    "f_input": ig.f_input,
                    "f_baseline": ig.f_baseline,
                    "delta": ig.delta,
                    "relative_delta": ig.relative_delta,
                    "own_word_share": _own_share(ig.words, case.word),
                }
            )
        scores["gradient_x_input"] = case.to_words(probe_gradient_x_input(encoder, case))
        for scope, rows, keep in (("all", out.curves, None), ("context", context, case.word)):
            for method, s in scores.items():
                order = importance_order(s, keep=keep)
                row = _curve_row(
                    {**key, "scope": scope}, method, [probe_curves(encoder, case, order)]
                )
                rows.append({**row, "ranks_own_word_first": order[0] == case.word})
            rng = np.random.default_rng([seed, c])
            cvs = random_probe_curves(encoder, case, n_random, rng, keep=keep)
            rows.append(_curve_row({**key, "scope": scope}, "random", cvs))
        if progress is not None:
            progress(c + 1, len(cases))
    return out, StudyRows(curves=context)


def _own_share(words: np.ndarray, word: int) -> float:
    """The probed word's share of the total absolute attribution."""
    total = float(np.abs(words).sum())
    return float(abs(words[word]) / total) if total > 0 else float("nan")
