"""The Interventions page: does the model use what the probe finds?

Precomputed sweeps (``results/interventions``, made by ``results/regenerate.sh``) open at
once; one-sentence actions call :mod:`probing.interventions.sentence` and the patching /
agreement functions; fitting an eraser runs in the background job system.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd
import streamlit as st

from probing import config
from probing.figures.interventions import (
    agreement_figure,
    erasure_figure,
    fit_curve_figure,
    head_importance_figure,
    patching_figure,
    pruning_figure,
    recovery_figure,
)
from probing.interventions.erasure_summary import has_heldout, summary_sentences
from probing.probes.tasks import get_task, task_names
from ui import background, tasks
from ui.common import (
    friendly_errors,
    get_encoder,
    intervention_encoder,
    md_text,
    model_picker,
    page_header,
)
from ui.jobs import offload
from ui.state import all_of, as_bool, as_strs, one_of, persist
from ui.stored_json import read_json

if TYPE_CHECKING:
    import numpy as np

    from probing.encoders.base import Encoder
    from probing.encoders.elmo import ElmoEncoder
    from probing.interventions.sentence import Guesses, SentenceEraser

RESULTS = config.results_dir() / "interventions"
# The erasable tasks (the task record's), each on its default data set, as sweeps are named.
TASKS = {t: get_task(t).default_dataset for t in task_names(erasable=True)}
SENTENCE = "The keys to the old cabinet [MASK] on the table."
# Both embedded LMs agree on both sentences (margins > 0), so the default map is a fraction;
# the attractor ("tables" / "table") differs too, which marks it (TypedPair.suggested_attractor).
PAIR = ("The book on the tables [MASK] here.", "The books on the table [MASK] here.")
# Results of the MLM twin stand for the pretrained encoder (same weights, plus a head).
SAME_WEIGHTS = {"minilm-l6": "minilm-l6-mlm"}
NO_HEADS = (
    "{name} is an LSTM (ELMo): it has no attention heads, so there is nothing to switch off "
    "or ablate here. Its interventions are erasure (with the bi-LM effect, when its folder "
    "ships the LM softmax) and agreement / patching by layer and position role on the "
    "other tabs. Models with heads to switch off: minilm-l6-mlm, or any hub …ForMaskedLM "
    "checkpoint."
)


def _has_no_heads(name: str) -> bool:
    from probing.models.registry import entry

    e = entry(name)
    return e is not None and not e.info.has_attention


def stored(name: str) -> dict | None:
    """A precomputed result file's JSON (None when absent or unreadable)."""
    path = RESULTS / f"{name}.json"
    return read_json(path)


def head_importance_panel(model: str, k: str = "") -> None:
    """Head importance from the precomputed ablation run, under the Attention model view."""
    source = SAME_WEIGHTS.get(model, model)
    result = stored(f"{source}__ud-ewt__ablate-heads")
    if result is None:
        return
    shown = persist(f"attn_imp{k}", False, f"importance{k}", as_bool)
    if st.toggle("Head importance (ablation, Michel et al. 2019)", key=shown):
        st.plotly_chart(
            head_importance_figure(result["importance"], f"{source}: head importance I_h"),
            key=f"attn_head_importance{k}",
        )
        st.caption(
            "|∂ masked-LM loss / ∂ head gate| on held-out UD-EWT words, each layer scaled to "
            "unit length; "
            + (
                "measured on minilm-l6-mlm (the same encoder weights with an MLM head). "
                if source != model
                else ""
            )
            + "Per-head loss increases and the pruning curve are on the Interventions page."
        )


def render() -> None:
    page_header(
        "Interventions",
        "A probe says a layer encodes something; does the model use it? Erase it, patch it, "
        "switch heads off, and watch the model's predictions.",
    )
    names = model_picker()
    if not names:
        st.info("Pick a model in the sidebar.")
        st.stop()
    name = SAME_WEIGHTS.get(names[0], names[0])
    if name != names[0]:
        st.caption(f"{names[0]} has no MLM head; showing {name}, the same encoder with one.")
    erase_tab, agree_tab, heads_tab, pairs_tab, alterrep_tab, neurons_tab = st.tabs(
        [
            "Erasure (amnesic probing)",
            "Agreement & patching",
            "Heads",
            "Minimal pairs",
            "AlterRep",
            "Neurons",
        ]
    )
    with erase_tab:
        sweeps(name)
        erase_sentence(name)
    with agree_tab:
        agreement_section(name)
    with heads_tab:
        heads_section(name)
    with pairs_tab:
        from ui.views import minimal_pairs

        minimal_pairs.render(name)
    with alterrep_tab:
        from ui.views import alterrep

        alterrep.render(name)
    with neurons_tab:
        from ui.views import neurons

        neurons.render(name)


