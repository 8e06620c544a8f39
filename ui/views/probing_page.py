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
import probing.probes.cost as run_cost
import probing.probes.run as probe_run
from probing import config
from probing.datasets import Sentence
from probing.datasets.upload import (
    MAX_TEST_WORDS,
    MAX_TRAIN_WORDS,
    TEST_EVERY,
    read_conllu_upload,
)
from probing.errors import ContextLensError, ResultFileError
from probing.features import model_fingerprint
from probing.figures.export import figure_bytes
from probing.figures.probing import mdl_figure
from probing.figures.probing_page import (
    headline,
    layer_table,
    mix_weights_figure,
    probing_figure,
    results_csv,
    results_json,
    uses_relative_depth,
)
from probing.probes.meta import RunMeta
from probing.probes.run import DEFAULT_MAX_TRAIN_SENTENCES, ProbeResults
from probing.probes.statements import table_sentence
from probing.probes.store import RunConfig, output_stem, save_results
from probing.probes.tasks import TASKS
from ui import background
from ui.common import friendly_errors, get_encoder, md_text, model_picker, page_header, user_message
from ui.jobs import heavy_job
from ui.state import as_ints, persist
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
    "deprel-hd": "Dependency relation, [h; d; h∘d] (Liu et al.) · UD-EWT",
    "dep-distance": "Tree distance (structural probe, UUAS) · UD-EWT",
    "dep-depth": "Tree depth (structural probe, root accuracy) · UD-EWT",
}

