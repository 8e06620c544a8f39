"""Static vs Contextual: one vector per word type, or one per occurrence — compare a word's occurrences layer by layer, see its senses separate, measure contextuality.

Widgets here, computation in ``probing.analyses.contextual`` / ``probing.analyses.sense_geometry`` /
``probing.analyses.contextuality`` / ``probing.analyses.static_vectors``, drawing in
``probing.figures.contextual``.
"""

from __future__ import annotations

import contextlib
import os

import numpy as np
import pandas as pd
import streamlit as st

from probing import config
from probing.analyses.contextual import (
    OccurrenceComparison,
    compare_occurrences,
    cosine_matrix,
    locate,
    nearest_neighbours,
    split_lines,
    ud_vocabulary,
)
from probing.analyses.params import ContextualityParams
from probing.analyses.registry import get as get_analysis
from probing.analyses.sense_geometry import (
    POS_NAMES,
    SUGGESTED_LEMMAS,
    external_separability,
    lemma_occurrences,
)
from probing.analyses.sense_pairs import (
    DIFFERENT,
    SAME,
    held_semcor_vocabulary,
    keep_semcor_vocabulary,
    occurrence_senses,
    semcor_examples,
    semcor_vocabulary,
    sense_neighbours,
    sense_pair_table,
    short_gloss,
    split_sense_labels,
)
from probing.analyses.static_vectors import StaticVectors, load_static_vectors
from probing.datasets.registry import corpus_names
from probing.encoding import STATIC
from probing.figures.contextual import (
    by_depth,
    contextuality_figure,
    occurrence_heatmap_figure,
    sense_map_figure,
    separability_figure,
    similarity_by_layer_figure,
)
from probing.figures.sense_pairs import sense_pairs_figure
from ui import background, tasks
from ui.common import (
    data_key,
    friendly_errors,
    get_encoder,
    load_model,
    md_text,
    model_picker,
    page_header,
    whole_number_input,
)
from ui.jobs import heavy_job, offload
from ui.settings_inputs import setting_number
from ui.state import as_bool, link, one_of, persist

DEFAULT_TEXT = """He sat on the river bank and watched the water.
She opened a bank account to save money.
The bank approved the loan on Friday.
They pulled the canoe up onto the muddy bank."""


VIEWS = ("Compare occurrences", "Sense geometry", "Contextuality", "GloVe / word2vec")


@st.cache_data(max_entries=32, show_spinner=False)
def comparison(model: str, text: str, target: str, picks: tuple[int, ...]) -> OccurrenceComparison:
    return compare_occurrences(load_model(model), text, target, picks=list(picks))


@st.cache_data(max_entries=32, show_spinner=False)
def neighbours(
    model: str, text: str, target: str, picks: tuple[int, ...], skip_target: bool, data: str
) -> pd.DataFrame:
    encoder = load_model(model)
    return nearest_neighbours(
        comparison(model, text, target, picks),
        ud_vocabulary(encoder),
        k=5,
        exclude=[target.strip()] if skip_target else [],
    )


SEMCOR_POOL = 3000 if config.demo_mode() else 8000


@st.cache_data(max_entries=32, show_spinner=False)
def semcor_neighbours(
    model: str, text: str, target: str, picks: tuple[int, ...], skip_target: bool, data: str
) -> pd.DataFrame:
    """Nearest sense-tagged SemCor occurrences (cached per input and data folder)."""
    pool = semcor_vocabulary(load_model(model), SEMCOR_POOL)
    return sense_neighbours(
        comparison(model, text, target, picks),
        pool,
        k=5,
        exclude=[target.strip()] if skip_target else [],
    )


@st.cache_data(max_entries=16, show_spinner=False)
def sense_table(model: str, lemma: str, pos: str, cap: int, data: str) -> pd.DataFrame:
    """Separability per layer (cached per input and data folder; computed in a worker)."""
    return offload(tasks.sense_table, model, lemma, pos, cap)


