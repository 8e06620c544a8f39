"""The app's pages, in the order the sidebar lists them: one entry each.

``app.py`` builds ``st.navigation`` from :data:`PAGES` and the home page lists them with
their blurbs. A page is served at its file name without the number (``pages/4_Probing.py``
at ``/Probing``): the addresses that links and permalinks have always used.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePosixPath


@dataclass(frozen=True)
class AppPage:
    """One page: its script (relative to ``app.py``), its title and a one-line blurb."""

    script: str
    title: str
    blurb: str

    @property
    def url_path(self) -> str:
        """``pages/4_Probing.py`` -> ``Probing``."""
        return PurePosixPath(self.script).stem.split("_", 1)[1]


PAGES: tuple[AppPage, ...] = (
    AppPage(
        "pages/1_Static_vs_Contextual.py",
        "Static vs Contextual",
        "one vector per word type, or one per occurrence — compare a word's occurrences "
        "layer by layer, see its senses separate, measure contextuality.",
    ),
    AppPage(
        "pages/2_Fill_Mask.py",
        "Fill Mask",
        "what a masked-language model guesses for each [MASK], and at which layer it knows.",
    ),
    AppPage(
        "pages/3_Attention.py",
        "Attention",
        "where each attention head looks: head view, model view, word-level maps, head statistics.",
    ),
    AppPage(
        "pages/4_Probing.py",
        "Probing",
        "what each layer knows — linear probes for part of speech, supersense and word sense "
        "on every layer, with control tasks, baselines and the scalar mix.",
    ),
    AppPage(
        "pages/5_Layering.py",
        "Layering",
        "every probing task of a model on one figure, by relative depth.",
    ),
    AppPage(
        "pages/6_Course_Notes.py",
        "Course Notes",
        "sentence vectors by [CLS], mean and attention pooling; ELMo's forward and backward "
        "halves next to BERT's layers; next-sentence prediction.",
    ),
    AppPage(
        "pages/7_Probe_Lens.py",
        "Probe Lens",
        "every trained probe applied to your sentence, at every layer.",
    ),
    # Interventions follow the probes they test; Layer Similarity compares whole layers.
    AppPage(
        "pages/8_Interventions.py",
        "Interventions",
        "does the model use what the probe finds? Erasure, agreement, activation patching "
        "and head ablation.",
    ),
    AppPage(
        "pages/9_Layer_Similarity.py",
        "Layer Similarity",
        "how alike layers are, within a model and across two (linear CKA).",
    ),
    AppPage(
        "pages/10_Report.py",
        "Report",
        "one page of what each layer of a model knows, sized to a time budget: plan it, run "
        "it in the background, read or download it.",
    ),
)
