"""The Course Notes section "What fine-tuning changes": the committed run, per layer."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import streamlit as st

from probing import config
from probing.analyses.finetune_effects import claim_sentences
from probing.figures.finetune import probe_figure, shift_figure
from probing.probes.compare import METHOD, Difference


def load(folder: Path | None = None) -> tuple[dict, dict, dict] | None:
    """(layers.json, comparisons.json, card.json) of the committed run (default
    ``<results>/finetune``); None if absent."""
    folder = config.results_dir() / "finetune" if folder is None else folder
    try:
        return tuple(  # type: ignore[return-value]
            json.loads((folder / f"{n}.json").read_text(encoding="utf-8"))
            for n in ("layers", "comparisons", "card")
        )
    except (OSError, ValueError):
        return None


def sizes_line(card: dict) -> str:
    """What was trained, on how much, for how long (from the card)."""
    runs = card["runs"]
    parts = []
    for key in sorted(runs):
        r = runs[key]
        parts.append(
            f"{key}: {r['n_train']} sentences, {r['steps']} steps"
            f"{' (stopped early)' if r['stopped_early'] else ''}, kept step {r['best_step']}, "
            f"{r['train_step_wall_s']:.0f} s of steps"
        )
    s = runs[sorted(runs)[0]]["settings"]
    return (
        f"AdamW lr {s['lr']:g}, warm-up {s['warmup']:.0%}, weight decay {s['weight_decay']:g}, "
        f"clipping {s['clip']:g}, batch {s['batch_size']}, at most {s['epochs']} epochs, "
        f"early stopping on dev (patience {s['patience']} evaluations). " + "; ".join(parts) + "."
    )


def render() -> None:
    """Draw the section from ``results/finetune/``."""
    st.subheader("What fine-tuning changes")
    st.caption(
        "ELMo's way: freeze the encoder and learn a scalar mix of its layers for the task. "
        "BERT's way: train every weight with a small head on the last layer. Here minilm-l6 "
        "was fine-tuned on UD-EWT part of speech (a head on each word's first piece) and on "
        "Brown genre (a head on the mean of the pieces), three seeds each; each layer is then "
        "compared with the same layer of the pre-trained model: linear CKA, the cosine "
        "distance each word's vector moved, and a probe for the task it was *not* tuned on."
    )
    loaded = load()
    if loaded is None:
        st.info(
            "No committed fine-tuning run in results/finetune/. Make it with "
            "`python results/finetune/make.py --train --jobs 2 --out results/finetune --overwrite`."
        )
        return
    figures, comparisons, card = loaded
    st.caption(sizes_line(card))
    a, b = st.columns(2)
    with a:
        st.plotly_chart(shift_figure(figures, "cka"), use_container_width=True)
    with b:
        st.plotly_chart(shift_figure(figures, "distance"), use_container_width=True)
    a, b = st.columns(2)
    with a:
        st.plotly_chart(probe_figure(figures, "upos", "genre"), use_container_width=True)
    with b:
        st.plotly_chart(probe_figure(figures, "genre", "upos"), use_container_width=True)
    st.markdown("**What the comparison engine says** (each family Holm-corrected):")
    for table in comparisons.values():
        diffs = [Difference.from_dict(r) for r in table["rows"]]
        st.markdown(f"*{table['note']}*")
        st.markdown("\n".join(f"- {s}" for s in claim_sentences(diffs)))
    mix = comparisons.get("fine_tuning_vs_scalar_mix")
    if mix:
        rows = [
            {
                "comparison": f"{r['a']} − {r['b']}",
                "difference (points)": round(100 * r["diff"], 2),
                "95 % interval": f"[{100 * r['ci_low']:+.2f}, {100 * r['ci_high']:+.2f}]",
                "p (Holm)": f"{r['p_holm']:.3g}",
                "called": r["called"],
            }
            for r in mix["rows"]
        ]
        st.dataframe(pd.DataFrame(rows), hide_index=True, use_container_width=True)
    st.caption(f"Intervals: {METHOD}.")
