"""Probing: what each layer knows — linear probes for part of speech, supersense and word sense on every layer, with control tasks, baselines and the scalar mix.

Widgets here, computation in ``probing.probes`` (data sets) and ``probing.datasets.upload`` (your own
CoNLL-U file), drawing in ``probing.figures.probing`` / ``probing.figures.probing_page``.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path

import plotly.graph_objects as go
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

import probing.datasets.upload as upload_module
import probing.figures.export as export
import probing.probes.run as probe_run
from probing import config
from probing.datasets import Sentence
from probing.datasets.upload import (
    MAX_TEST_WORDS,
    MAX_TRAIN_WORDS,
    TEST_EVERY,
    read_conllu_upload,
)
from probing.errors import ResultFileError
from probing.features import model_fingerprint
from probing.figures.export import figure_bytes
from probing.figures.probing_page import (
    headline,
    layer_table,
    mix_weights_figure,
    probing_figure,
    results_csv,
    results_json,
    uses_relative_depth,
)
from probing.probes.run import DEFAULT_MAX_TRAIN_SENTENCES, ProbeResults
from probing.probes.store import RunConfig, output_stem, save_results
from probing.probes.tasks import TASKS
from ui.common import friendly_errors, get_encoder, md_text, model_picker, page_header, user_message
from ui.jobs import heavy_job
from ui.views import probing_sweep

RESULTS_DIR = config.REPO_ROOT / "results"  # precomputed by `python -m probing probe`

# Sentence tasks (genre) run from the CLI and the Course Notes page, not from this page.
WORD_TASKS = [t for t in TASKS if TASKS[t].kind != "sentence"]
TASK_LABELS = {
    "pos": "UPOS · UD-EWT",
    "xpos": "XPOS (PTB tags) · UD-EWT",
    "ptb-pos": "PTB POS · SemCor",
    "supersense": "Supersense · SemCor",
    "wsd": "Word sense (WSD) · SemCor",
    "deprel": "Dependency relation (edge probe) · UD-EWT",
    "dep-distance": "Tree distance (structural probe, UUAS) · UD-EWT",
    "dep-depth": "Tree depth (structural probe, root accuracy) · UD-EWT",
}

TASK_NOTES = {  # what the probe predicts, in the words of the data set it runs on
    "deprel": "The UD relation (subtypes merged) of each gold arc, predicted from [head vector; "
    "dependent vector] (Tenney et al. 2019's edge probing).",
    "dep-distance": "Hewitt & Manning's (2019) distance probe: a rank-128 linear map whose squared "
    "distances match tree distances; UUAS of its minimum spanning tree (punctuation left out).",
    "dep-depth": "Hewitt & Manning's (2019) depth probe: squared norms match tree depths; root "
    "accuracy and Spearman.",
    "pos": "The 17 universal part-of-speech tags of UD-EWT (syntax).",
    "xpos": "The Penn Treebank tags (XPOS) of UD-EWT: finer syntax (tense, number, …).",
    "ptb-pos": "Penn Treebank tags on SemCor (coarse there: SemCor writes NN/VB for most forms).",
    "supersense": "The WordNet supersense (45 lexicographer files, e.g. noun.animal) of "
    "sense-tagged SemCor words: coarse semantics.",
    "wsd": "The WordNet 3.0 sense of each SemCor word, by 1-nearest-neighbour to training "
    "sense centroids; scored by F1, with WordNet's first sense as the baseline (fine semantics).",
}

MIN_TRAIN = 20

# Where a run spends its time, for one progress bar over all stages and models.
STAGES = {
    "extract train": (0.0, 0.35, "extracting features: training sentences"),
    "extract dev": (0.35, 0.45, "extracting features: dev sentences"),
    "extract test": (0.45, 0.6, "extracting features: test sentences"),
    "fit": (0.6, 1.0, "fitting probes"),
}


@st.cache_data(max_entries=64, show_spinner=False)
def load_results(path: str, mtime_ns: int) -> ProbeResults:
    """ProbeResults from a JSON file, cached per (file, version): reruns are instant."""
    return ProbeResults.from_json(path)


def read_results(path: Path) -> ProbeResults | None:
    """The results in ``path`` (None when there are none); a damaged file is named in a
    warning and skipped, so that the other models' results still show."""
    if not path.is_file():
        return None
    try:
        return load_results(str(path), path.stat().st_mtime_ns)
    except Exception as exc:  # truncated or hand-edited JSON: say which file, show the rest
        err = ResultFileError(f"{path.name} cannot be read ({type(exc).__name__}: {exc}).")
        st.warning(f"Skipped a damaged results file: {md_text(user_message(err))} "
                   "Press Run to compute these results again.")  # fmt: skip
        return None