@st.cache_data(max_entries=32, show_spinner=False)
def sense_map(
    model: str, lemma: str, pos: str, cap: int, layer: int, method: str, user_text: str, data: str
) -> dict:
    """Map coordinates of the lemma's occurrences and of the user's own (cached per input and
    data folder; computed in a worker, see ``ui.tasks.sense_map``)."""
    return offload(tasks.sense_map, model, lemma, pos, cap, layer, method, user_text)


@st.cache_resource(show_spinner=False)
def corpus_results() -> dict:
    """(model, dataset, n) -> contextuality table; the same for every session."""
    return {}


@st.cache_resource(show_spinner=False, max_entries=2)
def static_vectors(path: str, mtime: float, max_words: int) -> StaticVectors:
    return load_static_vectors(path, max_words=max_words)


def loaded_static() -> StaticVectors | None:
    """The GloVe/word2vec vectors the user loaded in this session (never in demo mode)."""
    spec = st.session_state.get("sc_static_spec")
    if config.demo_mode() or not spec:
        return None
    try:
        return static_vectors(*spec)
    except Exception:  # the file changed or vanished since: forget it quietly
        st.session_state.pop("sc_static_spec", None)
        return None


def layer_label(names: list[str], k: int) -> str:
    """``static``, ``0 (embeddings)``, ``3`` (a name that only repeats the number is dropped)."""
    if k == STATIC:
        return "static"
    return str(k) if names[k] == f"layer {k}" else f"{k} ({names[k]})"


def render() -> None:
    """Draw the page (everything below the page config)."""
    page_header(
        "Static vs Contextual",
        "A static embedding gives a word one vector whatever the sentence; a contextual encoder "
        "gives each occurrence its own vector in every layer. Compare occurrences, watch senses "
        "separate, and measure how contextual each layer is (Ethayarajh 2019).",
    )
    encoders = picked_encoders()
    models = list(encoders)
    view = st.radio(
        "Analysis",
        VIEWS,
        horizontal=True,
        label_visibility="collapsed",
        key=persist("sc_view", VIEWS[0], "view", valid=one_of(VIEWS)),
    )
    if view == VIEWS[0]:
        compare_section(models)
    elif view == VIEWS[1]:
        sense_section(models)
    elif view == VIEWS[2]:
        contextuality_section(models, encoders)
    else:
        static_vectors_section()


def picked_encoders() -> dict:
    """The sidebar's models, loaded; stops the page when none could be."""
    names = model_picker()
    if not names:
        st.info("Pick a model in the sidebar.")
        st.stop()
    encoders = {n: e for n in names if (e := get_encoder(n)) is not None}
    if not encoders:
        st.stop()
    return encoders


# -- compare occurrences ---------------------------------------------------------------------


# What the SemCor button loads (its help says so): sentences per sense, senses.
SEMCOR_PER_SENSE, SEMCOR_SENSES = 3, 2
SENSE_LINES = "same vs different sense"


def fill_semcor() -> None:
    """Button callback: SemCor sentences of the target, labelled with their senses, shown as
    same- vs different-sense pairs (a comparison left on "every pair" drew 28 tangled lines)."""
    with friendly_errors("Finding SemCor sentences"):
        st.session_state["sc_text"] = semcor_examples(
            st.session_state.get("sc_target", "bank"),
            per_sense=SEMCOR_PER_SENSE,
            max_senses=SEMCOR_SENSES,
        )
        st.session_state["sc_lines"] = SENSE_LINES


