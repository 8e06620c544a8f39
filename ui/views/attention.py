"""Where each attention head looks: head view, model view, word-level maps, head statistics.

Widgets here, computation in ``probing.analyses.attention``, drawing in ``probing.figures.attention``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

import probing.figures.export as export
from probing import config
from probing.analyses.attention import (
    STATISTICS,
    AttentionMap,
    attention_frame,
    attention_view,
    encode_attention,
    head_statistics,
    supports_pairs,
)
from probing.analyses.params import AttentionStatsParams
from probing.analyses.registry import get as get_analysis
from probing.figures.attention import (
    attention_heatmap_figure,
    head_view_figure,
    model_view_figure,
    statistics_figure,
)
from probing.figures.export import figure_bytes
from probing.figures.head_view_html import head_view_height, head_view_html
from ui.common import (
    friendly_errors,
    get_encoder,
    load_model,
    model_picker,
    page_header,
    provenance_card,
)
from ui.jobs import heavy_job
from ui.settings_inputs import setting_number
from ui.state import all_of, as_bool, as_ints, as_strs, from_link, one_of, persist
from ui.views import attention_parsers
from ui.views.attention_weighting import (
    head_view_window,
    rollout_flow_view,
    weighted,
    weighting_choice,
    weighting_note,
)

if TYPE_CHECKING:
    from streamlit.delta_generator import DeltaGenerator

DEFAULT_TEXT = "The animal didn't cross the street because it was too tired."

CORPUS = ("ud-ewt", "dev")

# The model's piece limit rejects long inputs (InputTooLongError); these caps only stop a
# pasted book from being tokenised, and keep the shared demo's corpus runs short.


@st.cache_data(max_entries=8, show_spinner=False)
def piece_attention(model: str, text: str, text_b: str | None) -> AttentionMap:
    """Piece-level attention of the input; cached per (model, text) across reruns."""
    return encode_attention(load_model(model), text, text_b)


def downloads(
    fig: go.Figure, stem: str, key: str, table: Callable[[], pd.DataFrame] | None = None
) -> None:
    """PNG/SVG (or HTML when no Chrome is available) and CSV buttons under a figure.

    Files are made only when clicked (deferred ``data``): rendering a PNG starts a headless
    Chrome for seconds, which must not slow every rerun.
    """
    cols = st.columns([1, 1, 1, 5])
    if export.image_export_available():
        for col, fmt in zip(cols, ("png", "svg"), strict=False):
            col.download_button(
                fmt.upper(),
                data=lambda fmt=fmt: figure_bytes(fig, fmt),
                file_name=f"{stem}.{fmt}",
                mime="image/png" if fmt == "png" else "image/svg+xml",
                key=f"{key}_{fmt}",
                on_click="ignore",
                icon=":material/download:",
            )
    else:
        cols[0].download_button(
            "HTML",
            data=lambda: figure_bytes(fig, "html"),
            file_name=f"{stem}.html",
            mime="text/html",
            key=f"{key}_html",
            on_click="ignore",
            icon=":material/download:",
        )
        cols[3].caption(
            "PNG/SVG export needs a Chrome or Chromium for kaleido and none was found here, so "
            "the figure downloads as interactive HTML instead."
        )
    if table is not None:
        cols[2].download_button(
            "CSV",
            data=lambda: table().to_csv(index=False),
            file_name=f"{stem}.csv",
            mime="text/csv",
            key=f"{key}_csv",
            on_click="ignore",
            icon=":material/table:",
        )


@st.cache_resource(show_spinner=False)
def corpus_results() -> dict:
    """(model, sentences) -> HeadStatistics, shared by all sessions: a corpus run is the
    same for everyone, so it is computed once per server process."""
    return {}


def token_choice(label: str, view: AttentionMap, key: str) -> int | None:
    """A token of ``view`` (or None); a choice that no longer exists (the level or the input
    changed) falls back to None instead of pointing at another token."""
    options: list[int | None] = [None, *range(view.n_tokens)]
    if st.session_state.get(key) not in options:
        st.session_state[key] = None
    return st.selectbox(
        label,
        options,
        key=key,
        format_func=lambda i: "none" if i is None else f"#{i} {view.tokens[i]}",
    )


def _linked(param: str, k: str) -> str | None:
    """Only the first model's view is mirrored in the permalink."""
    return param if not k else None


ROLLED_HEAD = "rollout (heads averaged)"  # what rollout's one map per layer is, in the keys


