"""The Fill Mask page's lens section: logit lens and tuned lens side by side per mask.

Computation in ``probing.analyses.tuned_lens``, drawing in ``probing.figures.tuned_lens``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import streamlit as st

from probing.analyses.fill_mask import prepare
from probing.analyses.tuned_lens import find_lens, read_masks
from probing.figures.fill_mask import mask_label
from probing.figures.tuned_lens import lens_comparison_figure
from ui.common import friendly_errors, md_text

if TYPE_CHECKING:
    from probing.analyses.tuned_lens import TunedLens
    from probing.encoders.base import Encoder


@st.cache_resource(show_spinner=False)
def _lens(name: str, _encoder: Encoder) -> TunedLens | None:  # one load per model and process
    return find_lens(_encoder)


def lens_section(encoder, name: str, text: str) -> None:
    """Per mask: rank of the final answer and KL to the final distribution per layer,
    logit lens vs tuned lens (when the model has trained translators)."""
    with friendly_errors("Tuned lens"):
        lens = _lens(name, encoder)
        if lens is None:
            st.caption(
                f"No tuned lens for {md_text(name)}: train its translators with "
                f"`python -m probing train-tuned-lens --model {md_text(name)} --out DIR` "
                "(a few minutes on a CPU) to compare it with the logit lens here."
            )
            return
        masked = prepare(encoder, text)
        readout = read_masks(encoder, masked.tokenized, lens)
        st.markdown(
            "**Logit lens vs tuned lens** (Belrose et al. 2023). The logit lens reads each layer "
            "with the MLM head as it is; the tuned lens first maps the layer into the last "
            f"layer's space with an affine translator ({md_text(lens.meta.get('trained_on', ''))})."
        )
        # One lens figure per row: side by side its two panels were squeezed to half a page.
        for m in range(readout.logit_rank.shape[1]):
            title = (
                f"{mask_label(m, masked.word_indices[m])}: “{readout.final_tokens[m]}”, "
                "logit vs tuned lens<br><sup>rank of the final answer and KL(final ‖ layer) per "
                "layer</sup>"
            )
            st.plotly_chart(
                lens_comparison_figure(readout, m, title), key=f"lens-{name}-{m}", width="content"
            )