def occurrence_inputs() -> tuple[str, str, list[int], list[str | None]]:
    """Sentences (their ``| sense`` labels taken off), target word, the picked occurrences
    and each sentence's sense label; stops the page when unusable."""
    left, right = st.columns([3, 1])
    text = left.text_area(
        "Sentences, one per line",
        height=130,
        max_chars=config.limits().max_chars,
        key=persist("sc_text", DEFAULT_TEXT, param="sentence"),
        help="End a line with “| label” to say which sense it uses (e.g. “| river”): pairs "
        "then count as same-sense or different-sense.",
    )
    left.button(
        "SemCor sentences of the target, with their senses",
        on_click=fill_semcor,
        key="sc_semcor",
        help=f"Up to {SEMCOR_PER_SENSE} SemCor sentences for each of the target's "
        f"{SEMCOR_SENSES} most frequent noun senses, each line ending in its sense.",
    )
    text, labels = split_sense_labels(text)
    st.session_state[COMPARED] = text  # the sense map's box shows them too
    target = right.text_input(
        "Target word",
        key=persist("sc_target", "bank", "target"),
        help="Every whole-word occurrence, case-insensitive: 'bank' matches 'Bank', not 'banks'.",
    )
    found = None
    with friendly_errors("Finding the occurrences"):
        if len(split_lines(text)) > config.limits().max_sentences:
            st.error(f"At most {config.limits().max_sentences} sentences here, please.")
        else:
            words, found = locate(text, target)
    if not found:
        st.stop()
    # The display names are the occurrences' own; ``labels`` stay the sentences' sense labels
    # (overwriting them with the names made every pair a "different senses" pair).
    names = [occurrence_name(o.label(words[o.sentence]), labels, o.sentence) for o in found]
    picks = st.multiselect(
        "Occurrences to compare",
        range(len(found)),
        default=list(range(min(len(found), 10))),
        format_func=lambda i: names[i],
        # One box per sentence set and target: a new set starts from its first ten (not in
        # the address: a link's picks would carry over to the next set of sentences).
        key=f"sc_picks_{hash((text, target))}",
    )
    if len(picks) < 2:
        st.warning("Pick at least two occurrences to compare.")
        st.stop()
    return text, target, picks, labels


def occurrence_name(name: str, labels: list[str | None], sentence: int) -> str:
    """An occurrence's display name with its sentence's sense label, where it has one."""
    sense = labels[sentence] if sentence < len(labels) else None
    return f"{name} [{sense}]" if sense else name


def compare_section(models: list[str]) -> None:
    """Occurrences of one word compared layer by layer, as curves, heatmaps and neighbours."""
    text, target, picks, labels = occurrence_inputs()
    comps: list[OccurrenceComparison] = []
    with friendly_errors("Comparing the occurrences"), st.spinner("Encoding…"):
        comps = [comparison(m, text, target, tuple(sorted(picks))) for m in models]
    if not comps:
        st.stop()
    similarity_curves(comps, target, labels)
    pair_heatmaps(comps)
    neighbours_section(models, text, target, picks)


def static_notes(comps: list[OccurrenceComparison], target: str) -> list[str]:
    """One note per static reference: each model's own static vectors and loaded GloVe."""
    notes = []
    for c in comps:
        ref = sorted({round(float(c.static_similarity[i, j]), 3) for i, j in c.pairs()})
        span = f"{ref[0]:.3f}" if len(ref) == 1 else f"{ref[0]:.3f}–{ref[-1]:.3f}"
        notes.append(
            f"**{c.model}** static vectors: cosine {span} between the occurrences (computed)"
        )
    glove = loaded_static()
    if glove is not None:
        gname = os.path.basename(glove.source)
        occ_words = [o.word for o in comps[0].occurrences]
        if all(w in glove for w in occ_words):
            gsim = cosine_matrix(np.stack([glove.vector(w) for w in occ_words]))
            notes.append(
                f"**{gname}**: cosine {gsim[np.triu_indices(len(occ_words), 1)].min():.3f}"
            )
        else:
            notes.append(f"*{target}* is not in {gname}")
    return notes


