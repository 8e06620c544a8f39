"""ELMo's forward and backward halves vs BERT's fused context, for one typed word."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from probing import config
from probing.analyses.elmo_directions import occurrence_similarity
from probing.figures.course import direction_lines
from ui.common import friendly_errors, get_encoder
from ui.state import persist

RESULTS = config.REPO_ROOT / "results" / "elmo-mini__semcor__wsd-direction.csv"


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
            "Layer 0 is context-free (similarity 1 for the same word). In “I sat on the bank "
            "of the river” the forward half at *bank* has not yet read *river*."
        )
    if RESULTS.is_file():
        table = pd.read_csv(RESULTS)
        f1 = table[table["metric"] == "f1"].pivot(
            index="layer", columns="direction", values="value"
        )
        st.markdown("**SemCor WSD (1-NN to sense centroids), F1 by layer and direction**")
        st.dataframe(f1.round(3), key="dir-wsd")
        st.caption("Intervals in docs/results.md.")
