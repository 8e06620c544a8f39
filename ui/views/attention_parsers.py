"""Attention page, "Heads as parsers" view: which head finds the object of a verb?

Clark et al. (2019, §4.2) on UD-EWT dev: per frequent relation, the best head in each
direction against the best fixed-offset baseline. Precomputed tables (``results/attention/
<model>/attention_parsers.csv``) open at once; other models are scored on request.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd
import streamlit as st

from probing import config
from probing.analyses.attention_parsers import (
    DIRECTIONS,
    parser_sentences,
    score_parsers,
    sentence_arcs,
)
from probing.figures.head_arcs import head_arcs_figure
from ui.common import whole_number_input
from ui.jobs import heavy_job
from ui.state import persist

if TYPE_CHECKING:
    from probing.analyses.attention import AttentionMap
    from probing.encoders.base import Encoder

RESULTS_DIR = config.results_dir() / "attention"
MIN_COUNT = 100
MAX_SENTENCES = 200 if config.demo_mode() else 2001


def precomputed_path(model: str) -> Path:
    return RESULTS_DIR / model.replace("/", "_") / "attention_parsers.csv"


@st.cache_data(show_spinner=False)
def read_table(path: str, mtime_ns: int) -> pd.DataFrame:  # mtime: re-read when rewritten
    return pd.read_csv(path)


@st.cache_resource(show_spinner=False)
def computed() -> dict:
    """(model, n) -> best-heads table, shared by sessions (the same for everyone)."""
    return {}


def open_in_head_view(layer: int, head: int) -> None:
    """Button callback (runs before the rerun, so widget state may still be set)."""
    st.session_state["attn_view"] = "Head view"
    st.session_state["attn_hv_layer"] = layer
    st.session_state["attn_hv_heads"] = [head]


def _table(name: str, encoder: Encoder) -> tuple[pd.DataFrame | None, str]:
    path = precomputed_path(name)
    if path.exists():
        note = f"Precomputed on all of UD-EWT dev (`{path.relative_to(config.REPO_ROOT)}`)."
        return read_table(str(path), path.stat().st_mtime_ns), note
    n = whole_number_input(
        "Sentences of UD-EWT dev", 50, MAX_SENTENCES, value=200, step=50, key="attn_parse_n"
    )
    if st.button(f"Score every head on {n} sentences", key="attn_parse_run", type="primary"):
        bar = st.progress(0.0, text="Encoding sentences…")
        with heavy_job("Heads as parsers"):
            scores = score_parsers(
                encoder,
                parser_sentences("dev", n),
                progress=lambda d, t: bar.progress(d / t, text=f"{d}/{t} sentences"),
            )
        computed()[(name, n)] = scores.best_heads(min_count=max(20, MIN_COUNT * n // 2001))
        bar.empty()
    table = computed().get((name, n))
    return table, f"Computed on {n} UD-EWT dev sentences spread over the split."


def on_your_sentence(amap: AttentionMap, layer: int, head: int, direction: str) -> None:
    """The picked head's arcs on the typed sentence."""
    words, arcs = sentence_arcs(amap, layer, head, direction)
    if len(words) < 2:
        return
    st.plotly_chart(
        head_arcs_figure(words, arcs, f"Layer {layer}, head {head} on your sentence ({direction})"),
        key="attn_parse_arcs",
    )
    st.caption(
        "Each arc joins a word to the word this head picks as its head (arrowhead), read as "
        "in the table: "
        + (
            "the word it attends to most."
            if direction == DIRECTIONS[0]
            else "the word that attends most to it."
        )
        + " Special tokens and self-attention are ignored."
    )


def render(encoder: Encoder, name: str, amap: AttentionMap | None = None) -> None:  # BERT family
    """The best head per relation and direction, the picked one's arcs on the typed sentence
    (``amap``, its attention), and a jump into the head view."""
    st.markdown(
        "Each head read as a parser (Clark et al. 2019, §4.2): a word's prediction is the word "
        "it attends to most (**dependent → head**), or the word that attends most to it "
        "(**head → dependent**); word-level attention, [CLS]/[SEP] and self-attention "
        "ignored. **Baseline**: the word at the best fixed offset from the dependent "
        "(−1 = the word before). Best head and offset are both chosen on the sentences they "
        "are scored on, as in the paper; intervals: 95 % sentence bootstrap."
    )
    table, note = _table(name, encoder)
    if table is None or table.empty:
        st.caption("Press the button to score every head (about a minute per 200 sentences).")
        return
    st.caption(note)
    show = table.assign(
        best_head=[f"L{r.layer} H{r.head}" for r in table.itertuples()],
        accuracy=[
            f"{r.accuracy:.2f} [{r.ci_low:.2f}, {r.ci_high:.2f}]" for r in table.itertuples()
        ],
        baseline=[
            f"{r.baseline_accuracy:.2f} [{r.baseline_ci_low:.2f}, {r.baseline_ci_high:.2f}] "
            f"(offset {r.baseline_offset:+d})"
            for r in table.itertuples()
        ],
        beats_baseline=[r.ci_low > r.baseline_ci_high for r in table.itertuples()],
    )[["relation", "n", "direction", "best_head", "accuracy", "baseline", "beats_baseline"]]
    st.dataframe(show, hide_index=True, width="stretch")
    st.caption(
        "beats_baseline: the head's interval lies wholly above the baseline's (a conservative "
        "check: the two are scored on the same arcs)."
    )
    options = list(range(len(table)))
    pick = st.selectbox(
        "Look at a head",
        options,
        format_func=lambda i: (
            f"{table['relation'][i]} ({table['direction'][i]}): "
            f"layer {table['layer'][i]} head {table['head'][i]}"
        ),
        key=persist("attn_parse_pick", 0, "parser_head", int, options.__contains__),
    )
    layer, head = int(table["layer"][pick]), int(table["head"][pick])
    if amap is not None:
        on_your_sentence(amap, layer, head, str(table["direction"][pick]))
    st.button(
        f"Open layer {layer}, head {head} in the head view",
        key="attn_parse_open",
        on_click=open_in_head_view,
        args=(layer, head),
    )
    st.download_button(
        "CSV",
        table.to_csv(index=False).encode(),
        file_name=f"attention_parsers_{name.replace('/', '_')}.csv",
        mime="text/csv",
        key="attn_parse_csv",
        on_click="ignore",
        icon=":material/table:",
    )