def sweeps(name: str) -> None:
    task = st.selectbox(
        "Task", list(TASKS), key=persist("iv_task", "pos", "task", valid=one_of(TASKS))
    )
    result = stored(f"{name}__{TASKS[task]}__{task}__erase-leace")
    if result is None:
        st.info(
            f"No precomputed erasure sweep for {name} and {task}. Make one with "
            f"`python -m probing erase --model {name} --task {task} --layers all --out DIR`."
        )
        return
    st.plotly_chart(erasure_figure(result), key="iv_erasure")
    meta = result["meta"]
    fitted = (
        f"LEACE erasure fitted on {meta['train_sentences']} training sentences (in-sample "
        "protocol: the probe retrained on those words, erased)"
    )
    if has_heldout(result):
        fitted += (
            f" and on {meta['fit_sentences']:,} training sentences ({meta['n_fit_words']:,} "
            f"words; held-out protocol: a fresh probe trained on {meta['n_heldout_train_words']:,}"
            " erased dev words the eraser never saw)"
        )
    st.caption(
        f"{fitted}; scored on {meta['test_sentences']} test sentences (95 % sentence-bootstrap "
        f"CIs); random subspaces: {result['spec']['n_random']} draws of the same rank. LM "
        f"effect: {meta['lm_effect']}."
    )
    st.markdown("\n".join(f"- {md_text(s)}" for s in summary_sentences(result)))
    if result.get("curve"):
        st.plotly_chart(fit_curve_figure(result), key="iv_fit_curve")
    if result["recovery"]:
        st.plotly_chart(recovery_figure(result), key="iv_recovery")


def erase_sentence(name: str) -> None:
    st.subheader("Erase on your sentence")
    # No default of its own: persist puts the value in session state (a second one warns).
    text = st.text_input("Sentence with [MASK]", key=persist("iv_text", SENTENCE, "sentence"))
    encoder = get_encoder(name)
    if encoder is None:
        return
    n_layers = int(encoder.info.n_contextual_layers)
    c1, c2 = st.columns(2)
    task = c1.selectbox(
        "Erase",
        list(TASKS),
        key=persist("iv_sent_task", next(iter(TASKS)), "erase", valid=one_of(TASKS)),
    )
    layer = c2.slider(
        "at layer",
        0,
        n_layers,
        key=persist("iv_sent_layer", min(3, n_layers), "layer", int, lambda x: 0 <= x <= n_layers),
    )
    key = background.session_key("interventions-erase")
    ended = background.collect(key)
    if ended is not None:
        if ended.error is not None:
            with friendly_errors("Erasing"):
                raise ended.error
        else:
            st.session_state["iv_kit"] = ended.result
    if background.get(key) is not None:
        background.show_progress(key, "Fitting the eraser and probes on 150 training sentences.")
        return
    kit = st.session_state.get("iv_kit")
    if kit is None or (kit.task, kit.layer, kit.model) != (task, layer, name):
        if st.button("Fit the eraser (a background job: tens of seconds or more)", key="iv_fit"):
            background.start(key, "Erasure", lambda sink: _fit(name, task, layer, sink))
            st.rerun()
        return
    with friendly_errors("Erasing"), intervention_encoder(name) as encoder:
        from probing.encoders.base import split_words
        from probing.interventions.hooks import require_mlm
        from probing.interventions.sentence import erasing, fill_mask_under, labels_before_after

        st.caption(f"{task} erased at layer {layer} (rank {kit.kit.eraser.rank}).")
        if "[MASK]" in text.upper() and encoder.info.lm_kind == "bidirectional-lm":
            st.caption(
                f"{name} has a bi-LM softmax (next-word LMs), not a masked-LM head: no "
                "fill-mask guesses. The sweep above shows its bi-LM loss under erasure."
            )
        elif "[MASK]" in text.upper():
            require_mlm(encoder, "Fill-mask")
            before = fill_mask_under(encoder, text)
            after = fill_mask_under(encoder, text, erasing(encoder, layer, kit.kit.eraser))
            st.dataframe(_guesses(before, after), hide_index=True)
        words = split_words(text.replace("[MASK]", " "))
        rows = labels_before_after(encoder, kit.kit, words)
        frame = {"word": words}
        for at, (b, a) in rows.items():
            frame[f"layer {at} before"] = b
            frame[f"layer {at} after"] = a
        st.dataframe(pd.DataFrame(frame), hide_index=True)