def head_view(view: AttentionMap, stem: str, k: str = "", rolled: bool = False) -> None:
    """Layer, heads and focus token → the two-column line figure. ``rolled``: the map is a
    rollout, one map per layer (as head 0), so there is no head to pick."""

    def focus_from_click() -> None:
        """A click on a token marker adds it to the focus tokens, or takes it out (runs
        before the rerun)."""
        points = st.session_state[f"attn_head_chart{k}"].selection.points
        if points and points[0].get("customdata") is not None:
            data = points[0]["customdata"]
            token = int(data[0] if isinstance(data, list) else data)
            chosen = list(st.session_state.get(f"attn_focus{k}") or [])
            chosen = [t for t in chosen if t != token] if token in chosen else [*chosen, token]
            st.session_state[f"attn_focus{k}"] = chosen

    view = head_view_window(view, k)
    a, b, c = st.columns([1, 3, 2])
    layers = range(1, view.n_attention_layers + 1)
    layer = a.selectbox(
        "Layer",
        layers,
        key=persist(f"attn_hv_layer{k}", 1, _linked("layer", k), int, layers.__contains__),
    )
    heads = [0] if rolled else head_choice(view, b, k)
    if rolled:
        # The heads picked on the raw or norm-weighted maps are left as they are (the picker
        # is not drawn), so that going back finds them, not head 0.
        b.caption("Rollout: one map per layer, the heads averaged; no head to pick.")
    with c:
        in_view = lambda ts: all(t in range(view.n_tokens) for t in ts)  # noqa: E731
        focus = st.multiselect(
            "Focus tokens (attention summed; or click a token)",
            list(range(view.n_tokens)),
            format_func=lambda i: f"#{i} {view.tokens[i]}",
            key=persist(f"attn_focus{k}", [], _linked("focus", k), as_ints, in_view),
        )
    if not heads:
        st.info("Pick at least one head.")
        return
    names = [ROLLED_HEAD] if rolled else None
    embed_html(
        head_view_html(view, layer, heads, focus=focus, head_names=names), head_view_height(view)
    )
    fig = head_view_figure(view, layer, heads, focus=focus)
    with st.expander("As a figure (click a token to pin the focus; downloads)"):
        st.plotly_chart(
            fig,
            key=f"attn_head_chart{k}",
            on_select=focus_from_click,
            selection_mode="points",
            width="content",
            config={"displayModeBar": False},
        )
    downloads(
        fig,
        f"{stem}_head_view_L{layer}",
        f"dl_hv{k}",
        lambda: attention_frame(view, layers=[layer], heads=heads),
    )


def head_choice(view: AttentionMap, where: DeltaGenerator, k: str) -> list[int]:  # a column
    """The head view's heads, picked in ``where`` (kept in the permalink as ``heads``)."""
    # A link naming one head (?head=7, as the model view writes it) opens on that head.
    head = from_link("head", int) if not k else None
    first = [head] if head in range(view.n_heads) else list(range(min(4, view.n_heads)))
    return where.multiselect(
        "Heads (one colour each)",
        list(range(view.n_heads)),
        key=persist(
            f"attn_hv_heads{k}",
            first,
            _linked("heads", k),
            as_ints,
            lambda hs: bool(hs) and all(h in range(view.n_heads) for h in hs),
        ),
    )


def open_tile(k: str, n_heads: int, rolled: bool = False) -> None:
    """A click on a model-view tile opens that head below (runs before the rerun). The tile
    is found from the clicked marker's index (row-major: layer by layer, head by head); on a
    rollout grid (one tile a layer) only the layer changes."""
    points = st.session_state[f"attn_model_chart{k}"].selection.points
    point = points[0] if points else {}
    index = point.get("point_index", point.get("point_number"))
    if index is None or point.get("curve_number", 1) != 1:
        return
    layer, head = int(index) // n_heads + 1, int(index) % n_heads
    st.session_state[f"attn_mv_layer{k}"] = layer
    if not rolled:
        st.session_state[f"attn_mv_head{k}"] = head


