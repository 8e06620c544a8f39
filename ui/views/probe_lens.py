"""The Probe Lens page: every trained probe applied to your sentence, at every layer.

Widgets here; the lens is :mod:`probing.analyses.probe_lens`, its figures
:mod:`probing.figures.probe_lens`. Probes come from ``results/probes/`` (saved by
``python -m probing probe … --save-probes``, safetensors + JSON).
"""

from __future__ import annotations

import itertools

import streamlit as st

from probing import config
from probing.analyses.probe_lens import LENS_TASKS, LensResult, apply_lens, saved_probes
from probing.figures.probe_lens import label_grid, tree_arcs
from ui.common import data_key, friendly_errors, get_encoder, model_picker, page_header
from ui.state import one_of, persist
from ui.views.probe_attribution import attribution_section

RESULTS_DIR = config.results_dir()
DEFAULT_TEXT = "The old man the boats that the children sailed."
N_GOLD = 300  # UD-EWT test sentences offered
TASK_NAMES = {
    "pos": "part of speech (UPOS)",
    "xpos": "PTB tag (XPOS)",
    "deprel": "dependency relation (gold arcs)",
    "dep-distance": "tree distance (structural probe)",
    "dep-depth": "tree depth (structural probe)",
    "supersense": "supersense",
    "wsd": "word sense (nearest SemCor sense centroid)",
}


@st.cache_data(show_spinner=False)
def gold_sentences(data: str) -> list[dict]:
    """The first UD-EWT test sentences of 5-30 words, with their gold labels (``data``: the
    data folder, a cache key)."""
    from probing.datasets import read_sentences

    keep = (s for s in read_sentences("ud-ewt", "test") if 5 <= len(s.words) <= 30)
    return [
        {"words": s.words, "labels": s.labels, "id": s.sent_id}
        for s in itertools.islice(keep, N_GOLD)
    ]


@st.cache_resource(show_spinner=False)
def probes_for(model: str, stamp: tuple) -> tuple[dict, list[str]]:  # stamp: files' mtimes
    """The model's saved probes, and the names of those that could not be read."""
    unreadable: list[str] = []
    return saved_probes(RESULTS_DIR, model, unreadable), unreadable


def _first_rich(sents: list[dict]) -> int:
    """The first sentence of at most 15 words with at least four nouns, verbs, adjectives or
    adverbs: short enough to read in every grid, and one that every probe, the word-sense
    probe included, has something to say about."""
    content = {"NOUN", "VERB", "ADJ", "ADV"}
    rich = (
        i
        for i, s in enumerate(sents)
        if len(s["words"]) <= 15 and sum(u in content for u in s["labels"]["upos"]) >= 4
    )
    return next(rich, 0)


def _stamp() -> tuple:
    folder = RESULTS_DIR / "probes"
    return tuple(sorted((p.name, p.stat().st_mtime_ns) for p in folder.glob("*")))


def render() -> None:
    """Draw the page (everything below the page config)."""
    page_header(
        "Probe Lens",
        "Every trained probe on your sentence, at every layer: what it predicts, how sure it "
        "is, where its final answer first appears, and the tree the structural probe sees.",
    )
    names = model_picker()
    if not names:
        st.info("Pick a model in the sidebar.")
        st.stop()
    name = names[0]
    probes, unreadable = probes_for(name, _stamp())
    if unreadable:
        st.warning(
            f"Could not read the saved probes {', '.join(unreadable)} (truncated, or "
            "not a saved-probes file): the page uses the others. Save them again with "
            "`python -m probing probe … --save-probes`."
        )
    if not probes:
        st.info(
            f"No trained probes are saved for **{name}**. Train them with, e.g., "
            f"`python -m probing probe --model {name} --task pos --save-probes --out results/ --overwrite` "
            "(likewise `--task deprel`, `supersense`, `wsd`, `dep-distance`, `dep-depth`); "
            "they are stored in "
            "`results/probes/` as safetensors + JSON."
        )
        st.stop()
    encoder = get_encoder(name)
    if encoder is None:
        st.stop()
    sources = ["a UD-EWT test sentence (gold labels)", "type one"]
    source = st.radio(
        "Sentence",
        sources,
        horizontal=True,
        key=persist("lens_source", sources[0], "source", valid=one_of(sources)),
    )
    gold = None
    if source == "type one":
        text = st.text_input(
            "Your sentence", max_chars=300, key=persist("lens_text", DEFAULT_TEXT, param="sentence")
        )
        words: list[str] | str = text
    else:
        sents = gold_sentences(data_key())
        k = st.selectbox(
            "Test sentence",
            range(len(sents)),
            key=persist(
                "lens_gold", _first_rich(sents), "gold", int, range(len(sents)).__contains__
            ),
            format_func=lambda i: " ".join(sents[i]["words"]),
        )
        words, gold = sents[k]["words"], sents[k]["labels"]
    result = None
    with friendly_errors("Encoding the sentence"), st.spinner("Encoding…"):
        enc = encoder.encode([words] if gold else words, windowed=gold is not None)[0]
        result = apply_lens(enc, probes, gold)
    if result is None:
        st.stop()
    _labels_part(result, gold is not None, probes)
    _trees_part(result)
    attribution_section(encoder, name, result.words, probes)
    if result.missing:
        st.caption(_probes_note(name, probes, result.missing))


