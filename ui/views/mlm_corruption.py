"""The MLM corruption recipe on the Fill Mask page: mask, replace or keep the target."""

from __future__ import annotations

import streamlit as st

from probing import config
from probing.analyses.mlm_corruption import MODES, RECIPE, corrupt_and_predict
from probing.figures.fill_mask import topk_bar
from ui.common import friendly_errors, get_encoder
from ui.state import as_bool, persist

LABELS = {"mask": "[MASK] (80 %)", "random": "random word (10 %)", "keep": "kept (10 %)"}


def render(models: list[str]) -> None:
    """The corruption section for the first model of ``models`` (one with an MLM head)."""
    st.markdown("#### BERT's corruption recipe: 80 % [MASK], 10 % random, 10 % kept")
    if not st.toggle(
        "Show what the model predicts at a masked, replaced or kept word",
        key=persist("corrupt_on", False, "corrupt", as_bool),
    ):
        return
    st.caption(
        "BERT picks 15 % of positions to predict, but [MASK] never appears after pre-training: "
        "so 10 % of the picks get a random word and 10 % keep their word, and the model must "
        "give a distribution at every position. Here: what it predicts at the target in each case."
    )
    limit = config.limits().max_chars
    a, b = st.columns([3, 1])
    text = a.text_input(
        "Sentence",
        key=persist(
            "corrupt_text", "The doctor picked up her bag and left the room.", "corrupt_text"
        ),
        max_chars=limit,
    )
    target = b.text_input(
        "Target word", key=persist("corrupt_target", "bag", "corrupt_word"), max_chars=40
    )
    name = models[0] if models else "minilm-l6-mlm"
    encoder = get_encoder(name)
    if encoder is None:
        return
    cols = st.columns(len(MODES))
    with friendly_errors("The corruption view"):
        for col, mode in zip(cols, MODES, strict=True):
            res = corrupt_and_predict(encoder, text, target, mode, top_k=8)
            with col:
                st.markdown(f"**{LABELS[mode]}** · the model reads “{res.shown}”")
                st.plotly_chart(topk_bar(res.prediction), key=f"corrupt-{mode}")
                st.caption(
                    f"P(“{target}”) = {res.target_probability:.1%}, rank {res.target_rank}"
                    f" · share in pre-training {RECIPE[mode]:.0%}"
                )
