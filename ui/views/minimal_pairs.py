"""The Interventions page's "Minimal pairs" tab: the committed runs' accuracy per paradigm
with intervals, the engine's paired comparison of the two embedded models, and a pair the
user types, scored piece by piece (:mod:`probing.minimal_pairs`)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from probing import config
from probing.figures.minimal_pairs import pair_units_figure, paradigm_accuracy_figure
from ui.common import friendly_errors, get_encoder, md_text
from ui.state import one_of, persist
from ui.stored_json import read_json

RESULTS = config.results_dir() / "minimal-pairs"
PAIR = ("The keys to the cabinet are on the table.", "The keys to the cabinet is on the table.")


def stored_runs(name: str) -> list[dict]:
    """The committed runs of ``name`` (one per scorer)."""
    paths = sorted(RESULTS.glob(f"{name}__minimal-pairs__*.json"))
    runs = [read_json(p) for p in paths]
    return [r for r in runs if r is not None]


def stored_comparisons(name: str) -> list[dict]:
    paths = sorted(RESULTS.glob("comparison__*.json"))
    out = [read_json(p) for p in paths]
    return [c for c in out if c is not None and name in (c["a"]["model"], c["b"]["model"])]


def render(name: str) -> None:
    """The tab for model ``name`` (a masked LM or ELMo with its softmax)."""
    st.markdown(
        "A model prefers the grammatical sentence of a pair when it scores it higher. "
        "Masked LMs score a sentence by **pseudo-log-likelihood** (mask each piece in turn, "
        "sum log P(piece | rest); Salazar et al. 2020), optionally with Kauf & Ivanova's "
        "`within_word_l2r` (the later pieces of the same word masked too). ELMo scores by "
        "its **forward + backward LM log-likelihoods** (each direction a true sentence "
        "probability, not a PLL)."
    )
    runs = stored_runs(name)
    if runs:
        st.plotly_chart(paradigm_accuracy_figure([r["rows"] for r in runs]), key="mp_acc")
        for r in runs:
            ppl = r.get("perplexity")
            if ppl:
                st.caption(
                    f"{md_text(r['model'])} ({md_text(r['scorer'])}): {ppl['measure']} "
                    f"{ppl['value']:.1f} per {ppl['per']} on {ppl['text']}."
                )
            for w in r.get("warnings", []):
                st.warning(w)
        for comp in stored_comparisons(name):
            _comparison_table(comp)
    else:
        st.info(f"No committed minimal-pair run for {name}.")
    st.subheader("Your pair")
    good = st.text_input("Grammatical sentence", key=persist("mp_good", PAIR[0], "good"))
    bad = st.text_input("Ungrammatical sentence", key=persist("mp_bad", PAIR[1], "bad"))
    scorer = st.radio(
        "PLL scorer (masked LMs)",
        ["original", "within_word_l2r"],
        horizontal=True,
        key=persist("mp_s", "original", "scorer", valid=one_of(["original", "within_word_l2r"])),
    )
    if st.button("Score the pair", key="mp_score"):
        with friendly_errors("Scoring the pair"):
            score_pair(name, good, bad, scorer)


def _comparison_table(comp: dict) -> None:
    table = comp["comparisons"]
    rows = [
        {
            "comparison": f"{r['a']} − {r['b']}",
            "difference": r["diff"],
            "95 % interval": f"[{r['ci_low']:+.3f}, {r['ci_high']:+.3f}]"
            if r["ci_low"] is not None
            else "",
            "p (Holm)": r["p_holm"],
            "called": "yes" if r["called"] else "no",
        }
        for r in table["rows"]
    ]
    a, b = comp["a"], comp["b"]
    st.markdown(
        f"**{md_text(a['model'])} ({md_text(a['scorer'])}) vs {md_text(b['model'])} "
        f"({md_text(b['scorer'])})**"
    )
    st.dataframe(pd.DataFrame(rows), hide_index=True)
    st.caption(f"{table.get('note', '')}. {table['method']}.")


def score_pair(name: str, good: str, bad: str, scorer: str) -> None:
    """Score the typed pair with ``name`` and show both sentences' per-piece log-probs."""
    from probing.minimal_pairs.evaluate import score_pairs
    from probing.minimal_pairs.pairs import pair_from_text

    encoder = get_encoder(name)
    if encoder is None:
        return
    pair = pair_from_text(good, bad)
    ps, by_words = score_pairs(encoder, [pair], scorer)
    g, b = by_words[pair.good], by_words[pair.bad]
    margin = g.total - b.total
    verdict = "prefers the grammatical sentence" if margin > 0 else "does not prefer it"
    st.markdown(
        f"**{md_text(ps.scorer)}**: {g.total:.2f} vs {b.total:.2f} nats "
        f"(difference {margin:+.2f}): {md_text(name)} {verdict}."
    )
    if not ps.kept[0]:
        st.warning(
            "A word that differs between the sentences is outside the LM vocabulary (scored "
            f"as <UNK>): {', '.join(sorted(set(g.out_of_vocabulary) | set(b.out_of_vocabulary)))}."
        )
    as_dict = lambda s: {"units": list(s.units), "log_probs": s.log_probs.tolist()}  # noqa: E731
    st.plotly_chart(pair_units_figure(as_dict(g), as_dict(b)), key="mp_pair_units")
    st.caption(
        "The sentences may have different numbers of pieces: each score sums over its own "
        "sentence's pieces."
    )
