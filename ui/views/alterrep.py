"""The Interventions page's "AlterRep" tab: counterfactual pushes of the subject's number
(:mod:`probing.interventions.alterrep`). The committed run's flip-rate curve with intervals
and the engine's per-layer calls; one layer on the sidebar's model on request (the
registry's ``alterrep``, in a worker); the user's own sentence before and after a push."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from probing import config
from probing.analyses.params import WHERE, AlterRepParams
from probing.figures.alterrep import flip_figure
from probing.interventions.alterrep import flip_findings
from ui import tasks
from ui.common import friendly_errors, get_encoder, md_text
from ui.jobs import heavy_job, offload
from ui.settings_inputs import setting_number
from ui.state import one_of, persist
from ui.stored_json import read_json

RESULTS = config.results_dir() / "alterrep"
SENTENCE = "The keys to the cabinet [MASK] on the table."
WHERE_TEXT = {"subject": "the subject's vector", "all": "every word's vector"}


@st.cache_resource(show_spinner=False)
def computed() -> dict:
    """(model, layer, where, fit, eval) -> result; shared by the sessions of this process."""
    return {}


def stored(name: str) -> dict | None:
    """The committed run of ``name`` (None when there is none)."""
    return read_json(RESULTS / f"{name}__alterrep.json")


def render(name: str) -> None:
    """The tab for the masked LM ``name``."""
    st.markdown(
        "**AlterRep** (Ravfogel et al. 2021): at layer *l*, LEACE finds the subject-number "
        "direction on UD-EWT training subjects; the subject's vector (or every word's) is "
        "pushed to the other side, h − (1 + α)(h − r(h)) with α = 1, the later layers are "
        "recomputed and the masked verb's choice (is / are …) is read again on held-out "
        "cases. The control: a push of the same length along a random direction."
    )
    result = stored(name)
    if result is not None:
        _show(result, "ar_stored")
    else:
        st.info(
            f"No committed AlterRep run for {name}. Make one with `python -m probing alterrep "
            f"--model {name} --out DIR`, or run one layer with the button further down."
        )
    encoder = get_encoder(name)
    if encoder is None:
        return
    if not encoder.info.has_layer_hooks or encoder.info.lm_kind != "masked":
        st.info(f"AlterRep reads a masked LM's verb choice; {name} has no masked-LM head.")
        return
    n_layers = int(encoder.info.n_contextual_layers)
    st.subheader("Run one layer")
    c1, c2 = st.columns(2)
    layer = c1.slider(
        "Layer to push at",
        1,
        n_layers,
        key=persist("ar_layer", min(2, n_layers), "ar_layer", int, lambda x: 1 <= x <= n_layers),
    )
    where = c2.radio(
        "Push",
        list(WHERE),
        format_func=WHERE_TEXT.get,
        horizontal=True,
        key=persist("ar_where", "subject", "push", valid=one_of(WHERE)),
    )
    c3, c4 = st.columns(2)
    n_fit = setting_number(
        AlterRepParams,
        "max_fit_cases",
        "Training cases (eraser fit, at most)",
        key="ar_fit",
        param="ar_fit",
        default=500,
        step=100,
        where=c3,
    )
    n_eval = setting_number(
        AlterRepParams,
        "max_eval_cases",
        "Held-out cases (at most)",
        key="ar_eval",
        param="ar_cases",
        default=300,
        step=100,
        where=c4,
    )
    key = (name, layer, where, n_fit, n_eval)
    results = computed()
    if st.button(f"Run AlterRep at layer {layer}", key="ar_run"):
        bar = st.progress(0.0, text="Fitting the eraser and scoring the held-out cases…")
        with friendly_errors("AlterRep"), heavy_job("AlterRep"):
            results[key] = offload(
                tasks.alterrep_layer,
                name,
                layer,
                where,
                n_fit,
                n_eval,
                progress=lambda _s, d, t: bar.progress(d / max(t, 1)),
            )
        bar.empty()
    if key in results:
        spec = results[key]["spec"]
        _show(
            results[key],
            "ar_run_chart",
            f"Your run, {spec['model']}: agreement choices flipped by a push of the "
            f"{spec['where']}'s number at layer {layer}",
        )
    else:
        st.caption("Press the button: one layer takes about a minute on two CPU cores.")
    sentence_section(name, layer, where, n_fit)


def _show(result: dict, key: str, title: str = "") -> None:
    """The flip-rate figure, the per-layer table and the engine's calls."""
    st.plotly_chart(flip_figure(result, title), key=key)
    rows = result["rows"]
    frame = pd.DataFrame(
        {
            "layer": [r["layer"] for r in rows],
            "flips, counterfactual (95 % CI)": [_ci(r, "flip_counterfactual") for r in rows],
            "flips, random (95 % CI)": [_ci(r, "flip_random") for r in rows],
            "agreement after the push (95 % CI)": [_ci(r, "accuracy_counterfactual") for r in rows],
            "held-out cases": [r["n_eval_cases"] for r in rows],
        }
    )
    st.dataframe(frame, hide_index=True)
    lines = flip_findings(result)
    if lines:
        table = result["comparisons"]
        st.markdown("\n".join(f"- {md_text(x)}" for x in lines))
        st.caption(f"{table['note']}. {table['method']}.")
    else:
        st.caption("This run was stored without the engine's table: intervals only, no calls.")
    clean = rows[0]
    st.caption(
        f"Clean agreement accuracy {_ci(clean, 'accuracy_clean')} on "
        f"{clean['n_eval_cases']} held-out cases; eraser fitted on {clean['n_fit_cases']} "
        "training cases."
    )


def _ci(row: dict, key: str) -> str:
    return f"{row[key]:.3f} [{row[f'{key}_lo']:.3f}, {row[f'{key}_hi']:.3f}]"


def sentence_section(name: str, layer: int, where: str, n_fit: int) -> None:
    """The user's sentence: which verb form the model prefers before and after the push."""
    from probing.interventions.alterrep import sentence_case

    st.subheader("Your sentence")
    text = st.text_input(
        "Sentence with [MASK] at the verb", key=persist("ar_text", SENTENCE, "ar_text")
    )
    c1, c2, c3 = st.columns(3)
    subject = c1.text_input("Subject word", key=persist("ar_subject", "keys", "ar_subject"))
    sg = c2.text_input("Singular form", key=persist("ar_sg", "is", "ar_sg"))
    pl = c3.text_input("Plural form", key=persist("ar_pl", "are", "ar_pl"))
    if not st.button(f"Push your sentence at layer {layer}", key="ar_push"):
        return
    with friendly_errors("AlterRep on your sentence"):
        case = sentence_case(text, subject, (sg, pl))  # typed errors before any fitting
        with heavy_job("AlterRep (your sentence)"):
            out = offload(
                tasks.alterrep_sentence, name, layer, where, n_fit, text, subject, (sg, pl)
            )
        rows = [
            {
                "": label,
                "logit(sg) − logit(pl)": f"{out[k]:+.2f}",
                "prefers": case.correct if out[k] > 0 else case.wrong,
            }
            for k, label in (
                ("clean", "no push"),
                ("counterfactual", f"counterfactual push at layer {layer}"),
                ("random", "random push, same length"),
            )
        ]
        st.dataframe(pd.DataFrame(rows), hide_index=True)
        st.caption(
            f"Subject “{md_text(case.words[case.subject])}” (word {case.subject + 1}); "
            f"{WHERE_TEXT[where]} pushed, the eraser fitted on {n_fit} UD-EWT training "
            "cases. One sentence: point values, no interval."
        )
