"""The Interventions page's "Neurons" tab: the units that matter at one layer
(:mod:`probing.interventions.neurons_run`). The committed run's top-k vs random-k figures
with intervals and the comparison engine's calls; a smaller run on the sidebar's model on
request (in a worker), with the shared demo's caps."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from probing import config
from probing.figures.neurons import ablation_figure, probe_figure
from probing.interventions.neurons_compare import findings
from ui import tasks
from ui.common import friendly_errors, get_encoder, md_text, whole_number_input
from ui.jobs import heavy_job, offload
from ui.state import one_of, persist
from ui.stored_json import read_json

RESULTS = config.results_dir() / "neurons"
TASKS = ("pos", "xpos", "deprel")
KS = "1, 5, 10, 50"
# A page's run: (default, most, most in the shared demo) of training sentences and draws.
TRAIN = (150, 400, 150)
DRAWS = (5, 20, 5)


@st.cache_resource(show_spinner=False)
def computed() -> dict:
    """(model, task, layer, ks, train, draws) -> result; shared by the sessions."""
    return {}


def stored_runs(name: str) -> dict[str, dict]:
    """The committed runs of ``name`` by file stem."""
    out = {}
    for path in sorted(RESULTS.glob(f"{name}__*__neurons-*.json")):
        run = read_json(path)
        if run is not None:
            out[path.stem] = run
    return out


def parse_ks(text: str, dim: int) -> list[int]:
    """The k's of a comma-separated list, each checked against the layer's dimension.

    Raises:
        InvalidArgumentError: not whole numbers, or none; RankTooLargeError: k out of range.
    """
    from probing.errors import InvalidArgumentError
    from probing.interventions.neurons import check_k

    try:
        ks = [int(x) for x in text.replace(";", ",").split(",") if x.strip()]
    except ValueError:
        raise InvalidArgumentError(
            f"k: comma-separated whole numbers (e.g. {KS}), not {text!r}."
        ) from None
    if not ks:
        raise InvalidArgumentError(f"k: name at least one number (e.g. {KS}).")
    return [check_k(k, dim) for k in ks]


def render(name: str) -> None:
    """The tab for model ``name``."""
    st.markdown(
        "Which neurons of a layer carry a label? Two rankings, as NeuroX computes them: "
        "**elastic-net probe weights** (Dalvi et al. 2019) and the **probeless** class-mean "
        "ranking (Antverg & Belinkov 2022). A probe on the top-k neurons is set against "
        "probes on random k-sets; for a masked LM the top k are also set to their training "
        "means (the later layers recomputed) and the masked-LM loss is read. Each top-k vs "
        "random-k difference is paired over the test items (bootstrap over sentences; the "
        "random draws resampled too) with Holm's correction over the ranks and k's."
    )
    runs = stored_runs(name)
    if runs:
        stems = list(runs)
        stem = stems[0]
        if len(stems) > 1:
            stem = st.selectbox(
                "Committed run",
                stems,
                key=persist("nu_run", stems[0], "nu_run", valid=one_of(stems)),
            )
        show(runs[stem], "nu_stored")
    else:
        st.info(
            f"No committed run for {name}. Make one with `python -m probing neurons --model "
            f"{name} --out DIR`, or run a smaller one with the button further down."
        )
    on_request(name)


def show(result: dict, key: str, prefix: str = "") -> None:
    """The run's figures, the engine's calls and the top of each ranking."""
    if "rows" not in result.get("probes", {}):
        st.warning("This run was stored before the paired comparisons; re-make it.")
        return
    found = findings(result)
    st.plotly_chart(probe_figure(result, prefix), key=f"{key}_probe")
    _calls(found["probes"], result["probes"]["comparisons"])
    if result.get("ablation"):
        st.plotly_chart(ablation_figure(result, prefix), key=f"{key}_ablation")
        st.dataframe(_loss_table(result), hide_index=True)
        _calls(found["ablation"], result["ablation"]["comparisons"])
    else:
        st.caption(f"No ablation: {result.get('ablation_left_out', 'no masked-LM head')}.")
    s = result["settings"]
    tops = "; ".join(
        f"{r}: {', '.join(str(i) for i in order[:10])}" for r, order in result["rankings"].items()
    )
    st.caption(
        f"{result['n_train_words']:,} training and {result['n_test_words']:,} test words; "
        f"{s['n_random']} random draws per k. Top 10 neurons — {tops}."
    )


def _loss_table(result: dict) -> pd.DataFrame:
    """The masked-LM loss (nats) of each set per k, with 95 % intervals."""
    ci = lambda r, k: f"{r[k]:.3f} [{r[f'{k}_lo']:.3f}, {r[f'{k}_hi']:.3f}]"  # noqa: E731
    return pd.DataFrame(
        [
            {
                "k": r["k"],
                "nothing ablated": ci(r, "clean_loss"),
                **{f"top k, {n}": ci(r, f"{n}_loss") for n in result["rankings"]},
                "random k (mean of draws)": ci(r, "random_loss"),
            }
            for r in result["ablation"]["rows"]
        ]
    )


def _calls(lines: list[str], table: dict) -> None:
    st.markdown("\n".join(f"- {md_text(x)}" for x in lines))
    st.caption(f"{table['note']}. {table['method']}.")


def on_request(name: str) -> None:
    """A run on the sidebar's model at one layer, in a worker."""
    st.subheader("Run on a layer")
    encoder = get_encoder(name)
    if encoder is None:
        return
    n_layers, dim = int(encoder.info.n_contextual_layers), int(encoder.info.dim)
    c1, c2, c3 = st.columns(3)
    task = c1.selectbox(
        "Label", TASKS, key=persist("nu_task", "pos", "nu_task", valid=one_of(TASKS))
    )
    layer = c2.slider(
        "Layer",
        0,
        n_layers,
        key=persist("nu_layer", min(3, n_layers), "nu_layer", int, lambda x: 0 <= x <= n_layers),
    )
    ks_text = c3.text_input(f"k (1 … {dim}, comma-separated)", key=persist("nu_ks", KS, "ks"))
    demo = config.demo_mode()
    c4, c5 = st.columns(2)
    hi_train, hi_draws = (TRAIN[2], DRAWS[2]) if demo else (TRAIN[1], DRAWS[1])
    train = whole_number_input(
        "Training sentences (UD-EWT train)",
        20,
        hi_train,
        step=10,
        key=persist(
            "nu_train", min(TRAIN[0], hi_train), "nu_train", int, lambda n: 20 <= n <= hi_train
        ),
        where=c4,
    )
    draws = whole_number_input(
        "Random draws per k",
        2,
        hi_draws,
        step=1,
        key=persist("nu_draws", DRAWS[0], "nu_draws", int, lambda n: 2 <= n <= hi_draws),
        where=c5,
    )
    results = computed()
    if st.button(f"Rank and probe layer {layer}", key="nu_go"):
        with friendly_errors("Units that matter"):
            ks = parse_ks(ks_text, dim)  # a bad k is said before any work
            key = (name, task, layer, tuple(ks), train, draws)
            bar = st.progress(0.0, text="Encoding, ranking, probing…")
            with heavy_job("Units that matter"):
                results[key] = offload(
                    tasks.neuron_units,
                    name,
                    task,
                    layer,
                    ks,
                    (train, max(20, train // 2), max(10, train // 4)),
                    draws,
                    progress=lambda stage, d, t: bar.progress(d / max(t, 1), text=stage),
                )
            bar.empty()
            st.session_state["nu_last"] = key
    last = st.session_state.get("nu_last")
    if last in results and last[:3] == (name, task, layer):
        show(results[last], "nu_run", "Your run, ")
    else:
        st.caption(
            "Press the button: 150 training sentences take about a minute on two CPU cores "
            "(test: half as many sentences; ablation: a quarter)."
        )