def _probes_note(model: str, probes: dict, missing: list[str]) -> str:
    """One note: the probes this lens has for ``model``, those it lacks and how to add them."""
    have = ", ".join(TASK_NAMES.get(t, t) for t in LENS_TASKS if t in probes)
    lack = ", ".join(f"{TASK_NAMES.get(t, t)} (`--task {t}`)" for t in missing)
    return (
        f"Probes saved for {model}: {have}. Not trained for it: {lack}; add one with "
        f"`python -m probing probe --model {model} --task TASK --save-probes --out results/ --overwrite`."
    )


def _labels_part(result: LensResult, has_gold: bool, probes: dict) -> None:
    table = result.labels
    shown = set(table["task"]) if not table.empty else set()
    for task in [t for t in LENS_TASKS if t in shown or t in result.absent]:
        st.subheader(TASK_NAMES.get(task, task))
        if task in result.absent:  # a saved probe with nothing to say here: say why
            st.info(
                f"Not shown for this sentence: {result.absent[task]}. Pick “a UD-EWT test "
                "sentence (gold labels)” above to see it."
            )
            continue
        rows = table[table["task"] == task]
        masked = result.masked.get(task, {})
        st.plotly_chart(label_grid(rows, result.words, masked=masked), key=f"lens_grid_{task}")
        if masked:
            st.caption(_masked_note(task, masked, result.words))
        top = rows[rows["layer"] == rows["layer"].max()]
        cols = ["word", "final", "first_layer"]
        cols += ["gloss", "source"] if task == "wsd" else []
        cols += ["gold", "correct"] if has_gold and task != "wsd" else []
        summary = top[cols].rename(
            columns={"final": "top-layer answer", "first_layer": "stable from layer"}
        )
        st.dataframe(summary, hide_index=True, key=f"lens_table_{task}")
        if task == "wsd":
            st.caption(_wsd_note(probes["wsd"].info))
    if not shown:
        return
    st.caption(
        "Colour: the probe's probability for its answer. 'stable from layer': the lowest layer "
        "from which every higher layer gives the top layer's answer."
        + (" ✗: wrong against the gold label." if has_gold else "")
    )


def _masked_note(task: str, masked: dict[int, str], words: list[str]) -> str:
    """Which words are greyed and why (the hover says it per word)."""
    shown = ", ".join(f"“{words[i]}”" for i in sorted(masked)[:8])
    more = f" and {len(masked) - 8} more" if len(masked) > 8 else ""
    what = "Supersenses" if task == "supersense" else "Word senses"
    return (
        f"Grey, no label: {shown}{more}. {what} are defined only for nouns, verbs, adjectives "
        "and adverbs that WordNet has senses for"
        + (" (and named entities)" if task == "supersense" else "")
        + ": the probe is not asked about other words. Hover for each word's reason."
    )


def _wsd_note(info: dict) -> str:
    cov = info.get("centroid_coverage", {})
    share = cov.get("kept_instances", 0) / max(cov.get("polysemous_instances", 1), 1)
    return (
        "Word sense: the SemCor training sense whose centroid (mean vector) is nearest by "
        f"cosine — kept for {cov.get('kept_lemmas', '?')} of the "
        f"{cov.get('polysemous_lemmas', '?')} lemmas with several training senses, those with "
        f"the most occurrences per sense ({share:.0%} of their training occurrences), to keep "
        "the saved file small. Source: nn = nearest "
        "centroid, only = the one sense seen in training, mfs = the most frequent training "
        "sense (centroids not kept), wordnet-first = WordNet's first sense (lemma unseen in "
        "training). Hover for the gloss. UD-EWT has no sense labels, so nothing is marked wrong."
    )


def _trees_part(result: LensResult) -> None:
    dist = result.trees.get("dep-distance")
    depth = result.trees.get("dep-depth")
    if not dist and not depth:
        return
    st.subheader("Structural probes: the tree per layer")
    layers = sorted(dist or depth)
    layer = st.select_slider(
        "Layer",
        layers,
        key=persist("lens_layer", layers[len(layers) // 2], "layer", int, one_of(layers)),
    )
    edges = dist.get(layer, set()) if dist else set()
    root = depth.get(layer) if depth else None
    fig = tree_arcs(result.words, edges, result.gold_edges, root, result.gold_root)
    st.plotly_chart(fig, key="lens_tree")
    if result.gold_edges and edges:
        right = len(edges & result.gold_edges)
        st.caption(
            f"Layer {layer}: {right} of {len(result.gold_edges)} gold edges found "
            "(punctuation included here, unlike the UUAS of the results)."
        )
    elif result.gold_edges is None:
        st.caption(
            "Above the words: the minimum spanning tree of the distance probe's predicted "
            "distances at this layer; star: the depth probe's root. A typed sentence has no "
            "gold tree, so no arc is marked right or wrong."
        )
