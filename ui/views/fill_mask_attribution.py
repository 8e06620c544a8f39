"""The Fill Mask page's "Which words did it use?" section: per-word attributions of one
mask's top guess (or a typed target) for a chosen method.

Computation in ``probing.attribution``; drawing in ``probing.figures.attribution``.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

import streamlit as st

from probing.analyses.fill_mask import MASK_RE, count_masks, fill_mask
from probing.attribution.case import prepare_case
from probing.attribution.integrated_gradients import BASELINES, DEFAULT_STEPS
from probing.attribution.methods import LABELS, METHODS, score_case
from probing.encoders.base import split_words
from probing.figures.attribution import word_bars_figure
from ui.common import friendly_errors, md_text
from ui.state import as_bool, one_of, persist

if TYPE_CHECKING:
    import numpy as np

    from probing.attribution.integrated_gradients import IGResult
    from probing.encoders.bert import TransformersMaskedLM


@st.cache_data(max_entries=8, show_spinner=False)
def _tag(name: str) -> str:
    """The model's part of a parameter name: its own name when short and plain, else a
    digest (a folder path would make the parameter name too long for the address)."""
    if len(name) <= 20 and all(c.isalnum() or c in "-_." for c in name):
        return f"_{name}"
    return "_" + hashlib.sha1(name.encode("utf-8")).hexdigest()[:8]


def _scores(
    model: str,
    words: tuple[str, ...],
    mask_word: int,
    target: str | int,
    baseline: str,
    _encoder: TransformersMaskedLM,
) -> tuple[str, dict[str, np.ndarray], IGResult]:
    """Every method's word scores for one case, cached per (model, case, target, baseline);
    ``target``: a typed word, or the top guess's vocabulary id."""
    if isinstance(target, str):
        case = prepare_case(_encoder, list(words), mask_word, target=target)
    else:
        case = prepare_case(_encoder, list(words), mask_word, target_id=target)
    s = score_case(_encoder, case, baseline=baseline, steps=DEFAULT_STEPS)
    return case.target, s.words, s.ig


def attribution_section(encoder, name: str, text: str) -> None:
    """Per-word bars for the chosen method (off until asked: IG costs a second or two)."""
    if not st.toggle(
        "Which words did it use?",
        key=persist(f"fm_attr_on_{name}", False, f"attr{_tag(name)}", as_bool),
        help="Attribute the guess at the mask to the words around it (Integrated Gradients, "
        "gradient × input, attention × gradient, Value Zeroing, ALTI).",
    ):
        return
    if count_masks(text) != 1:
        st.info("Attribution explains one [MASK]: leave exactly one in the text.")
        return
    a, b, c = st.columns([2, 1, 1])
    method = a.selectbox(
        "Method",
        METHODS,
        format_func=LABELS.get,
        key=persist(
            f"fm_attr_method_{name}",
            METHODS[0],
            f"attr_method{_tag(name)}",
            valid=one_of(list(METHODS)),
        ),
    )
    baseline = b.selectbox(
        "IG baseline",
        BASELINES,
        key=persist(
            f"fm_attr_base_{name}",
            BASELINES[0],
            f"attr_baseline{_tag(name)}",
            valid=one_of(list(BASELINES)),
        ),
        help="What a context word is replaced by at the start of IG's path: the [MASK] "
        "embedding (default: the same removal as the faithfulness curves), [PAD], or zeros.",
    )
    typed = c.text_input(
        "Target",
        key=persist(f"fm_attr_target_{name}", "", f"attr_target{_tag(name)}"),
        placeholder="top guess",
    )
    with friendly_errors("Attribution"), st.spinner("Attributing…"):
        left, right = MASK_RE.split(" " + text.strip(), maxsplit=1)
        before = split_words(left)
        words = (*before, "[MASK]", *split_words(right))
        target = typed.strip() or int(fill_mask(encoder, text, top_k=1)[0].token_ids[0])
        label, scores, ig = _scores(name, words, len(before), target, baseline, encoder)
        st.plotly_chart(
            word_bars_figure(words, scores[method], len(before), label, method),
            key=f"fm_attr_bars_{name}",
            width="content",
        )
        st.caption(
            f"Explained: log p(“{md_text(label)}”) at the mask. A word's score is the sum over "
            f"its pieces. Integrated Gradients ({DEFAULT_STEPS} steps, {baseline} baseline): "
            f"f(x) − f(x′) = {ig.f_input - ig.f_baseline:.3f}, completeness gap "
            f"{ig.delta:+.1e}. Value Zeroing and ALTI show what the mask's representation "
            "is made of (rolled out to the input), not what the target needs. Which method "
            "is most faithful on this model: `results/attribution/faithfulness.json`."
        )