def similarity_curves(
    comps: list[OccurrenceComparison], target: str, labels: list[str | None]
) -> None:
    """Cosine between occurrences per layer: every pair, their mean, or (where senses are
    labelled) the mean of same-sense and of different-sense pairs."""
    tables = [sense_pair_table(c, labels) for c in comps]
    options = ["every pair", "mean over pairs"]
    if all(len(t) for t in tables):
        options.insert(0, SENSE_LINES)
    key = persist("sc_lines", options[0], "lines", valid=one_of(options))
    # Labels just typed (or SemCor's) switch to the sense view; otherwise the choice stays.
    if len(options) == 3 and st.session_state.get("sc_lines_labelled") is False:
        st.session_state[key] = options[0]
        link("lines", options[0])
    st.session_state["sc_lines_labelled"] = len(options) == 3
    show = st.radio("Lines", options, horizontal=True, key=key)
    if show == SENSE_LINES:
        fig = sense_pairs_figure(tables)
    else:  # many pairs: grouped by their senses where labelled, not one legend entry each
        fig = similarity_by_layer_figure(
            comps,
            "mean" if show == "mean over pairs" else "pairs",
            senses=[occurrence_senses(c, labels) for c in comps],
        )
    st.plotly_chart(fig, key="sc_sim_chart")
    st.caption(sense_pairs_note(tables[0], len(comps[0].pairs())))
    notes = static_notes(comps, target)
    st.caption(
        "; ".join(notes) + ". A static vector is the same for every occurrence of a word type, so "
        "its similarity is 1 (a cased model's 'Bank' and 'bank' are two types). "
        + (
            "The models differ in depth, so x is relative depth (layer ÷ number of layers): "
            "the same fraction of the way up lines up across models; hover for the real layer."
            if by_depth([c.pair_table() for c in comps])
            else "Layer 0 is the model's input layer."
        )
    )


def sense_pairs_note(table: pd.DataFrame, n_pairs: int) -> str:
    """How the typed sense labels split the pairs (or how to label them)."""
    if not len(table):
        return (
            "No sense labels, so pairs are not split by sense: end a line with “| river” "
            "or “| money” (or press the SemCor button) to compare same-sense with "
            "different-sense pairs."
        )
    counts = table.groupby("relation")["n_pairs"].first()
    same, diff = int(counts.get(SAME, 0)), int(counts.get(DIFFERENT, 0))
    left = n_pairs - same - diff
    return f"From your labels: {same} same-sense and {diff} different-sense pairs" + (
        f"; {left} pairs with an unlabelled occurrence left out." if left else "."
    )


def pair_heatmaps(comps: list[OccurrenceComparison]) -> None:
    """All pairs' cosines at one chosen layer, one heatmap per model."""
    st.subheader("All pairs at one layer")
    # One model: the heatmap beside the occurrence list (a 4 × 4 map needs no full width).
    cols = st.columns([3, 2]) if len(comps) == 1 else st.columns(len(comps))
    for col, c in zip(cols, comps, strict=False):
        options = [STATIC, *range(c.n_contextual_layers + 1)]
        key = persist(
            f"sc_hm_{c.model}",
            c.n_contextual_layers,
            "hm_layer" if c is comps[0] else None,
            int,
            one_of(options),
        )
        k = col.select_slider(
            "Layer",
            options=options,
            format_func=lambda k, c=c: layer_label(c.layer_names, k),
            key=key,
        )
        col.plotly_chart(occurrence_heatmap_figure(c, k), key=f"sc_heatmap_{c.model}")
    with cols[-1] if len(comps) == 1 else st.expander("Occurrences"):
        st.markdown(
            "\n".join(
                f"- **{short}**: {lab.split(': ', 1)[1]}"
                for short, lab in zip(comps[0].short_labels, comps[0].labels, strict=True)
            )
        )