class _Kit:
    def __init__(self, model: str, task: str, layer: int, kit: SentenceEraser) -> None:
        self.model, self.task, self.layer, self.kit = model, task, layer, kit


def _fit(name: str, task: str, layer: int, sink: background.ProgressSink) -> _Kit:
    # In a worker process (its own copy of the model), not in the server's threads.
    sink.progress(0.1, "Encoding 150 training sentences and fitting LEACE…")
    kit = offload(tasks.sentence_eraser, name, task, layer)
    sink.progress(1.0, "done")
    return _Kit(name, task, layer, kit)


def _guesses(before: Guesses, after: Guesses) -> pd.DataFrame:
    rows = []
    for m, (b, a) in enumerate(zip(before, after, strict=True)):
        for rank, ((tb, pb), (ta, pa)) in enumerate(zip(b, a, strict=True), start=1):
            rows.append(
                {
                    "mask": m + 1,
                    "rank": rank,
                    "before": f"{tb} ({pb:.2f})",
                    "after erasure": f"{ta} ({pa:.2f})",
                }
            )
    return pd.DataFrame(rows)


def agreement_section(name: str) -> None:
    result = stored(f"{name}__ud-ewt+templates__agreement")
    if result is not None:
        rows = result["rows"]
        st.plotly_chart(agreement_figure(rows, "attractors"), key="iv_agree_attr")
        st.plotly_chart(agreement_figure(rows, "distance"), key="iv_agree_dist")
        if "patching" in result:
            st.plotly_chart(
                patching_figure(
                    result["patching"]["roles"], "Patching on templated pairs: layer × role"
                ),
                key="iv_patch_roles",
            )
        _side_by_side(name)
    else:
        st.info(f"No precomputed agreement run for {name}.")
    st.subheader("Your minimal pair")
    a = st.text_input("Sentence A (singular subject)", key=persist("iv_pair_a", PAIR[0], "a"))
    b = st.text_input("Sentence B (plural subject)", key=persist("iv_pair_b", PAIR[1], "b"))
    c1, c2 = st.columns(2)
    sg = c1.text_input("Singular verb form", key=persist("iv_sg", "is", "sg"))
    pl = c2.text_input("Plural verb form", key=persist("iv_pl", "are", "pl"))
    attractor = attractor_picker(a, b)
    if st.button("Check and patch", key="iv_patch"):
        with intervention_encoder(name) as encoder:
            if encoder is not None:
                check_and_patch(encoder, a, b, sg.strip(), pl.strip(), attractor)


def attractor_picker(a: str, b: str) -> int | None:
    """The attractor's word index in the typed pair, as the user marks it: offered are the
    words between subject and [MASK], preset by :meth:`TypedPair.suggested_attractor` (a
    word that differs between the two sentences too), else none."""
    import hashlib

    from probing.errors import ContextLensError
    from probing.interventions.patching import read_pair

    try:
        pair = read_pair(a, b)
    except ContextLensError:
        return None  # "Check and patch" says what is wrong with the pair
    options: list[int | None] = [None, *pair.between]
    # One box per pair of sentences: a typed change offers its own words and suggestion.
    digest = hashlib.sha1("\x00".join(pair.a + ("|",) + pair.b).encode()).hexdigest()[:10]
    return st.selectbox(
        "Attractor (a noun between the subject and [MASK])",
        options,
        index=options.index(pair.suggested_attractor()),
        format_func=lambda i: (
            "none: leave the attractor column out"
            if i is None
            else f"“{pair.a[i]}” / “{pair.b[i]}” (word {i + 1})"
            if pair.a[i] != pair.b[i]
            else f"“{pair.a[i]}” (word {i + 1})"
        ),
        key=f"iv_attr_{digest}",
        help="Patching copies the states of each role from the other sentence: subject, "
        "attractor, verb ([MASK]) and every other word. Preset when a word between the "
        "subject and [MASK] differs between the two sentences too; the page has no tagger "
        "to find a noun otherwise, so mark it here (or leave the column out).",
    )


