"""The report's language-model parts, for a model with a masked-LM head.

- ``cloze``: fill-mask cloze accuracy. In UD-EWT sentences ``mask_rate`` of the words that the
  model reads as one vocabulary piece (and that hold a letter) are masked together, seeded;
  the MLM head is read at every layer (the logit lens; the last row is the model's own
  prediction) and scored top-1 against the masked word (top-5 at the last layer too).
- ``agreement``: subject–verb agreement on UD-EWT's own sentences
  (:mod:`probing.interventions.agreement`): the masked verb's two forms compared (ELMo: its
  forward LM on the left context), overall, by attractors and by distance.
- ``tuned-lens``: translators trained as :mod:`probing.analyses.tuned_lens` trains them (on
  Brown dev sentences, held out from UD-EWT), then read on UD-EWT sentences, one mask each:
  KL to the final distribution per layer under the logit and the tuned lens.

Each part keeps its per-sentence values (``per_sentence``), from which its intervals and its
paired comparisons come: sentence-bootstrap replicates shared by every layer (and by both
lenses), :func:`probing.probes.compare.compare` per pair and Holm over the part's table.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from probing.analyses.cloze import (
    interval,
    ratio_draws,
    run_cloze,
    sentence_picks,
    table,
)
from probing.probes.compare import Difference, Replicates, compare

if TYPE_CHECKING:
    import plotly.graph_objects as go

    from probing.encoders.base import Encoder
    from probing.report.parts import Progress

LM_PARTS = ("cloze", "tuned-lens", "agreement")
TITLES = {
    "cloze": "Fill-mask cloze accuracy by layer (MLM head as a logit lens, UD-EWT)",
    "tuned-lens": "Tuned lens vs logit lens (Belrose et al. 2023)",
    "agreement": "Subject–verb agreement on UD-EWT (Linzen et al. 2016; Goldberg 2019)",
}
METHODS = {
    "cloze": (
        "In {n_sentences} UD-EWT {split} sentences (evenly spread), {mask_pct:.0f} % of the "
        "words the model reads as one vocabulary piece and that contain a letter were masked "
        "together (at least one per sentence, seeded; {n_masks} masks). The model's MLM head "
        "was applied to every layer's state at the masks (the logit lens; the last layer is "
        "the model's own prediction) and scored by top-1 accuracy against the masked word; "
        "top-5 at the last layer is given beside it. Intervals: 95 % percentile, "
        "{n_boot} bootstrap draws over sentences shared by all layers; each layer is compared "
        "with the last in pairs on the same draws, Holm over the table."
    ),
    "tuned-lens": (
        "Affine translators, one per layer, were trained as in Belrose et al. (2023) with "
        "this project's procedure (ridge least-squares start, then {steps} Adam steps on "
        "KL(p_final ‖ p_lens), the head frozen) on masked words of {n_train} Brown "
        "{train_split} sentences; then one word per sentence of {n_eval} UD-EWT {eval_split} "
        "sentences was masked (seeded; {n_masks} read) and KL to the final distribution "
        "measured per layer under both lenses. Intervals: 95 % percentile, {n_boot} "
        "bootstrap draws over sentences, shared by both lenses (paired); tuned minus logit "
        "per layer, Holm over the layers."
    ),
    "agreement": (
        "Present-tense verbs (VBZ/VBP) of {n_candidates} UD-EWT {split} cases (evenly spread) "
        "whose subject is a third-person word with a Number feature; {n_cases} kept where "
        "both verb forms are single units of the model's vocabulary (Goldberg's rule). "
        "{setting} A case is "
        "right when the correct form outscores the other. Accuracy overall, by attractors "
        "(nouns of the other number between subject and verb) and by distance, with 95 % "
        "intervals from {n_boot} bootstrap draws over sentences."
    ),
}
AGREEMENT_SETTING = {
    "masked": "The verb was masked and the MLM head's two logits compared, both contexts seen.",
    "left": "The forward LM read the sentence up to the verb (Linzen et al.'s setting) and "
    "its log-probabilities of the two forms were compared.",
}
LIMITS = {
    "cloze": (
        "What the intervals do not support: the head was trained on the last layer's "
        "states, so an earlier layer's accuracy under it measures how far that layer is from "
        "the head's basis as much as what the layer holds (the tuned lens part reads layers "
        "through translators instead); only words of one piece are masked, and accuracy on "
        "this sample says nothing of other text."
    ),
    "tuned-lens": (
        "What the intervals do not support: the translators were trained on a few hundred "
        "sentences for a few minutes at most, so a layer where the two lenses are not told "
        "apart may change with a better-trained lens; KL to the final distribution says how "
        "close a layer's reading is to the model's answer, not whether the answer is right."
    ),
    "agreement": (
        "What the intervals do not support: groups with few cases (many attractors, long "
        "distances) have wide intervals and are not compared with each other here; the "
        "cases are UD-EWT's own sentences, so the subject's number and the attractors are "
        "confounded with everything else in them."
    ),
}


# -- tuned lens ------------------------------------------------------------------------------


def run_tuned_lens(
    encoder: Encoder, settings: dict[str, Any], progress: Progress
) -> tuple[dict[str, Any], str]:
    """Train translators, then read both lenses per layer (module doc)."""
    from probing.analyses.attention import sample_sentences
    from probing.analyses.tuned_lens import (
        lensable,
        masked_parts,
        read_masks,
        train_tuned_lens,
    )
    from probing.errors import InputTooLongError, InvalidArgumentError

    mlm = lensable(encoder)
    train = sample_sentences(
        settings["train_dataset"], settings["train_split"], n=settings["n_train"]
    )
    source = f"{settings['train_dataset']} {settings['train_split']}, {len(train)} sentences"
    lens = train_tuned_lens(encoder, train, settings["steps"], settings["seed"], source, progress)
    evaluation = sample_sentences("ud-ewt", settings["eval_split"], n=settings["n_eval"])
    rng = np.random.default_rng(settings["seed"])
    logit_kl, tuned_kl = [], []
    for done, words in enumerate(evaluation, start=1):
        words = list(words)
        if len(words) >= 2:
            try:
                masked = mlm.tokenize_masked(masked_parts(words, [int(rng.integers(len(words)))]))
            except InputTooLongError:
                masked = None
            if masked is not None:
                r = read_masks(encoder, masked, lens)
                logit_kl.append(r.logit_kl[:, 0])
                tuned_kl.append(r.tuned_kl[:, 0])
        if done % 25 == 0 or done == len(evaluation):
            progress("lens readout", done, len(evaluation))
    if not logit_kl:
        raise InvalidArgumentError("no UD-EWT sentence could be read through the lenses")
    lk, tk = np.stack(logit_kl).astype(float), np.stack(tuned_kl).astype(float)  # (n, L+1)
    ones = np.ones(len(lk))
    picks = sentence_picks(len(lk), settings["n_boot"], settings["seed"])
    d_logit, d_tuned = ratio_draws(lk, ones, picks), ratio_draws(tk, ones, picks)
    names = list(encoder.info.layer_names)
    n_rows = lk.shape[1]
    names = names if len(names) == n_rows else [f"layer {i}" for i in range(n_rows)]
    # The last layer's translator is the identity: both lenses read it alike.
    diffs = [
        compare(
            Replicates(f"tuned lens, layer {i}", [tk[:, i].mean()], d_tuned[None, :, i], "lens"),
            Replicates(f"logit lens, layer {i}", [lk[:, i].mean()], d_logit[None, :, i], "lens"),
            settings["seed"],
        )
        for i in range(n_rows - 1)
    ]
    payload = {
        "model": encoder.info.name,
        "layer_names": names,
        "n_masks": len(lk),
        "kl_logit": lk.mean(0).round(6).tolist(),
        "kl_logit_ci": list(interval(d_logit)),
        "kl_tuned": tk.mean(0).round(6).tolist(),
        "kl_tuned_ci": list(interval(d_tuned)),
        "training": lens.meta,
        "per_sentence": {"kl_logit": lk.round(5).tolist(), "kl_tuned": tk.round(5).tolist()},
        "comparisons": table(diffs),
    }
    rows = pd.DataFrame(
        {
            "layer": range(n_rows),
            "name": names,
            "kl_logit": lk.mean(0),
            "kl_tuned": tk.mean(0),
        }
    )
    return payload, rows.to_csv(index=False, float_format="%.6g")


# -- agreement -----------------------------------------------------------------------------


def run_agreement(
    encoder: Encoder, settings: dict[str, Any], progress: Progress
) -> tuple[dict[str, Any], str]:
    """Agreement accuracy on UD-EWT cases (:mod:`probing.interventions.agreement`)."""
    from probing.errors import InvalidArgumentError
    from probing.interventions.agreement import margins, prepare, summary, ud_cases

    progress("cases", 0, 3)
    cases = ud_cases((settings["split"],))
    if len(cases) > settings["n_cases"]:
        picks = np.linspace(0, len(cases) - 1, settings["n_cases"]).round().astype(int)
        cases = [cases[i] for i in picks]
    progress("cases", 1, 3)
    prepared = prepare(encoder, cases)
    if not prepared.kept:
        raise InvalidArgumentError(
            f"no agreement case has both verb forms as single pieces of {encoder.info.name}"
        )
    correct = margins(encoder, prepared) > 0
    progress("cases", 2, 3)
    rows = summary(cases, prepared.kept, correct, settings["n_boot"])
    kept = [cases[i] for i in prepared.kept]
    payload = {
        "model": encoder.info.name,
        "n_candidates": len(cases),
        "n_cases": len(kept),
        "setting": "left" if encoder.info.lm_directions else "masked",
        "rows": [
            {k: (round(v, 6) if isinstance(v, float) else v) for k, v in r.items()} for r in rows
        ],
        "per_case": {
            "correct": correct.astype(int).tolist(),
            "attractors": [c.attractors for c in kept],
            "distance": [c.distance for c in kept],
            "group": [c.group for c in kept],
        },
    }
    progress("cases", 3, 3)
    return payload, pd.DataFrame(rows).to_csv(index=False, float_format="%.6g")


def run_part(
    name: str, encoder: Encoder, settings: dict[str, Any], progress: Progress
) -> tuple[dict[str, Any], str]:
    if name == "agreement":
        return run_agreement(encoder, settings, progress)
    if name == "cloze":
        return run_cloze(encoder, settings, progress)
    if name == "tuned-lens":
        return run_tuned_lens(encoder, settings, progress)
    raise ValueError(name)


# -- the page -----------------------------------------------------------------------------


def figure(name: str, payload: dict[str, Any]) -> go.Figure:
    from probing.figures.lm_report import agreement_figure, cloze_figure, lens_figure

    drawn = {"cloze": cloze_figure, "tuned-lens": lens_figure, "agreement": agreement_figure}
    return drawn[name](payload)


def _list(names: list[str]) -> str:
    return ", ".join(names)


def _called_layers(
    rows: list[Difference], up: str, down: str, tie: str, *, down_first: bool = False
) -> str:
    """The layers (each row's ``b``) the engine calls up, calls down and does not call, each
    group worded by its template ("{}": the layers) and left out when empty."""
    layer = lambda d: d.b.split()[-1]  # noqa: E731
    ups = [layer(d) for d in rows if d.called and d.value > 0]
    downs = [layer(d) for d in rows if d.called and d.value < 0]
    groups = [(down, downs), (up, ups)] if down_first else [(up, ups), (down, downs)]
    groups.append((tie, [layer(d) for d in rows if not d.called]))
    return "; ".join(text.format(_list(names)) for text, names in groups if names)


def claims(name: str, payload: dict[str, Any]) -> list[str]:
    """The sentence written from the part's comparison table: which comparisons the
    engine calls (Holm-adjusted p < 0.05, the interval off zero), which it does not."""
    # agreement: its groups are not compared, so it has no sentence
    rows = [Difference.from_dict(r) for r in (payload.get("comparisons") or {}).get("rows", [])]
    if not rows:
        return []
    if name == "cloze":
        last = rows[0].a.split()[-1]
        said = _called_layers(
            rows, "above layers {}", "below layers {}", "not distinguishable from layers {}"
        )
        return [
            f"Paired comparisons of top-1 cloze accuracy: the head read at the last layer "
            f"({last}) is {said} (bootstrap over sentences, Holm over "
            f"{len(rows)} comparisons)."
        ]
    said = _called_layers(
        rows,
        "higher under the tuned lens at layers {}",
        "lower under the tuned lens at layers {}",
        "not distinguishable at layers {}",
        down_first=True,
    )
    return [
        "Paired comparisons of KL to the final distribution, tuned minus logit lens: "
        f"{said} (bootstrap over sentences, Holm over {len(rows)} layers)."
    ]


def method(name: str, settings: dict[str, Any], payload: dict[str, Any]) -> str:
    if name == "agreement":
        return METHODS[name].format(
            n_candidates=payload["n_candidates"],
            split=settings["split"],
            n_cases=payload["n_cases"],
            setting=AGREEMENT_SETTING[payload["setting"]],
            n_boot=settings["n_boot"],
        )
    if name == "cloze":
        return METHODS[name].format(
            n_sentences=payload["n_sentences"],
            split=settings["split"],
            mask_pct=100 * settings["mask_rate"],
            n_masks=payload["n_masks"],
            n_boot=settings["n_boot"],
        )
    return METHODS[name].format(
        steps=settings["steps"],
        n_train=payload["training"].get("n_sentences", settings["n_train"]),
        train_split=settings["train_split"],
        n_eval=settings["n_eval"],
        eval_split=settings["eval_split"],
        n_masks=payload["n_masks"],
        n_boot=settings["n_boot"],
    )


def limits(name: str) -> str:
    return LIMITS[name]
