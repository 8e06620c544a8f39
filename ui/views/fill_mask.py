"""What a masked-language model guesses for each [MASK], and at which layer it knows."""

from __future__ import annotations

import streamlit as st

import probing.analyses.token_track as token_track
from probing import config
from probing.analyses.fill_mask import (
    DEFAULT_MAX_MASKS,
    EXAMPLE,
    check_text,
    fill_mask,
    fill_mask_by_layer,
    piece_note,
    prepare,
)
from probing.errors import EmptyInputError, NoMaskError, TooManyMasksError
from probing.figures.fill_mask import final_rank_line, layer_heatmap, mask_label, topk_bar
from probing.figures.token_track import token_track_figure
from probing.models.registry import ENTRIES, entry, looks_like_hub_id
from ui.common import (
    friendly_errors,
    get_encoder,
    md_text,
    model_picker,
    page_header,
    provenance_card,
)
from ui.state import as_bool, persist
from ui.views import mlm_corruption
from ui.views.fill_mask_attribution import attribution_section
from ui.views.fill_mask_lens import lens_section

FILL_MASK_MODEL = "minilm-l6-mlm"  # the embedded model with a head: works offline
# Head-less encoders and the registry entry that is the same encoder with a head trained here.
HEADED_TWIN = {"minilm-l6": "minilm-l6-mlm", "mpnet-base": "mpnet-base-mlm"}

LAYER_TOP_K = 5  # columns of the layer-by-layer heatmap


def _lacks_head(name: str) -> bool:
    """Registry models known to have no MLM head (decided without loading them)."""
    e = entry(name)
    return e is not None and not e.has_mlm_head


def _use_fill_mask_model() -> None:
    """Button callback: swap the head-less picks in the shared sidebar selection."""
    picked = [n for n in st.session_state.get("models", []) if not _lacks_head(n)]
    st.session_state["models"] = [FILL_MASK_MODEL] + [n for n in picked if n != FILL_MASK_MODEL][:1]


def no_head_message(names: list[str]) -> str:
    """Why these models cannot fill masks, and which embedded model can (never a wrong
    relative: only minilm-l6 is the encoder under minilm-l6-mlm)."""
    parts = []
    for name in names:
        e = entry(name)
        if e is not None and e.info.objective == "bidirectional-lm":
            parts.append(
                f"**{name}** has no masked-language-model head: ELMo is a pair of language "
                "models that predict the next and the previous word, not a masked one."
            )
        elif name == "minilm-l6":
            parts.append(
                f"**{name}** has no masked-language-model head; **{FILL_MASK_MODEL}** is the "
                "same embedded encoder with a head trained by ContextLens."
            )
        elif e is not None and not e.embedded and e.info.objective == "masked":  # mpnet-base
            with_head = HEADED_TWIN.get(name)
            parts.append(
                f"**{name}** has no masked-language-model head: its checkpoint holds the "
                "encoder's weights only (its config names a masked-LM class, but a head "
                "ContextLens would have to initialise at random would guess nonsense)."
                + (
                    f" **{with_head}** is the same encoder with a head trained by ContextLens."
                    if with_head
                    else ""
                )
            )
        else:
            parts.append(f"**{name}** has no masked-language-model head, so cannot fill masks.")
    if not any(n == "minilm-l6" for n in names):
        parts.append(
            f"**{FILL_MASK_MODEL}** (the embedded MiniLM with a head trained by ContextLens) can."
        )
    return " ".join(parts)


def second_model_hint() -> str | None:
    """How to get a second fill-mask model when none but the embedded one can be had here."""
    from probing.models import hub

    # Hub checkpoints only (mpnet-base-mlm has a head but is fetched from the package index).
    hub_heads = [
        e
        for e in ENTRIES.values()
        if e.has_mlm_head and not e.embedded and looks_like_hub_id(e.source)
    ]
    if config.demo_mode():
        return None
    if any(hub.cached_snapshot(e.source) is not None for e in hub_heads) or not hub.hub_offline():
        return None
    return (
        f"To compare two fill-mask models: offline, only {FILL_MASK_MODEL} ships with a head. "
        f"{', '.join(e.name for e in hub_heads)} need the Hugging Face cache (run ContextLens "
        "once with internet access and pick one) or a downloaded model folder, given as "
        "“Other (hub id or local folder)” in the sidebar."
    )