def model_view(view: AttentionMap, stem: str, k: str = "", rolled: bool = False) -> None:
    """All layers × heads as tiles, and the chosen head large with its tokens (``rolled``:
    a rollout, one map per layer, so no head to pick)."""
    a, b, c = st.columns([1, 1, 2])
    layers, heads = range(1, view.n_attention_layers + 1), range(view.n_heads)
    layer = a.selectbox(
        "Layer",
        layers,
        key=persist(f"attn_mv_layer{k}", 1, _linked("layer", k), int, layers.__contains__),
    )
    if rolled:  # the head picked on the other maps stays as it is for when they come back
        head = 0
        b.caption("Rollout: one map per layer; no head to pick.")
    else:
        head = b.selectbox(
            "Head",
            heads,
            key=persist(f"attn_mv_head{k}", 0, _linked("head", k), int, heads.__contains__),
        )
    with c:
        persist(f"attn_mv_focus{k}", None, _linked("row", k), int)
        focus = token_choice("Highlight row", view, f"attn_mv_focus{k}")
    grid = model_view_figure(view, selected=(layer, head))
    st.plotly_chart(
        grid,
        key=f"attn_model_chart{k}",
        width="content",
        config={"displayModeBar": False},
        on_select=lambda: open_tile(k, view.n_heads, rolled),
        selection_mode="points",
    )
    downloads(grid, f"{stem}_model_view", f"dl_mv{k}", lambda: attention_frame(view))
    big = attention_heatmap_figure(view, layer, head, focus=focus)
    st.plotly_chart(big, key=f"attn_head_heatmap{k}", width="content")
    downloads(
        big,
        f"{stem}_L{layer}_H{head}",
        f"dl_big{k}",
        lambda: attention_frame(view, [layer], [head]),
    )


def render() -> None:
    """Draw the page (everything below the page config)."""
    page_header(
        "Attention",
        "Where each attention head of a BERT-family encoder looks: lines per head, all heads at "
        "once, word-level maps, and Clark et al.'s (2019) head statistics.",
    )
    models = attention_models()
    text, text_b = attention_inputs(models[0][1])
    level, show_special, view_name = view_options()
    raw_only = view_name in ("Heads as parsers", "Rollout & flow", "Context mixing")
    weighting = "raw" if raw_only else weighting_choice()
    cols = st.columns(len(models)) if len(models) > 1 else [st.container()]
    for i, (col, (name, encoder)) in enumerate(zip(cols, models, strict=True)):
        with col:
            if len(models) > 1:
                st.subheader(name)
            model_section(
                name,
                encoder,
                text,
                text_b,
                (level, show_special, view_name, weighting),
                k=f"_{i}" if i else "",
            )


def model_section(
    name: str, encoder, text: str, text_b: str | None, options: tuple, k: str
) -> None:
    """One model's attention for the input, in the chosen view (``k``: its widget-key suffix)."""
    level, show_special, view_name, weighting = options
    amap: AttentionMap | None = None
    text_b = text_b if supports_pairs(encoder) else None
    with friendly_errors("Encoding the input"), st.spinner("Encoding…"):
        amap = piece_attention(name, text, text_b)
        amap = weighted(name, encoder, amap, text, text_b, weighting)
    if amap is None:
        return
    weighting_note(weighting)
    view = attention_view(amap, level, show_special)
    stem = f"attention_{name.replace('/', '_')}_{level}"
    with friendly_errors(view_name):
        rolled = weighting == "rollout"
        if view_name == "Head view":
            head_view(view, stem, k, rolled)
        elif view_name == "Model view":
            model_view(view, stem, k, rolled)
            from ui.views.interventions import head_importance_panel  # issue 29

            head_importance_panel(name, k)
        elif view_name == "Rollout & flow":
            rollout_flow_view(view, k)
        elif view_name == "Context mixing":  # issue 44: Value Zeroing and ALTI
            from ui.views.attention_mixing import context_mixing_view

            context_mixing_view(name, encoder, amap, text, (level, show_special), k)
        elif view_name == "Heads as parsers":
            if k:  # its widgets are keyed once per page
                st.caption("Heads as parsers: shown for the first model; pick this one first.")
            else:
                attention_parsers.render(encoder, name, amap)
        else:
            statistics_view(amap, encoder, name, k)


def attention_models() -> list[tuple[str, object]]:
    """The picked models that have attention, side by side (up to two); stops when none has."""
    names = model_picker()
    if not names:
        st.info("Pick a model in the sidebar.")
        st.stop()
    models, without = [], []
    for name in names:
        encoder = get_encoder(name)
        if encoder is None:
            continue
        (models if encoder.info.has_attention else without).append((name, encoder))
    for name, encoder in without:
        st.info(
            f"**{name}** is an ELMo model: a character CNN and a biLSTM, with no attention heads, "
            "so there is nothing to show for it on this page. Pick a BERT-family model (e.g. "
            "minilm-l6) in the sidebar to look at attention."
        )
        if not models:
            provenance_card(encoder)
    if not models:
        st.stop()
    return models