def downloads(results: Sequence[ProbeResults], fig: go.Figure, stem: str, key: str) -> None:
    """CSV, JSON and PNG (HTML where no Chrome can render PNG), made only when clicked."""
    cols = st.columns([1, 1, 1, 5])
    cols[0].download_button("CSV", data=lambda: results_csv(results), file_name=f"{stem}.csv",
                            mime="text/csv", key=f"{key}_csv", on_click="ignore",
                            icon=":material/table:")  # fmt: skip
    cols[1].download_button("JSON", data=lambda: results_json(results), file_name=f"{stem}.json",
                            mime="application/json", key=f"{key}_json", on_click="ignore",
                            icon=":material/data_object:")  # fmt: skip
    if export.image_export_available():
        cols[2].download_button("PNG", data=lambda: figure_bytes(fig, "png"), file_name=f"{stem}.png",
                                mime="image/png", key=f"{key}_png", on_click="ignore",
                                icon=":material/download:")  # fmt: skip
    else:
        cols[2].download_button("HTML", data=lambda: figure_bytes(fig, "html"), file_name=f"{stem}.html",
                                mime="text/html", key=f"{key}_html", on_click="ignore",
                                icon=":material/download:")  # fmt: skip
        cols[3].caption("PNG export needs a Chrome or Chromium for kaleido and none was found "
                        "here, so the figure downloads as interactive HTML instead.")  # fmt: skip


def snap_to_preset(n: int, presets: Sequence[int] | None) -> int:
    """``n`` when it is a preset (or there are none), else the largest preset below it."""
    if not presets or n in presets:
        return n
    return max([p for p in presets if p <= n] or [presets[0]])


def bootstrap_units(results: Sequence[ProbeResults]) -> str:
    """``sentences`` (runs since the sentence bootstrap), else ``words`` (older stored runs)."""
    units = {r.meta.bootstrap_unit for r in results}
    if len(units) > 1:
        return "sentences or words, by run"
    return f"{units.pop()}s"


def show_results(results: Sequence[ProbeResults], stem: str, key: str) -> None:
    """The curves, how to read them, the scalar-mix weights, the numbers and the downloads."""
    fig = probing_figure(results)
    st.plotly_chart(fig, key=f"{key}_curve")
    wsd = results[0].task == "wsd"
    st.caption(
        ("Each point: F1 of 1-nearest-neighbour to the training sense centroids on that layer, "
         "with the WordNet first sense for lemmas unseen in training. " if wsd else
         "Each point: a structural probe (Hewitt & Manning 2019) on that layer's vectors: UUAS "
         "(distance probe) or root accuracy (depth probe) on the test split, punctuation left "
         "out; baselines: the right-branching tree and the probe on static vectors. "
         if results[0].task in ("dep-distance", "dep-depth") else
         "Each point: accuracy of a linear probe on that layer's word vectors. Control task "
         "(Hewitt & Liang 2019): the same probe on labels assigned at random per word type; "
         "selectivity = task − control, high when the layer's vectors, not the probe's "
         "memory, carry the labels. ")
        + f"Bands: 95 % bootstrap intervals (test {bootstrap_units(results)} resampled). "
        "Horizontal lines: baselines. "
        "Centre of gravity (Tenney et al. 2019): the layer at which, on average, the score's "
        "gains appear. "
        + ("The models differ in depth, so x is relative depth (layer ÷ number of contextual "
           "layers: 0 = input, 1 = top), which lines up ELMo's 2 layers with BERT's 6 or 12; "
           "hover for the real layer." if uses_relative_depth(results) else
           "x is the layer; 0 is the model's input layer (BERT: embeddings; ELMo: the "
           "character-CNN token layer).")
    )  # fmt: skip
    for r in results:
        st.markdown(headline(r))
    mix = mix_weights_figure(results)
    left, right = st.columns([2, 3]) if mix is not None else (None, st.container())
    if mix is not None:
        left.plotly_chart(mix, key=f"{key}_mix")
        left.caption("Scalar mix (Peters et al. 2018): one probe on a learned softmax-weighted sum "
                     "of all probed layers; the weights say which layers the task draws on.")  # fmt: skip
    elif wsd:
        right.caption("WSD uses nearest sense centroids per layer, so there is no scalar mix.")
    table = layer_table(results)
    three = {c: st.column_config.NumberColumn(format="%.3f") for c in table.columns[2:-1]}
    right.dataframe(table, hide_index=True, key=f"{key}_table",
                    column_config={**three, "n": st.column_config.NumberColumn("test words")})  # fmt: skip
    downloads(results, fig, stem, key)