def neighbours_section(models: list[str], text: str, target: str, picks: list[int]) -> None:
    """Nearest word occurrences of each picked occurrence, per layer and model."""
    st.subheader("Nearest neighbours")
    a, b, c = st.columns([2, 2, 3])
    pools = ["SemCor (sense-tagged)", "UD-EWT"]
    semcor = (
        c.radio(
            "Among",
            pools,
            horizontal=True,
            key=persist("sc_nn_pool", pools[0], "pool", valid=one_of(pools)),
        )
        != "UD-EWT"
    )
    st.caption(
        (
            f"The most similar word occurrences, per layer, among ~{SEMCOR_POOL:,} word occurrences "
            "of SemCor train, each with its WordNet sense where SemCor tags one (encoded once per "
            "model and data, then kept on disk; the first time in the background, a minute or two, "
            "while the rest of the page works). Each word and sense appears once with its best "
            "cosine."
            if semcor
            else "The most similar word occurrences, per layer, among ~3,000 word occurrences from "
            "UD-EWT train (encoded once per model and server). Each word appears once with its "
            "best cosine."
        )
        + " The CSV also has each neighbour's context."
    )
    skip_target = b.toggle(
        f"Leave out *{target.strip()}* itself",
        key=persist("sc_nn_skip_semcor" if semcor else "sc_nn_skip", not semcor, "skip", as_bool),
        help="Its other occurrences in the corpus would otherwise top every list; "
        "with senses shown they tell which sense each layer sides with.",
    )
    if not a.toggle("Show nearest neighbours", key=persist("sc_nn", True, "neighbours", as_bool)):
        return
    find = semcor_neighbours if semcor else neighbours
    for m in models:
        if semcor and not semcor_pool_ready(m):
            continue  # its progress is shown where its neighbours will be
        table = None
        with (
            friendly_errors("Finding nearest neighbours"),
            # With the SemCor pool held, neighbours are one matrix product per layer: light
            # work, which must not queue behind a pool being built for another model.
            contextlib.nullcontext() if semcor else heavy_job("Nearest neighbours"),
            st.spinner(
                "Finding nearest neighbours…"
                if semcor
                else f"Encoding the neighbour pool for {m} (once per server)…"
            ),
        ):
            table = find(m, text, target, tuple(sorted(picks)), skip_target, data_key())
        if table is not None:
            neighbour_table(table, m, several=len(models) > 1)


def semcor_pool_ready(model: str) -> bool:
    """Whether this server holds the model's SemCor neighbour pool. If not, it is read from
    disk or encoded in the background (:mod:`ui.background`, a worker process) and its
    progress shown here, where the neighbours will appear: the rest of the page does not wait
    for it (issue 46: the first open took 32 s with minilm-l6, 102 s with mpnet-base). The
    page reruns when it is ready."""

    def held() -> bool:
        return held_semcor_vocabulary(load_model(model), SEMCOR_POOL) is not None

    if held():
        return True
    key = background.shared_key("semcor-pool", (model, SEMCOR_POOL, data_key()))
    ended = background.collect(key)
    if ended is not None and ended.error is not None:
        with friendly_errors("Building the SemCor neighbour pool"):
            raise ended.error
        return False
    if ended is not None and held():  # (a run ended and the pool since dropped: again)
        return True
    if background.get(key) is None:
        size = SEMCOR_POOL  # read here: the thread has no page to read it from
        # Detached: a pool outlives the tab that asked for it (every session uses it).
        background.start(
            key,
            f"Neighbour pool for {model}",
            lambda sink: build_semcor_pool(model, size, sink),
            detached=True,
        )
    background.show_progress(
        key, f"The nearest neighbours of {model} appear here when its SemCor pool is ready."
    )
    return False


def build_semcor_pool(model: str, size: int, sink: background.ProgressSink) -> None:
    """Hold the model's SemCor pool in this server: read from disk, else encoded in a worker
    process (which stores it for the next server start). A background run's work."""
    encoder = load_model(model)
    sink.progress(0.0, f"Looking for a stored SemCor neighbour pool of {model}…")
    if held_semcor_vocabulary(encoder, size, from_disk=True) is not None:
        return

    def show(done: int, total: int) -> None:
        sink.progress(
            done / max(total, 1),
            f"Encoding the SemCor neighbour pool for {model} (once; kept on disk): "
            f"{done:,}/{total:,} sentences",
        )

    sink.progress(0.0, f"Encoding the SemCor neighbour pool for {model} (once; kept on disk)…")
    unstored = offload(tasks.semcor_pool, model, size, progress=show)
    if unstored is not None:  # the cache folder could not take it: the worker's own copy
        keep_semcor_vocabulary(encoder, unstored, size)
    else:  # stored by the worker (or built in this process when workers are off)
        semcor_vocabulary(encoder, size)