TASK_NOTES = {  # what the probe predicts, in the words of the data set it runs on
    "deprel": "The UD relation (subtypes merged) of each gold arc, predicted from [head vector; "
    "dependent vector] (Tenney et al. 2019's edge probing).",
    "deprel-hd": "The same relations from [head; dependent; head ∘ dependent] (Liu et al. 2019): "
    "the elementwise product lets a linear probe see how the two words' vectors interact.",
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
        ("Each point: F1 of 1-nearest-neighbour to the training sense centroids on that layer; "
         + ("a lemma unseen in training gets its only WordNet sense or no answer (no leak of "
            "WordNet's count-ordered first sense). " if results[0].meta.get("backoff") else
            "lemmas unseen in training back off to WordNet's first sense, which is ordered by "
            "counts that include SemCor's test documents. ") if wsd else
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
        if said := table_sentence(r.comparisons):  # written from the run's comparison table
            st.caption(f"{r.model}: {said}" if len(results) > 1 else said)
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
    show_rigour_notes(results)
    show_mdl(results, key)
    downloads(results, fig, stem, key)


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


def show_rigour_notes(results: Sequence[ProbeResults]) -> None:
    """How the numbers were chosen: seeds, the C choice on dev, the selectivity band."""
    for r in results:
        seeds = r.meta.seeds or [r.meta.seed or 0]
        if r.task == "wsd" or r.meta.C_selection is None:
            continue
        edge = " — at the edge of the grid" if r.meta.C_at_grid_edge else ""
        st.caption(
            f"{r.model}: mean of {len(seeds)} seed(s) (own control labels and training sample "
            f"each; sd in the CSV); C {sorted(set(r.meta.C.values()))} "
            f"({r.meta.C_selection}{edge}). Green band: 95 % interval of the selectivity, "
            "task and control scored on the same resampled sentences."
        )


def show_mdl(results: Sequence[ProbeResults], key: str) -> None:
    """The MDL panel (Voita & Titov 2020), for runs that measured it."""
    for i, r in enumerate(results):
        fig = mdl_figure(r)
        if fig is None:
            continue
        st.plotly_chart(fig, key=f"{key}_mdl_{i}")
        st.caption(
            "MDL probing: the bits needed to transmit the training labels with a probe trained "
            "online on the labels sent so far (blocks at 0.1 … 50 % of the data; the first "
            "block by the uniform code). Shorter codes (higher compression over the uniform "
            "code) mean labels that are easier to extract; the gap between task and control "
            "labels is the complexity-aware counterpart of selectivity."
        )


def render() -> None:
    """Draw the page (everything below the page config)."""
    page_header(
        "Probing",
        "What each layer knows: a linear probe per layer predicts part of speech, supersense or "
        "word sense from the word vectors. Which layers differ, and where syntax and "
        "semantics peak, is read from paired comparisons, not from two intervals.",
    )
    encoders = picked_encoders()
    task, layers, n_train, n_eval = probe_settings(encoders)
    configs = {n: run_config(encoders[n], n, task, layers, n_train, n_eval) for n in encoders}
    shown, current = stored_results(encoders, configs, task)
    run_section(encoders, configs, shown, current)
    if shown:
        runs = [shown[n] for n in configs if n in shown]
        stem = "__".join(output_stem(r.model, r.dataset, r.task) for r in runs)
        with friendly_errors("Drawing the results"):
            show_results(runs, stem, "probe")
    st.divider()
    probing_sweep.render(show_results, friendly_errors)
    st.divider()
    upload_section(encoders, configs, layers, n_train)


def picked_encoders() -> dict:
    """The sidebar's models, loaded; stops the page when none could be."""
    names = model_picker()
    if not names:
        st.info("Pick one or two models in the sidebar.")
        st.stop()
    encoders = {n: e for n in names if (e := get_encoder(n)) is not None}
    if not encoders:
        st.stop()
    return encoders


def layer_choice(encoders: dict, column: DeltaGenerator) -> list[int]:
    """Layers 0 … the deepest picked model's top layer; a shallower model probes those it has."""
    options = list(range(max(e.info.n_layers for e in encoders.values()) + 1))
    chosen = st.session_state[persist("probe_layers", None, "layers", as_ints)]
    if chosen is None or (
        set(chosen) == set(st.session_state.get("_probe_layer_options", [])) and chosen != options
    ):
        st.session_state["probe_layers"] = options  # "all" stays all when the depth changes
    else:
        st.session_state["probe_layers"] = [x for x in chosen if x in options]
    st.session_state["_probe_layer_options"] = options
    return column.multiselect("Layers", options, key="probe_layers",
                              help="0 is the input layer (BERT: embeddings; ELMo: the character-CNN token layer).")  # fmt: skip


def probe_settings(encoders: dict):
    """Task, layers, training-sentence cap and dev/test size; stops when no layer is picked."""
    a, b, c = st.columns([2, 3, 2])
    task_name = a.selectbox(
        "Task",
        WORD_TASKS,
        format_func=lambda t: TASK_LABELS.get(t, t),
        key=persist("probe_task", WORD_TASKS[0], "task", valid=WORD_TASKS.__contains__),
    )
    task = TASKS[task_name]
    a.caption(TASK_NOTES.get(task.name, task.description))
    layers = layer_choice(encoders, b)
    cap = config.limits().max_probe_train_sentences
    presets = config.limits().train_sizes
    preset_train_size(next(iter(encoders)), task, cap, presets)
    n_train = train_size_widget(c, cap, presets)
    with st.expander("Evaluation"):
        eval_presets = config.limits().eval_sizes
        n_eval = st.selectbox(
            "Dev and test sentences (0 = all)", list(eval_presets),
            key=persist("probe_eval", list(eval_presets)[0], "eval", int, list(eval_presets).__contains__),
            help="Fewer makes runs faster and the intervals wider.",
        ) if eval_presets else st.number_input("Dev and test sentences (0 = all)", min_value=0, max_value=100_000,
                                 step=100, key=persist("probe_eval", 0, "eval", int, lambda n: 0 <= n <= 100_000),
                                 help="Fewer makes runs faster and the intervals wider.")  # fmt: skip
    if not layers:
        st.info("Pick at least one layer.")
        st.stop()
    return task, layers, n_train, n_eval


def train_size_widget(column, cap: int, presets) -> int:
    """The training-sentence cap: preset sizes in the shared demo, a slider elsewhere."""
    default = min(DEFAULT_MAX_TRAIN_SENTENCES, cap)
    if presets:
        n_train = column.select_slider(
            "Training sentences", options=list(presets),
            key=persist("probe_train", snap_to_preset(default, presets), "train", int, list(presets).__contains__),
            help="A fixed seeded sample of the training split (the shared demo offers these sizes only).",
        )  # fmt: skip
    else:
        n_train = column.slider(
            "Training sentences", min_value=MIN_TRAIN, max_value=cap, step=10,
            key=persist("probe_train", default, "train", int, lambda v: MIN_TRAIN <= v <= cap),
            help=f"A fixed seeded sample of the training split (at most {cap:,} here).",
        )  # fmt: skip
    n_train = min(int(n_train), cap)  # the cap holds even for a value set around the widget
    return snap_to_preset(n_train, presets)  # a value set around the widget


def precomputed_meta(name: str, task) -> RunMeta | None:
    """Settings of the shipped run of ``name`` on ``task`` (None when there is none)."""
    res = read_results(RESULTS_DIR / f"{output_stem(name, task.default_dataset, task.name)}.json")
    return None if res is None else res.meta


def trains_like(meta: RunMeta, max_train_sentences: int | None) -> bool:
    """True when a cap of ``max_train_sentences`` trains on what the run in ``meta`` did:
    the same cap, or a cap at least as large as the whole split it used ("all")."""
    if meta.max_train_sentences == max_train_sentences:
        return True
    used = meta.n_train_sentences
    return (
        meta.max_train_sentences is None
        and used is not None
        and (max_train_sentences is None or max_train_sentences >= used)
    )


def preset_train_size(name: str, task, cap: int, presets=None) -> None:
    """On a change of task, start the slider where that task's shipped run was made, so that
    the shipped results are shown as current (SemCor runs used the whole training split)."""
    seen = st.session_state.get("_probe_task_seen")
    st.session_state["_probe_task_seen"] = task.name
    if seen == task.name or (seen is None and "probe_train" in st.session_state):
        return
    meta = precomputed_meta(name, task)
    if meta is None:
        return
    size = meta.max_train_sentences or meta.n_train_sentences
    if size:
        size = MIN_TRAIN + math.ceil((int(size) - MIN_TRAIN) / 10) * 10  # on the slider's steps
        st.session_state["probe_train"] = snap_to_preset(max(MIN_TRAIN, min(cap, size)), presets)


def run_config(encoder, name: str, task, layers: list[int], n_train: int, n_eval) -> RunConfig:
    """The run one model gets with the page's settings (its own layers when shallower)."""
    top = encoder.info.n_layers
    mine = tuple(x for x in sorted(layers) if x <= top)
    return RunConfig(
        model=name,
        task=task.name, dataset=task.default_dataset,
        layers=None if mine == tuple(range(top + 1)) else mine,
        max_train_sentences=n_train, max_eval_sentences=int(n_eval) or None,
    )  # fmt: skip


def stored_results(encoders: dict, configs: dict[str, RunConfig], task):
    """Results already on disk for each model, and which match the settings; notes shown."""
    shown: dict[str, ProbeResults] = {}
    current: set[str] = set()  # models whose shown results were made with the settings above
    notes: list[tuple[str, str | None]] = []  # (what is shown, the command that made it)
    with friendly_errors("Loading results"):
        for name, cfg in configs.items():
            res, is_current, note = stored_result(encoders[name], name, cfg, task)
            notes.append(note)
            if res is not None:
                shown[name] = res
            if is_current:
                current.add(name)
    for note, command in notes:
        st.markdown(note)
        if command:
            st.code(command, language="bash", wrap_lines=True)
    return shown, current


def stored_result(encoder, name: str, cfg: RunConfig, task):
    """(results or None, made with these settings?, (note, command)) for one model."""
    stored = cfg.stored_path(model_fingerprint(encoder))
    if (res := read_results(stored)) is not None:
        t = res.meta.timing_s
        return res, True, (f"**{name}**: run in this app with these settings "
                           f"({res.meta.n_train_sentences or '?'} training sentences; "
                           f"{t.get('extract', '?')} s extracting, {t.get('fit', '?')} s fitting).", None)  # fmt: skip
    pre = RESULTS_DIR / f"{output_stem(name, cfg.dataset, task.name)}.json"
    if (res := read_results(pre)) is None:
        return None, False, (f"**{name}**: nothing computed yet for {TASK_LABELS.get(task.name, task.name)} "
                             "with these settings; press Run (features are cached on disk, so only the "
                             "first run extracts them).", None)  # fmt: skip
    all_layers = list(range(encoder.info.n_layers + 1))
    if (res.meta.layers == list(cfg.layers or all_layers)
            and trains_like(res.meta, cfg.max_train_sentences)
            and cfg.max_eval_sentences is None):  # fmt: skip
        return (
            res,
            True,
            (
                f"**{name}**: precomputed results (`results/{pre.name}`), made with",
                res.meta.command,
            ),
        )
    n_pre = res.meta.max_train_sentences
    layers_pre = res.meta.layers
    note = (
        f"**{name}**: precomputed results (`results/{pre.name}`) with other settings "
        f"({'all' if n_pre is None else n_pre} training sentences, "
        + ("all layers" if layers_pre == all_layers else f"layers {', '.join(map(str, layers_pre))}")
        + ", all dev/test sentences); press Run for yours. Made with"
    )  # fmt: skip
    return res, False, (note, res.meta.command)


def run_estimate(encoders: dict, configs: dict[str, RunConfig], label: str) -> str:
    """What pressing the button will cost, said before it is pressed: a model's own last run
    of these settings when there is one (its fitting time), else the costs measured for the
    model and task (``results/run_costs.json``); extraction is counted only for splits not in
    the feature cache."""
    parts, total, unknown, measured = [], 0.0, False, False
    for name, cfg in configs.items():
        encoder = encoders[name]
        last = read_results(cfg.stored_path(model_fingerprint(encoder)))
        if last is not None and last.meta.timing_s.get("fit") is not None:
            fit = float(last.meta.timing_s["fit"])
            est = _first_run_estimate(encoder, cfg)  # extraction only if the cache lost them
            again = est[0] if isinstance(est, tuple) else 0.0
            seconds, measured = fit + again, measured or again > 0
            cached = ("; features cached" if not again else
                      f", plus {_duration(again)} extracting again (features no longer cached)")  # fmt: skip
            parts.append(f"{name}: ~{_duration(seconds)}, as its last run of these settings "
                         f"fitted{cached}")  # fmt: skip
        elif isinstance(est := _first_run_estimate(encoder, cfg), tuple):
            seconds, measured = sum(est), True
            extract = (f"{_duration(est[0])} extracting {_splits_to_encode(encoder, cfg)} + "
                       if est[0] else "features cached, ")  # fmt: skip
            parts.append(f"{name}: {extract}{_duration(est[1])} fitting")
        else:
            unknown = True
            parts.append(f"{name}: {est}")
            continue
        total += seconds
    # The costs were measured on an idle machine: a busy one (other sessions, other jobs)
    # takes longer, by about its load per core.
    factor = run_cost.load_factor() if measured else 1.0
    head = (f"**{label}** takes about {_duration(total * factor)}" if total
            else f"**{label}**: time unknown")  # fmt: skip
    if total and unknown:
        head += " plus the unmeasured model"
    source = ", from run times measured on 2 CPU cores (idle)" if measured else ""
    if factor > 1.2:
        source += f", × {factor:.1f} for this machine's current load"
    return f"{head} ({'; '.join(parts)}){source}."


def _splits_to_encode(encoder, cfg: RunConfig) -> str:  # noqa: ANN001
    """``"(train 20, dev 1,636, test 2,555 sentences)"``: every split not yet cached."""
    try:
        plan = run_cost.extraction_plan(encoder, cfg)
    except ContextLensError:
        return ""
    todo = [f"{split} {n:,}" for split, (n, cached) in plan.items() if not cached]
    return f"({', '.join(todo)} sentences)" if todo else ""


def _first_run_estimate(encoder, cfg: RunConfig) -> tuple[float, float] | str:  # noqa: ANN001
    """(extraction s, fitting s) from the measured costs, or why there is no estimate
    (pressing Run says more when the data cannot be read)."""
    try:
        est = run_cost.estimate_seconds(encoder, cfg)
    except ContextLensError:
        return "time unknown: its data could not be read"
    if est is None:
        return "not measured for this model and task (minutes for thousands of sentences)"
    return est


def _duration(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 90 else f"{seconds / 60:.1f} min"


def run_section(encoders: dict, configs: dict[str, RunConfig], shown: dict, current: set) -> None:
    """The Run button: probes what is not yet computed with these settings (else all again).

    The run goes on in the background (:mod:`ui.background`): a change of page does not
    cancel it, and its progress is shown again on return.
    """
    key = background.session_key("probe")
    # A run of these settings started from a tab since closed is found by its settings.
    shared = background.shared_key("probe", sorted(configs.items()))
    ended = background.collect(key) or background.collect(shared)
    if ended is not None:
        st.session_state["_probe_error"] = ended.error
    if (error := st.session_state.get("_probe_error")) is not None:
        with friendly_errors("Probing"):  # after a failure the error stays in view
            raise error
    to_run = [n for n in configs if n not in current] or list(configs)
    label = "Run again" if len(current) == len(configs) else "Run"
    run_key = key if background.get(key) is not None else shared
    running = background.get(run_key)
    if running is None:
        st.caption(run_estimate(encoders, {n: configs[n] for n in to_run}, label))
    keep = st.toggle("Keep running if I close this tab", value=not config.demo_mode(),
                     key="probe_keep", disabled=running is not None,
                     help="The run then goes on without this tab (within the server's job "
                     "budget); open the Probing page with the same settings to see it.")  # fmt: skip
    clicked = st.button(label, type="primary", key="probe_run", disabled=running is not None,
                        help="Extract features (cached on disk) and fit the probes with the settings above."
                        " The run goes on if you change page.")  # fmt: skip
    if clicked and running is None:
        st.session_state["_probe_error"] = None
        jobs = {n: configs[n] for n in to_run}
        background.start(key, "Probing", lambda sink: probe_models(encoders, jobs, sink),
                         detached=keep, shared_key=shared)  # fmt: skip
        run_key, running = key, background.get(key)
    if running is not None:
        note = "" if clicked else "Your probe run is still going; it goes on if you change page."
        if run_key == shared:
            note = ("A run of these settings, started earlier (from a tab since closed), is still "
                    "going; its results appear here when it ends.")  # fmt: skip
        background.show_progress(run_key, note)


def probe_models(encoders: dict, configs: dict[str, RunConfig], sink) -> list[str]:
    """Probe each model with its settings and store the results (a background thread)."""
    finished = []
    for i, (name, cfg) in enumerate(configs.items()):
        # Reading and fingerprinting the splits comes before the first progress event.
        sink.progress(i / len(configs), f"{name}: reading the data and the feature cache…")
        res = probe_run.probe_layers(
            encoders[name], cfg.task, cfg.dataset, layers=cfg.layers,
            progress=progress_callback(sink, name, i, len(configs)),
            max_train_sentences=cfg.max_train_sentences,
            max_dev_sentences=cfg.max_eval_sentences, max_test_sentences=cfg.max_eval_sentences,
        )  # fmt: skip
        res.meta.command = "Probing page: " + ", ".join(f"{k}={v}" for k, v in asdict(cfg).items())
        save_results(res, cfg.stored_path(model_fingerprint(encoders[name])))
        finished.append(name)
    return finished


@st.cache_data(max_entries=4, show_spinner=False)
def read_upload(data: bytes, name: str) -> list[Sentence]:
    return read_conllu_upload(data, config.limits().max_upload_bytes, name=name)


def upload_task_name(task: str) -> str:
    """A task without the data set its shipped runs use ("UPOS", not "UPOS · UD-EWT")."""
    return TASK_LABELS.get(task, task).split(" · ")[0]


def upload_task_label(task: str) -> str:
    """A task on the user's file and the column it reads: "UPOS · UPOS, 4th column"."""
    field, nth = (
        upload_module.COLUMN_NAMES[upload_module.UPLOAD_TASKS[task]].rstrip(")").split(" (")
    )
    return f"{upload_task_name(task)} · {field}, {nth} column"


def upload_section(encoders: dict, configs: dict, layers: list[int], n_train: int) -> None:
    """Probes (UPOS, XPOS, relations, structural) on the user's own CoNLL-U file, held-out
    every TEST_EVERY-th sentence."""
    st.subheader("Your own data: probes on a CoNLL-U file")
    max_mb = config.limits().max_upload_bytes / (1024 * 1024)
    st.caption(
        f"Upload a CoNLL-U file (UTF-8, up to {max_mb:g} MB): UPOS (4th column), XPOS (5th), "
        "heads and relations (7th, 8th) can be probed, each when the file has it. Every "
        f"{TEST_EVERY}th sentence (the 5th, 10th, … in file order) is held out for testing, the "
        "others train the probes (80/20); the same layers and training-sentence cap as above "
        f"apply, and at most {MAX_TRAIN_WORDS:,} training and {MAX_TEST_WORDS:,} test words (the "
        "first sentences) are encoded. Probes choose their regularisation on 10 % of the training "
        "words."
    )
    upload = st.file_uploader("CoNLL-U file", type=["conllu", "conll", "txt"], key="probe_upload",
                              max_upload_size=max(1, math.ceil(max_mb)))  # fmt: skip
    if upload is None:
        return
    sentences = None
    data = upload.getvalue()
    with friendly_errors("Reading the file"):
        sentences = read_upload(data, upload.name)
    if not sentences:
        return
    n_test = len(sentences) // TEST_EVERY
    st.markdown(f"**{md_text(upload.name)}**: {len(sentences):,} sentences, "
                f"{sum(len(s) for s in sentences):,} words → {len(sentences) - n_test:,} to train "
                f"(at most {n_train:,} used), {n_test:,} to test.")  # fmt: skip
    digest = hashlib.sha256(data).hexdigest()[:16]
    key = (digest, tuple(configs), tuple(sorted(layers)), n_train)
    done: dict = st.session_state.setdefault("probe_upload_results", {})
    up_task = st.selectbox("Task on the upload", list(upload_module.UPLOAD_TASKS),
                           format_func=upload_task_label, key="probe_upload_task")  # fmt: skip
    key = (*key, up_task)
    if st.button(f"Probe {upload_task_name(up_task)} on {md_text(upload.name)}",
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