def check_and_patch(
    encoder: Encoder, a: str, b: str, sg: str, pl: str, attractor: int | None = None
) -> None:
    """The user's minimal pair: which verb form each sentence prefers, and the patching map
    (``attractor``: the attractor's word index, None for none)."""
    if encoder.info.lm_kind == "bidirectional-lm":
        with friendly_errors("Patching"):
            _patch_forward_lm(encoder, a, b, sg, pl, attractor)
        return
    with friendly_errors("Patching"):
        from probing.interventions.patching import make_batches, patch_pairs, user_pair

        pairs = user_pair(a, b, (sg, pl), attractor)
        batches = make_batches(encoder, pairs)
        if not batches:
            st.warning("Both verb forms must be single vocabulary pieces for this model.")
            return
        from probing.interventions.agreement import margins, prepare

        cases = [pairs[0][0], pairs[0][1]]
        margin = margins(encoder, prepare(encoder, cases))
        if len(margin) != len(cases):  # prepare leaves out sentences over 128 pieces
            st.warning(
                "The verb-form preference is measured on sentences of at most 128 word pieces: "
                "shorten the two sentences."
            )
            return
        for case, m in zip(cases, margin, strict=True):
            verdict = "agrees" if m > 0 else "does not agree"
            st.write(
                f"{'A' if case.number == 'Sing' else 'B'}: the model prefers "
                f"**{md_text(case.correct if m > 0 else case.wrong)}** ({verdict}; logit margin "
                f"{m:+.2f})."
            )
        out = patch_pairs(encoder, batches, n_boot=200, heads=False)
        _pair_map(out, cases, margin, "logits", "the logit difference between the two verb forms")


def _pair_map(out: dict, cases: list, margin: np.ndarray, unit: str, difference: str) -> None:
    """The typed pair's layer × role map, drawn as it may be read (``pair_grid``): fractions
    only when the total effect is clearly positive, else the change itself with a warning;
    point values (one pair has no interval); no attractor column when none is marked."""
    from probing.interventions.patching import MIN_TOTAL_EFFECT, attractor_index, pair_grid

    at = attractor_index(cases[0])
    grid = pair_grid(out, drop=() if at is not None else ("attractor",), d_unit=unit)
    total = grid["total"]
    if not grid["normalised"]:
        why = (
            "the wrong sign: the model does not prefer each sentence's own form over the "
            "other sentence's"
            if total < 0
            else f"too close to 0 (under {MIN_TOTAL_EFFECT:.1f} {unit}) to divide by"
        )
        st.warning(
            f"Not shown as fractions: the normalising difference d_source − d_base is "
            f"{total:+.2f} {unit} (A's margin {margin[0]:+.2f} plus B's {margin[1]:+.2f}), "
            f"{why}. A fraction of it would flip signs or blow up; the map shows the change "
            f"itself, d_patched − d_base in {unit} (positive: towards the other sentence's "
            "form)."
        )
    st.plotly_chart(patching_figure(grid, "Your pair: layer × role"), key="iv_user_roles")
    what = (
        f"Fraction of {difference} that moves"
        if grid["normalised"]
        else f"Change of {difference} ({unit}, towards the other sentence's form)"
    )
    notes = [
        f"{what} when the states of one role are copied from the other sentence (both "
        "directions; 'other': the words in no other column).",
        "One pair: point values, no interval (an interval needs several pairs, as in the "
        "templated sweep)."
        if not grid["intervals"]
        else "",
        f"Attractor: “{cases[0].words[at]}” (word {at + 1})."
        if at is not None
        else "No attractor marked: its column is left out and a noun between subject and "
        "verb counts as 'other'; mark it under 'Attractor' to measure it.",
    ]
    st.caption(" ".join(n for n in notes if n))