def neighbour_table(table: pd.DataFrame, model: str, several: bool) -> None:
    """Layers × occurrences, each cell the neighbours with their cosines; CSV below."""
    cell = table["word"] + " " + table["cosine"].map("{:.2f}".format)
    if "gloss" in table:  # the neighbour's sense, readably
        cell += table["gloss"].map(lambda g: f" ({short_gloss(g, 28)})" if g else "")
    table = table.assign(cell=cell)
    wide = (
        table.groupby(["layer", "layer_name", "occurrence"], sort=False)["cell"]
        .agg(" · ".join)
        .unstack("occurrence")
    )
    wide.index = [name for _, name in wide.index]
    if several:
        st.markdown(f"**{model}**")
    st.dataframe(wide, width="stretch")
    st.download_button(
        "CSV",
        table.drop(columns="cell").to_csv(index=False),
        file_name=f"neighbours_{model.replace('/', '_')}.csv",
        key=f"sc_nn_csv_{model}",
    )


# -- sense geometry --------------------------------------------------------------------------


def sense_inputs() -> tuple[str, str, str, int, str]:
    """Lemma, part of speech, map method, occurrence cap and the user's own sentences."""
    a, b, c, d = st.columns([2, 1, 1, 1])
    lemma = a.text_input(
        "Lemma (SemCor)",
        key=persist("sc_lemma", "bank", "lemma"),
        help="Suggestions: " + ", ".join(f"{w} ({POS_NAMES[p]})" for w, p in SUGGESTED_LEMMAS),
    )
    pos = b.selectbox(
        "Part of speech",
        list(POS_NAMES),
        format_func=POS_NAMES.get,
        key=persist("sc_pos", "n", "pos", valid=one_of(POS_NAMES)),
    )
    method = c.radio(
        "Map",
        ["PCA", "UMAP"],
        horizontal=True,
        key=persist("sc_method", "PCA", "map", valid=one_of(["PCA", "UMAP"])),
        help="PCA is linear and instant; UMAP keeps neighbourhoods (seconds; the first "
        "use per server also compiles it).",
    ).lower()
    top = config.limits().max_lemma_occurrences
    cap = whole_number_input(
        "Max occurrences",
        20,
        top,
        step=50,
        key=persist("sc_cap", 300, "cap", int, lambda n: 20 <= n <= top),
        where=d,
    )
    st.caption(
        "Try "
        + ", ".join(f"*{w}* ({POS_NAMES[p]})" for w, p in SUGGESTED_LEMMAS)
        + ". Senses seen fewer than twice are left out."
    )
    user_text = st.text_area(
        "Your sentences, placed into the same map (★)",
        height=100,
        max_chars=config.limits().max_chars,
        key=map_sentences_key(),
        help="The sentences typed under Compare occurrences, until you type others here.",
    )
    return lemma, pos, method, int(cap), user_text


COMPARED = "sc_compared_text"  # the Compare occurrences sentences, labels off (not a widget)


def map_sentences_key() -> str:
    """The key of the map's sentence box: it shows the sentences typed under Compare
    occurrences (their sense labels off) and follows them until the user types into it."""
    ss = st.session_state
    compared = ss.get(COMPARED, DEFAULT_TEXT)
    key = persist("sc_user_text", compared, "map_sentences")
    seeded = ss.get("sc_user_text_seed", DEFAULT_TEXT)
    if ss[key] == seeded and compared != seeded:  # not typed into: follow the comparison
        ss[key] = compared
        persist(key, compared, "map_sentences")  # the store and the address follow too
    ss["sc_user_text_seed"] = compared
    return key


def sense_section(models: list[str]) -> None:
    """A lemma's SemCor occurrences: a map per model at one layer, separability per layer."""
    lemma, pos, method, cap, user_text = sense_inputs()
    tables = []
    with (
        friendly_errors("Collecting the lemma's occurrences"),
        heavy_job("Sense geometry"),
        st.spinner("Reading SemCor and encoding the lemma's sentences…"),
    ):
        tables = [sense_table(m, lemma, pos, cap, data_key()) for m in models]
    if not tables:
        st.stop()
    n_layers = {m: int(t["layer"].max()) for m, t in zip(models, tables, strict=True)}
    layer_names = tables[0].set_index("layer")["layer_name"].to_dict()
    options = [STATIC, *range(n_layers[models[0]] + 1)]
    layer = st.select_slider(
        "Layer",
        options=options,
        format_func=lambda k: layer_label(layer_names, k),
        key=persist("sc_sense_layer", n_layers[models[0]], "sense_layer", int, one_of(options)),
        help="With two models of different depth, the second shows the same relative depth.",
    )
    for col, m in zip(st.columns(len(models)), models, strict=True):
        k = (
            layer
            if layer == STATIC or n_layers[m] == n_layers[models[0]]
            else round(layer / n_layers[models[0]] * n_layers[m])
        )
        with col:
            sense_map_panel(m, lemma, pos, cap, k, method, user_text)
    separability_section(tables, lemma, pos, cap)