def render() -> None:
    """Draw the page (everything below the page config)."""
    page_header(
        "Probing",
        "What each layer knows: a linear probe per layer predicts part of speech, supersense or "
        "word sense from the word vectors. Syntax peaks low, semantics higher up.",
    )

    def progress_callback(
        bar: DeltaGenerator, model: str, index: int, n_models: int
    ) -> Callable[[str, int, int], None]:
        """(stage, done, total) -> one bar over every model's extraction then fitting."""

        def report(stage: str, done: int, total: int) -> None:
            lo, hi, what = STAGES.get(stage, (0.0, 1.0, stage))
            frac = lo + (hi - lo) * (done / total if total else 1.0)
            unit = "steps" if stage == "fit" else "sentences"
            prefix = f"{model} ({index + 1}/{n_models})" if n_models > 1 else model
            bar.progress(
                min(1.0, (index + frac) / n_models), text=f"{prefix}: {what}, {done}/{total} {unit}"
            )

        return report

    names = model_picker()

    if not names:
        st.info("Pick one or two models in the sidebar.")
        st.stop()

    encoders = {n: e for n in names if (e := get_encoder(n)) is not None}

    if not encoders:
        st.stop()

    a, b, c = st.columns([2, 3, 2])

    task_name = a.selectbox(
        "Task", WORD_TASKS, format_func=lambda t: TASK_LABELS.get(t, t), key="probe_task"
    )

    task = TASKS[task_name]

    dataset = task.default_dataset

    a.caption(TASK_NOTES.get(task.name, task.description))

    # Layers: 0 … the deepest picked model's top layer; a shallower model probes those it has.
    options = list(range(max(e.info.n_layers for e in encoders.values()) + 1))

    chosen = st.session_state.get("probe_layers")

    if chosen is None or (
        set(chosen) == set(st.session_state.get("_probe_layer_options", [])) and chosen != options
    ):
        st.session_state["probe_layers"] = options  # "all" stays all when the depth changes
    else:
        st.session_state["probe_layers"] = [x for x in chosen if x in options]

    st.session_state["_probe_layer_options"] = options

    layers = b.multiselect("Layers", options, key="probe_layers",
                           help="0 is the input layer (BERT: embeddings; ELMo: the character-CNN token layer).")  # fmt: skip

    cap = config.limits().max_probe_train_sentences
    presets = config.limits().train_sizes

    n_train = c.select_slider(
        "Training sentences", options=list(presets), value=min(DEFAULT_MAX_TRAIN_SENTENCES, cap),
        key="probe_train", help="A fixed seeded sample of the training split (the shared demo "
        "offers these sizes only).",
    ) if presets else c.slider(
        "Training sentences", min_value=MIN_TRAIN, max_value=cap, step=10,
        value=min(DEFAULT_MAX_TRAIN_SENTENCES, cap), key="probe_train",
        help=f"A fixed seeded sample of the training split (at most {cap:,} here"
        + (" in the shared demo)." if config.demo_mode() else ")."),
    )  # fmt: skip

    n_train = min(int(n_train), cap)  # the cap holds even for a value set around the widget
    n_train = snap_to_preset(n_train, presets)  # a value set around the widget

    with st.expander("Evaluation"):
        eval_presets = config.limits().eval_sizes
        n_eval = st.selectbox(
            "Dev and test sentences (0 = all)", list(eval_presets), key="probe_eval",
            help="Fewer makes runs faster and the intervals wider.",
        ) if eval_presets else st.number_input("Dev and test sentences (0 = all)", min_value=0, max_value=100_000,
                                 value=0, step=100, key="probe_eval",
                                 help="Fewer makes runs faster and the intervals wider.")  # fmt: skip

    if not layers:
        st.info("Pick at least one layer.")
        st.stop()

    def run_config(name: str) -> RunConfig:
        top = encoders[name].info.n_layers
        mine = tuple(x for x in sorted(layers) if x <= top)
        return RunConfig(
            model=name,
            task=task.name, dataset=dataset,
            layers=None if mine == tuple(range(top + 1)) else mine,
            max_train_sentences=n_train, max_eval_sentences=int(n_eval) or None,
        )  # fmt: skip

    configs = {n: run_config(n) for n in encoders}

    shown: dict[str, ProbeResults] = {}

    current: set[str] = set()  # models whose shown results were made with the settings above

    notes: list[tuple[str, str | None]] = []  # (what is shown, the command that made it)

    with friendly_errors("Loading results"):
        for name, cfg in configs.items():
            stored = cfg.stored_path(model_fingerprint(encoders[name]))
            if (res := read_results(stored)) is not None:
                shown[name] = res
                current.add(name)
                t = res.meta.timing_s
                notes.append((f"**{name}**: run in this app with these settings "
                              f"({res.meta.n_train_sentences or '?'} training sentences; "
                              f"{t.get('extract', '?')} s extracting, {t.get('fit', '?')} s fitting).", None))  # fmt: skip
                continue
            pre = RESULTS_DIR / f"{output_stem(name, dataset, task.name)}.json"
            if (res := read_results(pre)) is not None:
                shown[name] = res
                all_layers = list(range(encoders[name].info.n_layers + 1))
                if (res.meta.layers == list(cfg.layers or all_layers)
                        and res.meta.max_train_sentences == cfg.max_train_sentences
                        and cfg.max_eval_sentences is None):  # fmt: skip
                    current.add(name)
                    note = f"**{name}**: precomputed results (`results/{pre.name}`), made with"
                else:
                    n_pre = res.meta.max_train_sentences
                    layers_pre = res.meta.layers
                    note = (
                        f"**{name}**: precomputed results (`results/{pre.name}`) with other settings "
                        f"({'all' if n_pre is None else n_pre} training sentences, "
                        + ("all layers" if layers_pre == all_layers else f"layers {', '.join(map(str, layers_pre))}")
                        + ", all dev/test sentences); press Run for yours. Made with"
                    )  # fmt: skip
                notes.append((note, res.meta.command))
            else:
                notes.append((f"**{name}**: nothing computed yet for {TASK_LABELS.get(task.name, task.name)} "
                              "with these settings; press Run (features are cached on disk, so only the "
                              "first run extracts them).", None))  # fmt: skip

    for note, command in notes:
        st.markdown(note)
        if command:
            st.code(command, language="bash", wrap_lines=True)

    # Run what is not yet computed with these settings; when everything is, run it all again.
    to_run = [n for n in configs if n not in current] or list(configs)

    label = "Run again" if len(current) == len(configs) else "Run"

    if st.button(label, type="primary", key="probe_run",
                 help="Extract features (cached on disk) and fit the probes with the settings above."):  # fmt: skip
        bar = st.progress(0.0, text="Waiting for a free slot…")
        finished = []
        with friendly_errors("Probing"), heavy_job("Probing"):
            for i, name in enumerate(to_run):
                cfg = configs[name]
                res = probe_run.probe_layers(
                    encoders[name], cfg.task, cfg.dataset, layers=cfg.layers,
                    progress=progress_callback(bar, name, i, len(to_run)),
                    max_train_sentences=cfg.max_train_sentences,
                    max_dev_sentences=cfg.max_eval_sentences, max_test_sentences=cfg.max_eval_sentences,
                )  # fmt: skip
                res.meta.command = "Probing page: " + ", ".join(
                    f"{k}={v}" for k, v in asdict(cfg).items()
                )
                save_results(res, cfg.stored_path(model_fingerprint(encoders[name])))
                shown[name] = res
                finished.append(name)
        bar.empty()
        # Redraw from the stored files so that the notes above say what is now shown; after a
        # failure stay on this run, so that its error message stays in view.
        if len(finished) == len(to_run):
            st.rerun()

    if shown:
        runs = [shown[n] for n in configs if n in shown]
        stem = "__".join(output_stem(r.model, r.dataset, r.task) for r in runs)
        with friendly_errors("Drawing the results"):
            show_results(runs, stem, "probe")

    st.divider()

    probing_sweep.render(show_results, friendly_errors)

    st.divider()

    st.subheader("Your own data: UPOS on a CoNLL-U file")

    max_mb = config.limits().max_upload_bytes / (1024 * 1024)

    st.caption(
        f"Upload a CoNLL-U file (UTF-8, up to {max_mb:g} MB) with UPOS tags in the 4th column. Every "
        f"{TEST_EVERY}th sentence (the 5th, 10th, … in file order) is held out for testing, the "
        "others train the probes (80/20); the same layers and training-sentence cap as above "
        f"apply, and at most {MAX_TRAIN_WORDS:,} training and {MAX_TEST_WORDS:,} test words (the "
        "first sentences) are encoded. Probes choose their regularisation on 10 % of the training "
        "words."
    )

    upload = st.file_uploader("CoNLL-U file", type=["conllu", "conll", "txt"], key="probe_upload",
                              max_upload_size=max(1, math.ceil(max_mb)))  # fmt: skip

    @st.cache_data(max_entries=4, show_spinner=False)
    def read_upload(data: bytes, name: str) -> list[Sentence]:
        return read_conllu_upload(data, config.limits().max_upload_bytes, name=name)

    if upload is not None:
        sentences = None
        data = upload.getvalue()
        with friendly_errors("Reading the file"):
            sentences = read_upload(data, upload.name)
        if sentences:
            n_test = len(sentences) // TEST_EVERY
            st.markdown(f"**{md_text(upload.name)}**: {len(sentences):,} sentences, "
                        f"{sum(len(s) for s in sentences):,} words → {len(sentences) - n_test:,} to train "
                        f"(at most {n_train:,} used), {n_test:,} to test.")  # fmt: skip
            digest = hashlib.sha256(data).hexdigest()[:16]
            key = (digest, tuple(configs), tuple(sorted(layers)), n_train)
            done: dict = st.session_state.setdefault("probe_upload_results", {})
            up_task = st.selectbox("Task on the upload", list(upload_module.UPLOAD_TASKS),
                                   format_func=lambda t: TASK_LABELS.get(t, t), key="probe_upload_task")  # fmt: skip
            key = (*key, up_task)
            if st.button(f"Probe {TASK_LABELS.get(up_task, up_task)} on {md_text(upload.name)}",
                         key="probe_upload_run", type="primary"):  # fmt: skip
                bar = st.progress(0.0, text="Waiting for a free slot…")
                with friendly_errors("Probing the upload"), heavy_job("Probing"):
                    runs = []
                    for i, name in enumerate(configs):
                        enc = encoders[name]
                        mine = [x for x in sorted(layers) if x <= enc.info.n_layers]
                        runs.append(upload_module.probe_upload(enc, sentences, layers=mine, max_train_sentences=n_train,
                                                 progress=progress_callback(bar, name, i, len(configs)),
                                                 name=upload.name, task=up_task))  # fmt: skip
                    done.clear()  # keep one upload's results per session, not every one tried
                    done[key] = runs
                bar.empty()
            if key in done:
                stem = "__".join(output_stem(r.model, "upload", r.task) for r in done[key])
                with friendly_errors("Drawing the results"):
                    show_results(done[key], stem, "upload")