def render() -> None:
    """Draw the page (everything below the page config)."""
    page_header(
        "Fill Mask",
        "Type a sentence with [MASK] where a word is missing: the model's top guesses, side by "
        "side for two models, and layer by layer how the guess forms.",
    )
    models = fill_mask_models()
    text, top_k, by_layer = mask_inputs()
    follow = follow_input() if by_layer else ""
    columns = st.columns(len(models)) if len(models) > 1 else [st.container()]
    notes: list[str] = []
    for column, name in zip(columns, models, strict=True):
        with column:
            st.subheader(name)
            note = show_model(
                name, text, top_k, by_layer, side_by_side=len(models) > 1, follow=follow
            )
            notes += [f"{name}: {note}."] if note else []
    st.caption(
        "Probabilities are over the whole vocabulary, so each mask's top-k sums to at most 100 %. "
        "All masks stay masked in one pass: each guess is made without knowing the others. "
        "Each model's pieces are shown as its own tokenizer writes them. " + " ".join(notes)
    )
    mlm_corruption.render(models)  # the 80/10/10 recipe (ui.views.mlm_corruption)


def fill_mask_models() -> list[str]:
    """The picked models that can fill masks; the embedded fill-mask model when none can."""
    # Streamlit drops a widget's value when another page's script renders it; writing the value
    # back before the picker is drawn keeps the sidebar choice made on the other pages.
    if "models" in st.session_state:
        st.session_state["models"] = st.session_state["models"]
    names = model_picker(default=[FILL_MASK_MODEL])
    headless = [n for n in names if _lacks_head(n)]
    models = [n for n in names if n not in headless]
    if headless:
        headless_notice(headless, models)
    elif not models:
        st.caption(f"No model picked in the sidebar; using {FILL_MASK_MODEL}.")
    if len(models) < 2 and (hint := second_model_hint()):
        st.caption(hint)
    return models or [FILL_MASK_MODEL]


def headless_notice(headless: list[str], models: list[str]) -> None:
    """Say which picks cannot fill masks; offer the embedded fill-mask model unless picked."""
    if FILL_MASK_MODEL in models:  # already picked (e.g. after "select all"): nothing to ask
        st.info(no_head_message(headless) + f" Shown: {', '.join(models)}.")
        return
    # Nothing picked can fill masks (e.g. the app-wide default minilm-l6): use the embedded
    # fill-mask model rather than showing an empty page, and say so.
    # Named, not "it": after a sentence about the refused model, "it" read as that model.
    then = (
        f" Pick {FILL_MASK_MODEL} in the sidebar to compare."
        if models
        else f" This page shows {FILL_MASK_MODEL} instead."
    )
    st.info(no_head_message(headless) + then)
    st.button(f"Use {FILL_MASK_MODEL} in the sidebar", on_click=_use_fill_mask_model)


def mask_inputs() -> tuple[str, int, bool]:
    """Text with masks, top-k and the layer-by-layer switch; stops on a text problem."""
    text = st.text_area(
        "Text",
        key=persist("fill_mask_text", EXAMPLE, param="sentence"),
        height=80,
        max_chars=config.limits().max_chars,
        help=f"Up to {DEFAULT_MAX_MASKS} masks. [MASK], [mask] and <mask> all work; each model "
        "gets its own mask token. Press Ctrl+Enter to apply.",
    )
    left, right = st.columns([2, 1])
    top_k = left.slider(
        "Top-k",
        min_value=1,
        max_value=20,
        key=persist("fill_mask_top_k", 10, "top_k", int, range(1, 21).__contains__),
    )
    by_layer = right.toggle(
        "Layer by layer",
        key=persist("fill_mask_layers", True, "by_layer", as_bool),
        help="Apply the model's MLM head to every layer's hidden state at the mask.",
    )
    try:
        check_text(text, DEFAULT_MAX_MASKS)
    except (EmptyInputError, NoMaskError, TooManyMasksError) as exc:
        # Text problems are the same for every model: one message, no model work.
        st.warning(str(exc))
        st.stop()
    return text, top_k, by_layer