def sense_map_panel(
    m: str, lemma: str, pos: str, cap: int, k: int, method: str, user_text: str
) -> None:
    """One model's map of the lemma's occurrences at layer ``k``, with a caption."""
    points = None
    with (
        friendly_errors("Drawing the map"),
        heavy_job("Sense map"),
        st.spinner(f"{method.upper()} of {m}…"),
    ):
        points = sense_map(m, lemma, pos, cap, k, method, user_text, data_key())
    if points is None:
        return
    name = "static" if k == STATIC else f"layer {k}"
    st.plotly_chart(
        sense_map_figure(
            points["coords"],
            points["senses"],
            points["glosses"],
            points["contexts"],
            points["user_coords"],
            points["user_labels"],
            title=f"{m}: {lemma} ({POS_NAMES[pos]}), {name}, {method.upper()}",
        ),
        key=f"sc_map_{m}",
    )
    dropped = ", ".join(f"{s} ×{n}" for s, n in points["dropped"].items())
    st.caption(
        f"{len(points['senses'])} of {points['n_found']} SemCor occurrences"
        + (f" (left out, too rare: {dropped})" if dropped else "")
        + f". {method.upper()} fit {points['seconds']:.2f} s"
        + (
            f"; UMAP compiled first in {points['warm_s']:.1f} s (once per worker)"
            if points["warm_s"]
            else ""
        )
        + ("" if points["user_coords"] is not None else f". None of your sentences uses *{lemma}*.")
    )


def separability_section(tables: list[pd.DataFrame], lemma: str, pos: str, cap: int) -> None:
    """1-NN accuracy and silhouette of the senses per layer: figure, table, CSV."""
    st.subheader("How well the senses separate, per layer")
    st.plotly_chart(separability_figure(tables), key="sc_sep_chart")
    table = pd.concat(tables, ignore_index=True)
    glove = loaded_static()
    if glove is not None:
        with friendly_errors("Scoring the static vectors"):
            occ = lemma_occurrences(lemma, pos, max_occurrences=cap)
            table = pd.concat(
                [
                    table,
                    pd.DataFrame(
                        [external_separability(glove, occ, os.path.basename(glove.source))]
                    ),
                ],
                ignore_index=True,
            )
    st.dataframe(table.drop(columns=["depth"]).round(3), width="stretch", hide_index=True)
    st.caption(
        "1-NN accuracy: each occurrence gets the sense of its most similar other occurrence "
        "(cosine, leave-one-out; ties count fractionally, so identical static vectors score "
        "chance). Silhouette: cosine distance, −1…1. Static = the model's context-free vectors; "
        "they differ between occurrences only where the word form does (bank / banks)."
    )
    st.download_button(
        "CSV", table.to_csv(index=False), file_name=f"separability_{lemma}.csv", key="sc_sep_csv"
    )


# -- contextuality ---------------------------------------------------------------------------


