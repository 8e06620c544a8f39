"""Sentence vectors: [CLS], mean, attention-weighted and max pooling, per layer, side by side;
and the Brown genre probe per layer × pooling from ``results/``."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
import streamlit as st

from probing import config
from probing.figures.course import pooling_curves, similarity_heatmap
from probing.probes.results import ProbeResults
from probing.probes.sentence_pooling import (
    ELMO_NO_CLS,
    STRATEGIES,
    pooled_similarities,
    strategies_for,
)
from ui.common import friendly_errors, get_encoder
from ui.state import persist

EXAMPLE = "\n".join(
    [
        "The bank raised its interest rates again.",
        "Investors worried about the central bank's decision.",
        "We had a picnic on the grassy river bank.",
        "Children were fishing from the bank of the stream.",
    ]
)
RESULTS_DIR = config.results_dir()


def genre_curves(model: str) -> dict[str, pd.DataFrame]:
    """{strategy: per-layer accuracy rows} of the committed genre runs of ``model``."""
    curves = {}
    for strategy in STRATEGIES:
        path = RESULTS_DIR / f"{model}__brown__genre-{strategy}.json"
        if path.is_file():
            curves[strategy] = ProbeResults.from_json(path).layer_scores("accuracy")
    return curves


MAX_SENTENCES = 8  # a sentence-by-sentence matrix stays readable up to about eight


def kept_note(n_typed: int, models: list[str], name: str) -> None:
    """Say what the section leaves out: lines past the eighth, a second picked model."""
    notes = []
    if n_typed > MAX_SENTENCES:
        notes.append(f"Only the first {MAX_SENTENCES} of your {n_typed} sentences are used.")
    if len(models) > 1:
        notes.append(
            f"This section shows the first picked model, {name}; "
            f"{', '.join(models[1:])} is left out here."
        )
    if notes:
        st.info(" ".join(notes))


# What each strategy's matrix is made from (the caption lists the ones the model offers).
POOLING_WAYS = {
    "cls": "the [CLS] state",
    "mean": "the mean over the word pieces (special tokens left out)",
    "attention": "a mean weighted by the attention [CLS] pays to each piece in that layer",
    "max": "the element-wise maximum over the pieces",
}
NUMBERS = {1: "One way", 2: "Two ways", 3: "Three ways", 4: "Four ways"}


def pooling_note(strategies: Sequence[str]) -> str:
    """The caption over the matrices: as many ways as are drawn, each said."""
    ways = [POOLING_WAYS[s] for s in strategies]
    listed = "; ".join(ways[:-1]) + f"; or {ways[-1]}" if len(ways) > 1 else ways[0]
    return (
        f"{NUMBERS.get(len(ways), f'{len(ways)} ways')} to get one vector per sentence: "
        f"{listed}. Each matrix is the cosine similarity between your sentences (colour bar: "
        "−1 to 1, the same for every matrix)."
    )


def render(models: list[str]) -> None:
    """The sentence-pooling section for the first picked model (of ``models``)."""
    st.subheader("Sentence vectors: [CLS], mean, attention or max pooling")
    text = st.text_area(
        "Sentences, one per line",
        key=persist("pool_sentences", EXAMPLE, "pool_sentences"),
        height=120,
        max_chars=config.limits().max_chars,
        help=f"The first {MAX_SENTENCES} non-empty lines are used.",
    )
    typed = [s.strip() for s in text.splitlines() if s.strip()]
    sentences = typed[:MAX_SENTENCES]
    if len(sentences) < 2:
        st.warning("Give at least two sentences, one per line.")
        return
    name = models[0] if models else "minilm-l6"
    kept_note(len(typed), models, name)
    encoder = get_encoder(name)
    if encoder is None:
        return
    st.caption(pooling_note(strategies_for(encoder.info)))
    if not encoder.info.has_cls_token:
        st.info(ELMO_NO_CLS)
    with friendly_errors("Sentence pooling"):
        sims = pooled_similarities(encoder, sentences)
        n_layers = next(iter(sims.values())).shape[0]
        names = encoder.info.layer_names or tuple(str(i) for i in range(n_layers))
        layer = st.select_slider(
            "Layer",
            options=list(range(n_layers)),
            format_func=lambda i: names[i],
            key=persist(
                "pool_layer", n_layers - 1, "pool_layer", int, range(n_layers).__contains__
            ),
        )
        # Two per row: four side by side left each map ~60 px wide with its labels clipped.
        cols = [c for _ in range(0, len(sims), 2) for c in st.columns(2)]
        for col, (strategy, mats) in zip(cols, sims.items(), strict=False):
            col.plotly_chart(
                similarity_heatmap(mats[layer], sentences, f"{name} · {strategy} · {names[layer]}"),
                key=f"pool-{strategy}",
            )
    curves = genre_curves(name)
    if curves:
        st.plotly_chart(
            pooling_curves(curves, f"{name}: Brown genre (15 classes) by layer × pooling"),
            key="pool-genre",
        )
        st.caption(
            "Linear probe on pooled sentence vectors, test split (whole Brown documents held "
            "out); bars: 95 % bootstrap intervals over test documents. Offered strategies: "
            + ", ".join(strategies_for(encoder.info))
            + ". Method: docs/methods.md; numbers: results/*__brown__genre-*.json."
        )
    else:
        st.caption(
            f"No genre-probe results for {name} in results/; run `python -m probing probe "
            f"--model {name} --task genre --dataset brown`."
        )