def show_model(
    name: str, text: str, top_k: int, by_layer: bool, side_by_side: bool, follow: str = ""
) -> str:
    """One model's predictions: pieces, top-k bars per mask, the layer-by-layer view.
    Returns how to read its pieces ("" when it shows none)."""
    encoder = get_encoder(name)
    if encoder is None:  # get_encoder has shown why
        return ""
    if not encoder.info.has_mlm_head:
        st.info(no_head_message([name]))
        if encoder.info.no_mlm_head_reason:  # a config that names a head its weights lack
            st.caption(md_text(encoder.info.no_mlm_head_reason))
        provenance_card(encoder)
        return ""
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
            [st.container()] * len(predictions) if side_by_side else st.columns(len(predictions))
        )
        for slot, pred in zip(slots, predictions, strict=True):
            slot.plotly_chart(topk_bar(pred), key=f"bar-{name}-{pred.mask_index}")
        if by_layer:
            layer_by_layer(encoder, name, text, side_by_side)
            lens_section(encoder, name, text)
        attribution_section(encoder, name, text)  # issue 44: which words it used
        if by_layer and follow:
            followed_token(encoder, name, text, follow)
    provenance_card(encoder)
    return piece_note(encoder.info.piece_convention)


def layer_by_layer(encoder, name: str, text: str, side_by_side: bool) -> None:
    """Per mask: the top guesses at every layer and the rank of the final guess."""
    layers = fill_mask_by_layer(encoder, text, top_k=LAYER_TOP_K)
    st.markdown(
        "**Layer by layer.** The MLM head applied to each layer's hidden state at the mask."
    )
    slots = [st.container()] * len(layers.masks) if side_by_side else st.columns(len(layers.masks))
    for slot, mask in zip(slots, layers.masks, strict=True):
        with slot:
            label = mask_label(mask.mask_index, mask.word_index)
            st.plotly_chart(
                layer_heatmap(
                    mask, layers.layer_names, title=f"{label}: top {LAYER_TOP_K} per layer"
                ),
                key=f"heat-{name}-{mask.mask_index}",
            )
            st.plotly_chart(
                final_rank_line(
                    mask, layers.layer_names, title=f"{label}: rank of “{mask.final_token}”"
                ),
                key=f"rank-{name}-{mask.mask_index}",
            )


def follow_input() -> str:
    """A token to follow through the layers at every mask ("when does *paris* appear?")."""
    return st.text_input(
        "Follow a token across layers",
        key=persist("fill_mask_follow", "", "follow"),
        placeholder="e.g. paris",
        help="Its rank and probability at each mask, layer by layer (one word piece).",
    ).strip()


def followed_token(encoder, name: str, text: str, word: str) -> None:
    """The followed token's rank and probability per layer, one chart per mask."""
    with friendly_errors("Following the token"):
        track = token_track.follow_token(encoder, text, word)
        for m in range(track.rank.shape[0]):
            top = track.first_layer_in_top(m, 1)
            st.plotly_chart(
                token_track_figure(track, m, title=f"mask {m + 1}: “{track.token}” by layer"),
                key=f"follow-{name}-{m}",
            )
            st.caption(
                f"“{track.token}” at mask {m + 1}: rank {track.rank[m, -1]} and "
                f"{track.probability[m, -1]:.1%} at the last layer; "
                + ("never the top guess." if top is None else f"the top guess from layer {top} on.")
            )
