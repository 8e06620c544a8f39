"""Probing: what each layer knows — linear probes for part of speech, supersense and word sense on every layer, with control tasks, baselines and the scalar mix.

Widgets here, computation in ``probing.probes`` (data sets) and ``probing.probes.upload`` (your own
CoNLL-U file), drawing in ``probing.figures.probing`` / ``probing.figures.probing_page``.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Collection, Sequence
from pathlib import Path

import plotly.graph_objects as go
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

import probing.figures.export as export
import probing.probes.cost as run_cost
import probing.probes.upload as upload_module
from probing import config
from probing.datasets import Sentence
from probing.datasets.upload import TEST_EVERY, read_conllu_upload
from probing.errors import ResultFileError
from probing.figures.capacity import capacity_figure, capacity_sentence, load_capacity
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
from probing.probes.defaults import DEFAULT_MAX_TRAIN_SENTENCES
from probing.probes.meta import RunMeta
from probing.probes.results import ProbeResults
from probing.probes.settings import ProbeSettings
from probing.probes.statements import table_sentence
from probing.probes.store import (
    committed_path,
    find_stored,
    output_stem,
    save_results,
    stored_path_of,
)
from probing.probes.tasks import TASKS
from ui import background, tasks
from ui.common import (
    friendly_errors,
    get_encoder,
    md_text,
    model_picker,
    page_header,
    user_message,
    whole_number_input,
)
from ui.jobs import heavy_job, offload
from ui.state import all_of, as_bool, as_ints, from_link, keep, link, persist
from ui.stored_json import committed_claim
from ui.views import probing_sweep

RESULTS_DIR = config.results_dir()  # precomputed by `python -m probing probe`

# Sentence tasks (genre) run from the CLI and the Course Notes page, not from this page.
WORD_TASKS = [t for t in TASKS if TASKS[t].kind != "sentence"]
TASK_LABELS = {t: TASKS[t].label for t in WORD_TASKS}  # the registry's picker labels

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
        st.warning(
            f"Skipped a damaged results file: {md_text(user_message(err))} "
            "Press Run to compute these results again."
        )
        return None


def downloads(results: Sequence[ProbeResults], fig: go.Figure, stem: str, key: str) -> None:
    """CSV, JSON and PNG (HTML where no Chrome can render PNG), made only when clicked."""
    cols = st.columns([1, 1, 1, 5])
    cols[0].download_button(
        "CSV",
        data=lambda: results_csv(results),
        file_name=f"{stem}.csv",
        mime="text/csv",
        key=f"{key}_csv",
        on_click="ignore",
        icon=":material/table:",
    )
    cols[1].download_button(
        "JSON",
        data=lambda: results_json(results),
        file_name=f"{stem}.json",
        mime="application/json",
        key=f"{key}_json",
        on_click="ignore",
        icon=":material/data_object:",
    )
    if export.image_export_available():
        cols[2].download_button(
            "PNG",
            data=lambda: figure_bytes(fig, "png"),
            file_name=f"{stem}.png",
            mime="image/png",
            key=f"{key}_png",
            on_click="ignore",
            icon=":material/download:",
        )
    else:
        cols[2].download_button(
            "HTML",
            data=lambda: figure_bytes(fig, "html"),
            file_name=f"{stem}.html",
            mime="text/html",
            key=f"{key}_html",
            on_click="ignore",
            icon=":material/download:",
        )
        cols[3].caption(
            "PNG export needs a Chrome or Chromium for kaleido and none was found "
            "here, so the figure downloads as interactive HTML instead."
        )


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


def show_results(
    results: Sequence[ProbeResults], stem: str, key: str, committed: Collection[str] = ()
) -> None:
    """The curves, how to read them, the scalar-mix weights, the numbers and the downloads.
    ``committed``: the models whose shown run is the committed one (``results/``), under
    which the committed probe-capacity run is shown too (it says nothing of a user's run)."""
    fig = probing_figure(results)
    st.plotly_chart(fig, key=f"{key}_curve")
    wsd = results[0].task == "wsd"
    st.caption(
        (
            "Each point: F1 of 1-nearest-neighbour to the training sense centroids on that layer; "
            + (
                "a lemma unseen in training gets its only WordNet sense or no answer (no leak of "
                "WordNet's count-ordered first sense). "
                if results[0].meta.get("backoff")
                else "lemmas unseen in training back off to WordNet's first sense, which is ordered by "
                "counts that include SemCor's test documents. "
            )
            if wsd
            else "Each point: a structural probe (Hewitt & Manning 2019) on that layer's vectors: UUAS "
            "(distance probe) or root accuracy (depth probe) on the test split, punctuation left "
            "out; baselines: the right-branching tree and the probe on static vectors. "
            if results[0].task in ("dep-distance", "dep-depth")
            else "Each point: accuracy of a linear probe on that layer's word vectors. Control task "
            "(Hewitt & Liang 2019): the same probe on labels assigned at random per word type; "
            "selectivity = task − control, high when the layer's vectors, not the probe's "
            "memory, carry the labels. "
        )
        + f"Bands: 95 % bootstrap intervals (test {bootstrap_units(results)} resampled). "
        "Horizontal lines: baselines. "
        "Centre of gravity (Tenney et al. 2019): the layer at which, on average, the score's "
        "gains appear. "
        + (
            "The models differ in depth, so x is relative depth (layer ÷ number of contextual "
            "layers: 0 = input, 1 = top), which lines up ELMo's 2 layers with BERT's 6 or 12; "
            "hover for the real layer."
            if uses_relative_depth(results)
            else "x is the layer; 0 is the model's input layer (BERT: embeddings; ELMo: the "
            "character-CNN token layer)."
        )
    )
    for r in results:
        st.markdown(headline(r))
        run = f"{r.model}__{r.dataset}__{r.task}"
        claims = [
            c
            for c in (committed_claim(RESULTS_DIR, f"{k}:{run}") for k in ("peak", "baselines"))
            if c and r.model in committed
        ]
        if claims:  # the committed run: the claims docs/results.md states (issue 40)
            st.caption(" ".join(c["text"] for c in claims) + f" ({claims[0]['correction']}.)")
        elif said := table_sentence(r.comparisons):  # a run made here: its own table
            st.caption(f"{r.model}: {said}" if len(results) > 1 else said)
    mix = mix_weights_figure(results)
    left, right = st.columns([2, 3]) if mix is not None else (None, st.container())
    if mix is not None:
        left.plotly_chart(mix, key=f"{key}_mix")
        left.caption(
            "Scalar mix (Peters et al. 2018): one probe on a learned softmax-weighted sum "
            "of all probed layers; the weights say which layers the task draws on."
        )
    elif wsd:
        right.caption("WSD uses nearest sense centroids per layer, so there is no scalar mix.")
    table = layer_table(results)
    three = {c: st.column_config.NumberColumn(format="%.3f") for c in table.columns[2:-1]}
    right.dataframe(
        table,
        hide_index=True,
        key=f"{key}_table",
        column_config={**three, "n": st.column_config.NumberColumn("test words")},
    )
    show_rigour_notes(results)
    show_mdl(results, key)
    show_capacity([r for r in results if r.model in committed], key)
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


def show_capacity(results: Sequence[ProbeResults], key: str) -> None:
    """Selectivity of the linear probe and an MLP-1 per layer, where the committed
    capacity run (results/capacity/) covers the model and task."""
    for i, r in enumerate(results):
        table = load_capacity(RESULTS_DIR, r.model, r.dataset, r.task)
        if table is None:
            continue
        st.plotly_chart(capacity_figure(table), key=f"{key}_capacity_{i}")
        st.caption(
            "Probe capacity (Hewitt & Liang 2019): the linear probe and a one-hidden-layer MLP "
            "trained on the same words, each on the task and on the same control labels "
            f"(committed run, `{table['command']}`). A probe with more capacity memorises "
            f"more of the control task, so its selectivity may fall. {r.model}: "
            + (
                f"{claim['text']} ({claim['correction']}: the claim of docs/results.md.)"
                if (
                    claim := committed_claim(
                        RESULTS_DIR, f"capacity:{r.model}__{r.dataset}__{r.task}"
                    )
                )
                else capacity_sentence(table)
            )
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
    shown, current, committed = stored_results(encoders, configs, task)
    run_section(encoders, configs, shown, current)
    if shown:
        runs = [shown[n] for n in configs if n in shown]
        stem = "__".join(output_stem(r.model, r.dataset, r.task) for r in runs)
        with friendly_errors("Drawing the results"):
            show_results(runs, stem, "probe", committed)
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
    """Layers 0 … the deepest picked model's top layer; a shallower model probes those it has.

    "All layers" stays all when the models change (minilm-l6's 0–6 become mpnet-base's
    0–12) and is left out of the address, so that a link opens all of its models' layers;
    a chosen subset is kept while the models have those layers, else falls back to all.
    """
    options = list(range(max(e.info.n_contextual_layers for e in encoders.values()) + 1))
    ss = st.session_state
    before = ss.get("_probe_layer_options")
    key = persist(
        "probe_layers",
        options,
        "layers",
        lambda text: list(dict.fromkeys(as_ints(text))),  # in the order picked, once each
        valid=all_of(options),
        show=lambda v: None if sorted(v) == options else v,
    )
    chosen = ss[key]
    if before is not None and before != options and sorted(chosen) == before:
        chosen = options  # all of the models before: all of these
    ss["_probe_layer_options"] = options
    if chosen != ss[key]:
        keep(key, chosen)  # (a return to the page finds the derived value)
        link("layers", None)  # all
    return column.multiselect(
        "Layers",
        options,
        key=key,
        help="0 is the input layer (BERT: embeddings; ELMo: the character-CNN token layer).",
    )


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
    a.caption(task.note or task.description)
    layers = layer_choice(encoders, b)
    cap = config.limits().max_probe_train_sentences
    presets = config.limits().train_sizes
    preset_train_size(next(iter(encoders)), task, cap, presets)
    n_train = train_size_widget(c, cap, presets)
    with st.expander("Evaluation"):
        eval_presets = config.limits().eval_sizes
        n_eval = (
            st.selectbox(
                "Dev and test sentences (0 = all)",
                list(eval_presets),
                key=persist(
                    "probe_eval",
                    list(eval_presets)[0],
                    "eval",
                    int,
                    list(eval_presets).__contains__,
                ),
                help="Fewer makes runs faster and the intervals wider.",
            )
            if eval_presets
            else whole_number_input(
                "Dev and test sentences (0 = all)",
                0,
                100_000,
                step=100,
                key=persist("probe_eval", 0, "eval", int, lambda n: 0 <= n <= 100_000),
                help="Fewer makes runs faster and the intervals wider.",
            )
        )
    if not layers:
        st.info("Pick at least one layer.")
        st.stop()
    return task, layers, n_train, n_eval


def train_size_fits(cap: int, presets) -> Callable[[int], bool]:
    """Which training-sentence caps the page takes: the demo's presets, else any whole
    number from MIN_TRAIN to ``cap``."""
    if presets:
        return list(presets).__contains__
    return lambda v: MIN_TRAIN <= v <= cap


def train_size_widget(column, cap: int, presets) -> int:
    """The training-sentence cap: preset sizes in the shared demo, a number box elsewhere
    (a slider over 20 … 20,000 could not be set to a given size)."""
    default = min(DEFAULT_MAX_TRAIN_SENTENCES, cap)
    fits = train_size_fits(cap, presets)
    if presets:
        n_train = column.select_slider(
            "Training sentences",
            options=list(presets),
            key=persist("probe_train", snap_to_preset(default, presets), "train", int, fits),
            help="A fixed seeded sample of the training split (the shared demo offers these sizes only).",
        )
    else:
        n_train = whole_number_input(
            "Training sentences",
            MIN_TRAIN,
            cap,
            step=10,
            key=persist("probe_train", default, "train", int, fits),
            where=column,
            help=f"A fixed seeded sample of the training split ({MIN_TRAIN:,} to {cap:,} "
            "sentences here; more than the split has means all of it).",
        )
    n_train = min(int(n_train), cap)  # the cap holds even for a value set around the widget
    return snap_to_preset(n_train, presets)  # a value set around the widget


def precomputed_meta(name: str, task) -> RunMeta | None:
    """Settings of the shipped run of ``name`` on ``task`` (None when there is none)."""
    res = read_results(committed_path(ProbeSettings(model=name, task=task.name), RESULTS_DIR))
    return None if res is None else res.meta


def preset_train_size(name: str, task, cap: int, presets=None) -> None:
    """On a change of task, start the training size where that task's shipped run was made,
    so that the shipped results are shown as current (SemCor runs used the whole training
    split). Not over a size the session already has on its first visit, nor over a link's."""
    seen = st.session_state.get("_probe_task_seen")
    st.session_state["_probe_task_seen"] = task.name
    if seen == task.name:
        return
    if seen is None and (
        "probe_train" in st.session_state
        or train_size_fits(cap, presets)(from_link("train", int, key="probe_train") or 0)
    ):
        return
    meta = precomputed_meta(name, task)
    if meta is None:
        return
    size = meta.max_train_sentences or meta.n_train_sentences
    if size:
        st.session_state["probe_train"] = snap_to_preset(max(MIN_TRAIN, min(cap, size)), presets)


def run_config(encoder, name: str, task, layers: list[int], n_train: int, n_eval) -> ProbeSettings:
    """The run one model gets with the page's settings (its own layers when shallower)."""
    top = encoder.info.n_contextual_layers
    mine = tuple(x for x in sorted(layers) if x <= top)
    n_eval = int(n_eval) or None
    return ProbeSettings(
        model=name,
        task=task.name,
        dataset=task.default_dataset,
        layers=None if mine == tuple(range(top + 1)) else mine,
        max_train_sentences=n_train,
        max_dev_sentences=n_eval,
        max_test_sentences=n_eval,
    )


def stored_results(encoders: dict, configs: dict[str, ProbeSettings], task):
    """Results already on disk for each model, which match the settings, and which are the
    committed runs (not made in the app); notes shown."""
    shown: dict[str, ProbeResults] = {}
    current: set[str] = set()  # models whose shown results were made with the settings above
    committed: set[str] = set()  # models whose shown results are the committed run
    notes: list[tuple[str, str | None]] = []  # (what is shown, the command that made it)
    with friendly_errors("Loading results"):
        for name, cfg in configs.items():
            res, is_current, note, from_results = stored_result(encoders[name], name, cfg, task)
            notes.append(note)
            if res is not None:
                shown[name] = res
            if from_results:
                committed.add(name)
            if is_current:
                current.add(name)
    for note, command in notes:
        st.markdown(note)
        if command:
            st.code(command, language="bash", wrap_lines=True)
    return shown, current, committed


def stored_result(encoder, name: str, cfg: ProbeSettings, task):
    """(results or None, made with these settings?, (note, command), the committed run?)
    for one model: what :func:`probing.probes.store.find_stored` found, in words."""
    found = find_stored(cfg, encoder, read=read_results, results_dir=RESULTS_DIR)
    if found is None:
        return (
            None,
            False,
            (
                f"**{name}**: nothing computed yet for {TASK_LABELS.get(task.name, task.name)} "
                "with these settings; press Run (features are cached on disk, so only the "
                "first run extracts them).",
                None,
            ),
            False,
        )
    res = found.results
    if found.made_in_app:
        t = res.meta.timing_s
        return (
            res,
            True,
            (
                f"**{name}**: run in this app with these settings "
                f"({res.meta.n_train_sentences or '?'} training sentences; "
                f"{t.get('extract', '?')} s extracting, {t.get('fit', '?')} s fitting).",
                None,
            ),
            False,
        )
    if found.current:
        return (
            res,
            True,
            (
                f"**{name}**: precomputed results (`results/{found.path.name}`), made with",
                res.meta.command,
            ),
            True,
        )
    n_pre = res.meta.max_train_sentences
    layers_pre = res.meta.layers
    all_layers = list(range(encoder.info.n_contextual_layers + 1))
    note = (
        f"**{name}**: precomputed results (`results/{found.path.name}`) with other settings "
        f"({'all' if n_pre is None else n_pre} training sentences, "
        + (
            "all layers"
            if layers_pre == all_layers
            else f"layers {', '.join(map(str, layers_pre))}"
        )
        + ", all dev/test sentences); press Run for yours. Made with"
    )
    return res, False, (note, res.meta.command), True


def run_estimate(
    encoders: dict, configs: dict[str, ProbeSettings], label: str
) -> tuple[str, float | None]:
    """What pressing the button will cost, said before it is pressed
    (:func:`probing.probes.cost.estimate_run`: a model's own last run of these settings when
    there is one, else the costs measured for the model and task): in words, and in seconds
    (None when unknown) for the heavy-job queue, which tells the jobs behind this one."""
    parts, total, unknown, measured = [], 0.0, False, False
    for name, cfg in configs.items():
        encoder = encoders[name]
        last = read_results(stored_path_of(cfg, encoder))
        est = run_cost.estimate_run(encoder, cfg, last)
        if isinstance(est, str):
            unknown = True
            parts.append(f"{name}: {est}")
            continue
        measured = measured or est.measured
        if est.from_last_run:
            cached = (
                "; features cached"
                if not est.extract_s
                else f", plus {_duration(est.extract_s)} extracting again (features no longer cached)"
            )
            parts.append(
                f"{name}: ~{_duration(est.seconds)}, as its last run of these settings "
                f"fitted{cached}"
            )
        else:
            todo = ", ".join(f"{split} {n:,}" for split, n in est.to_encode.items())
            extract = (
                f"{_duration(est.extract_s)} extracting ({todo} sentences) + "
                if est.extract_s
                else "features cached, "
            )
            parts.append(f"{name}: {extract}{_duration(est.fit_s)} fitting")
        total += est.seconds
    # The costs were measured on an idle machine: a busy one (other sessions, other jobs)
    # takes longer, by about its load per core.
    factor = run_cost.load_factor() if measured else 1.0
    head = (
        f"**{label}** takes about {_duration(total * factor)}"
        if total
        else f"**{label}**: time unknown"
    )
    if total and unknown:
        head += " plus the unmeasured model"
    source = ", from run times measured on 2 CPU cores (idle)" if measured else ""
    if factor > 1.2:
        source += f", × {factor:.1f} for this machine's current load"
    return f"{head} ({'; '.join(parts)}){source}.", (total * factor if total else None)


def _duration(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 90 else f"{seconds / 60:.1f} min"


def run_section(
    encoders: dict, configs: dict[str, ProbeSettings], shown: dict, current: set
) -> None:
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
    estimate_s = None
    if running is None:
        text, estimate_s = run_estimate(encoders, {n: configs[n] for n in to_run}, label)
        st.caption(text)
    keep = st.toggle(
        "Keep running if I close this tab",
        key=persist("probe_keep", not config.demo_mode(), "keep", as_bool),
        disabled=running is not None,
        help="The run then goes on without this tab (within the server's job "
        "budget); open the Probing page with the same settings to see it.",
    )
    clicked = st.button(
        label,
        type="primary",
        key="probe_run",
        disabled=running is not None,
        help="Extract features (cached on disk) and fit the probes with the settings above."
        " The run goes on if you change page.",
    )
    if clicked and running is None:
        st.session_state["_probe_error"] = None
        jobs = {n: configs[n] for n in to_run}
        background.start(
            key,
            "Probing",
            lambda sink: probe_models(encoders, jobs, sink),
            detached=keep,
            shared_key=shared,
            expected_s=estimate_s,
        )
        run_key, running = key, background.get(key)
    if running is not None:
        note = "" if clicked else "Your probe run is still going; it goes on if you change page."
        if run_key == shared:
            note = (
                "A run of these settings, started earlier (from a tab since closed), is still "
                "going; its results appear here when it ends."
            )
        background.show_progress(run_key, note)


def probe_models(encoders: dict, configs: dict[str, ProbeSettings], sink) -> list[str]:
    """Probe each model with its settings and store the results (a background thread)."""
    finished = []
    for i, (name, cfg) in enumerate(configs.items()):
        # Reading and fingerprinting the splits comes before the first progress event.
        sink.progress(i / len(configs), f"{name}: reading the data and the feature cache…")
        # In a worker process (the job's budget holds there): the server's thread only relays
        # the progress, so that it never holds the GIL that other sessions' clicks need.
        res = offload(
            tasks.probe_layers, name, cfg, progress=progress_callback(sink, name, i, len(configs))
        )
        res.meta.command = "Probing page: " + ", ".join(
            f"{k}={v}" for k, v in cfg.stored_key().items()
        )
        save_results(res, stored_path_of(cfg, encoders[name]))
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
        f"apply, and at most {upload_module.MAX_TRAIN_WORDS:,} training and "
        f"{upload_module.MAX_TEST_WORDS:,} test words (the "
        "first sentences) are encoded. Probes choose their regularisation on 10 % of the training "
        "words."
    )
    upload = st.file_uploader(
        "CoNLL-U file",
        type=["conllu", "conll", "txt"],
        key="probe_upload",
        max_upload_size=max(1, math.ceil(max_mb)),
    )
    if upload is None:
        return
    sentences = None
    data = upload.getvalue()
    with friendly_errors("Reading the file"):
        sentences = read_upload(data, upload.name)
    if not sentences:
        return
    n_test = len(sentences) // TEST_EVERY
    st.markdown(
        f"**{md_text(upload.name)}**: {len(sentences):,} sentences, "
        f"{sum(len(s) for s in sentences):,} words → {len(sentences) - n_test:,} to train "
        f"(at most {n_train:,} used), {n_test:,} to test."
    )
    digest = hashlib.sha256(data).hexdigest()[:16]
    key = (digest, tuple(configs), tuple(sorted(layers)), n_train)
    done: dict = st.session_state.setdefault("probe_upload_results", {})
    up_task = st.selectbox(
        "Task on the upload",
        list(upload_module.UPLOAD_TASKS),
        format_func=upload_task_label,
        key="probe_upload_task",
    )
    key = (*key, up_task)
    if st.button(
        f"Probe {upload_task_name(up_task)} on {md_text(upload.name)}",
        key="probe_upload_run",
        type="primary",
    ):
        bar = st.progress(0.0, text="Waiting for a free slot…")
        with friendly_errors("Probing the upload"), heavy_job("Probing"):
            runs = []
            for i, name in enumerate(configs):
                enc = encoders[name]
                mine = [x for x in sorted(layers) if x <= enc.info.n_contextual_layers]
                runs.append(
                    offload(
                        tasks.probe_upload,
                        name,
                        sentences,
                        layers=mine,
                        max_train_sentences=n_train,
                        progress=progress_callback(bar, name, i, len(configs)),
                        name=upload.name,
                        task=up_task,
                    )
                )
            done.clear()  # keep one upload's results per session, not every one tried
            done[key] = runs
        bar.empty()
    if key in done:
        stem = "__".join(output_stem(r.model, "upload", r.task) for r in done[key])
        with friendly_errors("Drawing the results"):
            show_results(done[key], stem, "upload")
