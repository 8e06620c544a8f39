"""ELMo's forward and backward halves vs BERT's fused context, for one typed word."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from probing import config
from probing.analyses.elmo_directions import occurrence_similarity
from probing.figures.course import direction_lines
from ui.common import friendly_errors, get_encoder
from ui.state import persist

RESULTS = config.results_dir() / "elmo-mini__semcor__wsd-direction.csv"


def layer0_note(table: pd.DataFrame) -> str:
    """What layer 0 is for each model drawn, with the word's similarity there (rows of
    :func:`probing.analyses.elmo_directions.occurrence_similarity`)."""
    notes = []
    for model, rows in table[table["layer"] == 0].groupby("model", sort=False):
        sim = float(rows["similarity"].max())
        if set(rows["view"]) == {"fused"}:  # the BERT family
            where = (
                f"the word at two positions differs there already ({sim:.3f})"
                if sim < 0.9995
                else f"here the word has the same position in both sentences ({sim:.3f})"
            )
            notes.append(
                f"{model}'s layer 0 is the word-piece embedding plus position (and, where the "
                f"model has them, segment) embeddings, so it is not context-free: {where}."
            )
        else:
            notes.append(
                f"{model}'s layer 0 is its character-CNN token vector: context-free, the same "
                f"for the same word in any sentence ({sim:.3f})."
            )
    return " ".join(notes)


def render(models: list[str]) -> None:
    """The directions section: ELMo-mini's halves next to the first picked BERT-family model."""
    st.subheader("ELMo's two one-way LMs vs BERT's fused context")
    st.caption(
        "ELMo's layers are [forward LSTM ; backward LSTM]: at a word, the forward half has read "
        "only the words before it, the backward half only those after it. BERT attends to both "
        "sides in every layer. Put the disambiguating word on one side only and compare."
    )
    a, b, c = st.columns([1, 3, 3])
    limit = config.limits().max_chars
    target = a.text_input("Word", key=persist("dir_target", "bank", "dir_word"), max_chars=40)
    s1 = b.text_input(
        "Sentence 1",
        key=persist("dir_s1", "I sat on the bank of the river", "dir_s1"),
        max_chars=limit,
    )
    s2 = c.text_input(
        "Sentence 2", key=persist("dir_s2", "The river bank was muddy", "dir_s2"), max_chars=limit
    )
    elmo_name = next((m for m in models if m.startswith("elmo")), "elmo-mini")
    bert_name = next((m for m in models if not m.startswith("elmo")), "minilm-l6")
    tables = []
    with friendly_errors("The direction view"):
        for name in (elmo_name, bert_name):
            encoder = get_encoder(name)
            if encoder is not None:
                tables.append(occurrence_similarity(encoder, target, s1, s2))
    if tables:
        st.plotly_chart(direction_lines(pd.concat(tables), target), key="dir-lines")
        st.caption(
            layer0_note(pd.concat(tables))
            + " In “I sat on the bank of the river” the forward half at *bank* has not yet read "
            "*river*."
        )
    if RESULTS.is_file():
        table = pd.read_csv(RESULTS)
        f1 = table[table["metric"] == "f1"].pivot(
            index="layer", columns="direction", values="value"
        )
        st.markdown("**SemCor WSD (1-NN to sense centroids), F1 by layer and direction**")
        st.dataframe(f1.round(3), key="dir-wsd")
        st.caption(
            "Intervals in results/elmo-mini__semcor__wsd-direction.json; method in docs/methods.md."
        )