def _side_by_side(name: str) -> None:
    """Overall accuracy per source of this model and the other embedded one (committed)."""
    other = "minilm-l6-mlm" if name == "elmo-mini" else "elmo-mini"
    theirs = stored(f"{other}__ud-ewt+templates__agreement")
    if theirs is None:
        return
    mine = stored(f"{name}__ud-ewt+templates__agreement")
    rows = []
    for model, res in ((name, mine), (other, theirs)):
        for r in res["rows"]:
            if r["by"] == "all":
                rows.append(
                    {
                        "model": model,
                        "source": r["source"],
                        "n": r["n"],
                        "accuracy (95 % CI)": f"{r['accuracy']:.3f} "
                        f"({r['accuracy_lo']:.3f}–{r['accuracy_hi']:.3f})",
                    }
                )
    st.dataframe(pd.DataFrame(rows), hide_index=True)
    st.caption(
        "elmo-mini: its forward LM, left context only (Linzen et al.'s setting); "
        "minilm-l6-mlm: the masked verb with both sides (Goldberg's). Compare per source."
    )


def _patch_forward_lm(
    encoder: ElmoEncoder, a: str, b: str, sg: str, pl: str, attractor: int | None = None
) -> None:
    """The user's pair with an ELMo's forward LM: the words before [MASK] are the context."""
    from probing.interventions import agreement as ag
    from probing.interventions.patching import make_batches, patch_pairs, user_pair

    pairs = user_pair(a, b, (sg, pl), attractor)
    batches = make_batches(encoder, pairs)  # left contexts: the forward LM's setting
    if not batches:
        st.warning("Both verb forms must be words in the LM's vocabulary (vocab.txt).")
        return
    cases = [pairs[0][0], pairs[0][1]]
    margin = ag.margins(encoder, ag.prepare(encoder, cases))
    for case, m in zip(cases, margin, strict=True):
        verdict = "agrees" if m > 0 else "does not agree"
        st.write(
            f"{'A' if case.number == 'Sing' else 'B'}: the forward LM prefers "
            f"**{md_text(case.correct if m > 0 else case.wrong)}** ({verdict}; log-probability "
            f"margin {m:+.2f}; left context only)."
        )
    out = patch_pairs(encoder, batches, n_boot=200)
    _pair_map(
        out,
        cases,
        margin,
        "nats",
        "the forward LM's log-probability difference between the two verb forms",
    )


def heads_section(name: str) -> None:
    if _has_no_heads(name):
        st.info(NO_HEADS.format(name=name))
        return
    result = stored(f"{name}__ud-ewt__ablate-heads")
    if result is not None:
        st.plotly_chart(
            head_importance_figure(result["importance"], "Head importance I_h"), key="iv_importance"
        )
        st.plotly_chart(pruning_figure(result["curve"]), key="iv_pruning")
        if result.get("finding"):  # written from the Holm-corrected table (head_family)
            st.caption(result["finding"])
    else:
        st.info(f"No precomputed head-ablation run for {name}.")
    encoder = get_encoder(name)
    if encoder is None:
        return
    st.subheader("Switch heads off")
    text = st.text_input("Sentence with [MASK]", key=persist("iv_heads_text", SENTENCE, "masked"))
    n_layers = int(encoder.info.n_contextual_layers)
    n_heads = encoder.info.n_heads
    options = [f"L{layer}-H{h}" for layer in range(1, n_layers + 1) for h in range(n_heads)]
    off = st.multiselect(
        "Heads off", options, key=persist("iv_heads_off", [], "off", as_strs, all_of(options))
    )
    with friendly_errors("Fill-mask"), intervention_encoder(name) as encoder:
        from probing.interventions.sentence import fill_mask_under, heads_off

        pairs = [(int(o[1 : o.index("-")]), int(o[o.index("H") + 1 :])) for o in off]
        before = fill_mask_under(encoder, text)
        after = fill_mask_under(encoder, text, heads_off(encoder, pairs))
        st.dataframe(
            _guesses(before, after).rename(columns={"after erasure": "heads off"}), hide_index=True
        )
