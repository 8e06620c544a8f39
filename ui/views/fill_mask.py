"""What a masked-language model guesses for each [MASK], and at which layer it knows."""

from __future__ import annotations

import streamlit as st

from probing import config
from probing.analyses.fill_mask import (
    DEFAULT_MAX_MASKS,
    EXAMPLE,
    check_text,
    fill_mask,
    fill_mask_by_layer,
    prepare,
)
from probing.errors import EmptyInputError, NoMaskError, TooManyMasksError
from probing.figures.fill_mask import final_rank_line, layer_heatmap, mask_label, topk_bar
from probing.models.registry import entry
from ui.common import (
    friendly_errors,
    get_encoder,
    md_text,
    model_picker,
    page_header,
    provenance_card,
)
from ui.views import mlm_corruption

FILL_MASK_MODEL = "minilm-l6-mlm"  # the embedded model with a head: works offline

LAYER_TOP_K = 5  # columns of the layer-by-layer heatmap


def _lacks_head(name: str) -> bool:
    """Registry models known to have no MLM head (decided without loading them)."""
    e = entry(name)
    return e is not None and not e.has_mlm_head


def render() -> None:
    """Draw the page (everything below the page config)."""
    page_header(
        "Fill Mask",
        "Type a sentence with [MASK] where a word is missing: the model's top guesses, side by "
        "side for two models, and layer by layer how the guess forms.",
    )

    def _use_fill_mask_model() -> None:
        """Button callback: swap the head-less picks in the shared sidebar selection."""
        picked = [n for n in st.session_state.get("models", []) if not _lacks_head(n)]
        st.session_state["models"] = [FILL_MASK_MODEL] + [
            n for n in picked if n != FILL_MASK_MODEL
        ][:1]

    def no_head_message(names: list[str]) -> str:
        verb = "has" if len(names) == 1 else "have"
        return (
            f"**{', '.join(names)}** {verb} no masked-language-model head, so cannot fill masks. "
            f"**{FILL_MASK_MODEL}** is the same embedded encoder with a head trained by ContextLens."
        )

    # Streamlit drops a widget's value when another page's script renders it; writing the value
    # back before the picker is drawn keeps the sidebar choice made on the other pages.
    if "models" in st.session_state:
        st.session_state["models"] = st.session_state["models"]

    names = model_picker(default=[FILL_MASK_MODEL])

    headless = [n for n in names if _lacks_head(n)]

    models = [n for n in names if n not in headless]

    if headless:
        st.info(
            no_head_message(headless)
            + (
                " Pick it in the sidebar to compare."
                if models
                # Nothing picked can fill masks (e.g. the app-wide default minilm-l6): use the
                # embedded fill-mask model rather than showing an empty page, and say so.
                else " This page uses it instead; pick a model with a head in the sidebar "
                "(bert-base-uncased, roberta-base, …) to compare two."
            )
        )
        st.button(f"Use {FILL_MASK_MODEL} in the sidebar", on_click=_use_fill_mask_model)
    elif not models:
        st.caption(f"No model picked in the sidebar; using {FILL_MASK_MODEL}.")

    models = models or [FILL_MASK_MODEL]

    text = st.text_area(
        "Text",
        value=EXAMPLE,
        key="fill_mask_text",
        height=80,
        max_chars=config.limits().max_chars,
        help=f"Up to {DEFAULT_MAX_MASKS} masks. [MASK], [mask] and <mask> all work; each model "
        "gets its own mask token. Press Ctrl+Enter to apply.",
    )

    left, right = st.columns([2, 1])

    top_k = left.slider("Top-k", min_value=1, max_value=20, value=10, key="fill_mask_top_k")

    by_layer = right.toggle(
        "Layer by layer",
        value=True,
        key="fill_mask_layers",
        help="Apply the model's MLM head to every layer's hidden state at the mask.",
    )

    try:
        check_text(text, DEFAULT_MAX_MASKS)
    except (EmptyInputError, NoMaskError, TooManyMasksError) as exc:
        # Text problems are the same for every model: one message, no model work.
        st.warning(str(exc))
        st.stop()

    def show_model(name: str, side_by_side: bool) -> None:
        """One model's predictions: pieces, top-k bars per mask, the layer-by-layer view."""
        encoder = get_encoder(name)
        if encoder is None:  # get_encoder has shown why
            return
        if not encoder.info.has_mlm_head:
            st.info(no_head_message([name]))
            provenance_card(encoder)
            return
        with friendly_errors("Fill-mask"):
            masked = prepare(encoder, text)
            pieces = " ".join(
                f"**{md_text(p)}**" if i in masked.mask_positions else md_text(p)
                for i, p in enumerate(masked.pieces)
            )
            st.caption(f"What the model reads: {pieces}")
            predictions = fill_mask(encoder, text, top_k=top_k)
            # One model: masks next to each other; two models: each model's masks stacked.
            slots = (
                [st.container()] * len(predictions)
                if side_by_side
                else st.columns(len(predictions))
            )
            for slot, pred in zip(slots, predictions, strict=True):
                slot.plotly_chart(topk_bar(pred), key=f"bar-{name}-{pred.mask_index}")
            if by_layer:
                layers = fill_mask_by_layer(encoder, text, top_k=LAYER_TOP_K)
                st.markdown(
                    "**Layer by layer.** The MLM head applied to each layer's hidden state at the mask."
                )
                slots = (
                    [st.container()] * len(layers.masks)
                    if side_by_side
                    else st.columns(len(layers.masks))
                )
                for slot, mask in zip(slots, layers.masks, strict=True):
                    with slot:
                        label = mask_label(mask.mask_index, mask.word_index)
                        st.plotly_chart(
                            layer_heatmap(
                                mask,
                                layers.layer_names,
                                title=f"{label}: top {LAYER_TOP_K} per layer",
                            ),
                            key=f"heat-{name}-{mask.mask_index}",
                        )
                        st.plotly_chart(
                            final_rank_line(
                                mask,
                                layers.layer_names,
                                title=f"{label}: rank of “{mask.final_token}”",
                            ),
                            key=f"rank-{name}-{mask.mask_index}",
                        )
        provenance_card(encoder)

    columns = st.columns(len(models)) if len(models) > 1 else [st.container()]

    for column, name in zip(columns, models, strict=True):
        with column:
            st.subheader(name)
            show_model(name, side_by_side=len(models) > 1)

    st.caption(
        "Probabilities are over the whole vocabulary, so each mask's top-k sums to at most 100 %. "
        "All masks stay masked in one pass: each guess is made without knowing the others. "
        "“##ing” marks a piece that continues a word."
    )
    mlm_corruption.render(models)  # the 80/10/10 recipe (ui.views.mlm_corruption)