def attention_inputs(encoder) -> tuple[str, str | None]:
    """The sentence and, for models that take pairs, an optional second sentence."""
    text = st.text_area(
        "Sentence",
        max_chars=config.limits().max_chars,
        height=80,
        key=persist("attn_text", DEFAULT_TEXT, param="sentence"),
    )
    if not supports_pairs(encoder):
        return text, None
    text_b = st.text_input(
        "Second sentence (optional): encodes the pair as segments A and B with [SEP] between",
        max_chars=config.limits().max_chars,
        key=persist("attn_text_b", "", param="sentence_b"),
    ).strip()
    return text, text_b or None


def view_options() -> tuple[str, bool, str]:
    """Word or piece level, special tokens shown or not, and which view."""
    c1, c2, c3 = st.columns([2, 2, 4])
    level = c1.radio(
        "Level",
        ["word", "piece"],
        horizontal=True,
        key=persist("attn_level", "word", "level", valid=one_of(["word", "piece"])),
        help="Word level (Clark et al. 2019): attention TO a word is the sum over its pieces, "
        "FROM a word the mean over its pieces; rows still sum to 1.",
    )
    show_special = c2.toggle(
        "Show [CLS]/[SEP]",
        key=persist("attn_special", True, "special", as_bool),
        help="Hiding special tokens drops their rows and columns and renormalises each row to sum to 1.",
    )
    views = [
        "Head view",
        "Model view",
        "Head statistics",
        "Rollout & flow",
        "Context mixing",
        "Heads as parsers",
    ]
    view_name = c3.radio(
        "View",
        views,
        horizontal=True,
        key=persist("attn_view", views[0], "view", valid=one_of(views)),
    )
    return level, show_special, view_name


def statistics_view(amap: AttentionMap, encoder, name: str, k: str = "") -> None:
    """Clark et al.'s statistics over this input, or over a UD-EWT sample on request."""
    st.markdown(
        "Per layer × head, means over query positions, on the raw piece-level attention with "
        "special tokens (as in Clark et al. 2019, whatever the level chosen above). Entropy is in "
        "**nats**; the others are shares of attention (0–1). Previous/next: the token just "
        "before/after the query, [CLS] and [SEP] included."
    )
    sources = ["this input", f"a sample of {CORPUS[0].upper()} {CORPUS[1]} sentences"]
    source = st.radio(
        "Over",
        sources,
        horizontal=True,
        key=persist(f"attn_stats_source{k}", sources[0], _linked("over", k), valid=one_of(sources)),
    )
    picked = st.multiselect(
        "Statistics",
        list(STATISTICS),
        format_func=STATISTICS.get,
        key=persist(
            f"attn_stats_names{k}",
            list(STATISTICS),
            _linked("stats", k),
            as_strs,
            all_of(STATISTICS),
        ),
    )
    stats = head_statistics([amap]) if source == "this input" else corpus_stats(encoder, name, k)
    if stats is not None and picked:
        fig = statistics_figure(stats, picked)
        st.plotly_chart(fig, key=f"attn_stats_chart{k}")
        downloads(fig, f"attention_stats_{name.replace('/', '_')}", f"dl_stats{k}", stats.to_frame)


def corpus_stats(encoder, name: str, k: str = ""):
    """Head statistics over a UD-EWT sample, computed when asked (None until then)."""
    n = setting_number(
        AttentionStatsParams,
        "n_sentences",
        "Sentences",
        key=f"attn_n{k}",
        param=_linked("n", k),
        default=100,
        step=50,
    )
    results = corpus_results()
    if st.button(f"Compute over {n} sentences", key=f"attn_run{k}", type="primary"):
        bar = st.progress(0.0, text="Encoding sentences…")
        with friendly_errors("Head statistics"), heavy_job("Head statistics"):
            dataset, split = CORPUS
            results[(name, n)] = get_analysis("attention-stats").run(
                [encoder],
                AttentionStatsParams(dataset, split, n, per_sentence=True),
                lambda stage, done, total: bar.progress(
                    done / total, text=f"{done}/{total} sentences"
                ),
            )
        bar.empty()
    stats = results.get((name, n))
    if stats is None:
        st.caption(
            "Press the button to encode the sample (a few seconds per 100 sentences on CPU)."
        )
        return None
    if stats.skipped:
        st.caption(f"{stats.skipped} sentence(s) longer than the model's limit were left out.")
    return stats


def embed_html(html: str, height: int) -> None:
    """Our own HTML (the head view: its tokens are escaped in probing.figures.head_view_html)
    in an iframe that runs its script: ``st.iframe`` where Streamlit has it, else the
    ``components.v1.html`` it replaces (deprecated since)."""
    if hasattr(st, "iframe"):
        st.iframe(html, height=height)
        return
    import streamlit.components.v1 as components

    components.html(html, height=height)