def contextuality_section(models: list[str], encoders: dict) -> None:
    """Ethayarajh's (2019) measures over a corpus sample, computed on request."""
    st.markdown(
        "Over a corpus sample, per layer (Ethayarajh 2019): **self-similarity** (mean cosine "
        "between a word type's occurrences in different sentences, types seen ≥ 5 times), "
        "**intra-sentence similarity** (cosine between each word and its sentence's mean), and "
        "**maximum explainable variance** (share of a type's occurrence matrix explained by its "
        "first principal component). Dotted: the anisotropy baseline from random word "
        "occurrences; below, dashed, each metric minus its baseline. A static vector is the "
        "same in every sentence, so its occurrences have no variance and no MEV: the MEV "
        "panels start at layer 0."
    )
    a, b = st.columns([1, 1])
    dataset = a.selectbox(
        "Corpus",
        corpus_names(),
        key=persist("sc_ctx_data", corpus_names()[0], "corpus", valid=one_of(corpus_names())),
    )
    n = setting_number(
        ContextualityParams,
        "n_sentences",
        "Sentences (seeded sample of train)",
        key="sc_ctx_n",
        param="n",
        default=200,
        step=50,
        where=b,
    )
    results = corpus_results()
    if st.button(f"Compute over {n} sentences", key="sc_ctx_run", type="primary"):
        for m in models:
            bar = st.progress(0.0, text=f"{m}: encoding…")
            with friendly_errors("Computing contextuality"), heavy_job("Contextuality"):
                results[(m, dataset, n)] = get_analysis("contextuality").run(
                    [encoders[m]],
                    ContextualityParams(dataset=dataset, n_sentences=n),
                    lambda stage, done, total, m=m, bar=bar: bar.progress(
                        done / total, text=f"{m}: {done}/{total} sentences"
                    ),
                )
            bar.empty()
    tables = [results[(m, dataset, n)] for m in models if (m, dataset, n) in results]
    if not tables:
        st.caption(
            "Press the button to encode the sample (a few seconds per 100 sentences on CPU)."
        )
        return
    st.plotly_chart(contextuality_figure(tables), key="sc_ctx_chart")
    table = pd.concat(tables, ignore_index=True)
    st.dataframe(table.round(3), width="stretch", hide_index=True)
    st.download_button(
        "CSV", table.to_csv(index=False), file_name="contextuality.csv", key="sc_ctx_csv"
    )


# -- GloVe / word2vec ------------------------------------------------------------------------


def static_vectors_section() -> None:
    """Load GloVe / word2vec text vectors from this machine and show nearest words."""
    st.markdown(
        "Every model's own static vectors (BERT: the input word-piece embedding; ELMo: the "
        "character-CNN token layer) are the *static* line and row in the other views. Here you "
        "can add static vectors you know — GloVe or word2vec in text format — from a file on "
        "this machine; they then also appear in the sense-geometry table."
    )
    if config.demo_mode():
        st.info(
            "The shared demo does not read files from the server; run ContextLens locally "
            "to load GloVe or word2vec vectors."
        )
        st.stop()
    a, b = st.columns([3, 1])
    path = a.text_input(
        "Vectors file (GloVe .txt, word2vec text .txt/.vec, optionally .gz)",
        key="sc_static_path",
        placeholder="~/data/glove.6B.300d.txt",
    )
    max_words = whole_number_input(
        "Read the first … words",
        1000,
        3_000_000,
        value=200_000,
        step=50_000,
        key="sc_static_max",
        where=b,
    )
    if path.strip():
        with friendly_errors("Loading the vectors"), st.spinner("Reading the vectors…"):
            full = os.path.expanduser(path.strip())
            mtime = os.path.getmtime(full) if os.path.isfile(full) else 0.0
            static_vectors(full, mtime, max_words)
            st.session_state["sc_static_spec"] = (full, mtime, max_words)
    glove = loaded_static()
    if glove is None:
        st.caption("No vectors loaded.")
        st.stop()
    st.success(f"{len(glove):,} words × {glove.dim} dims from {glove.source}")
    static_nearest_words(glove)


def static_nearest_words(glove: StaticVectors) -> None:
    """The typed words' nearest words in the loaded static vectors."""
    words = st.text_input(
        "Words", key=persist("sc_static_words", "bank river money loan account", "words")
    ).split()
    found = [w for w in words if w in glove]
    missing = [w for w in words if w not in glove]
    if missing:
        st.warning("Not in the static vocabulary: " + ", ".join(map(md_text, missing)))
    cols = st.columns(max(1, min(len(found), 4)))
    for i, w in enumerate(found):
        col = cols[i % len(cols)]
        col.markdown(f"**{md_text(w)}** — nearest words")
        col.dataframe(
            pd.DataFrame(glove.most_similar(w, 8), columns=["word", "cosine"]).round(3),
            hide_index=True,
        )
