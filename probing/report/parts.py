"""Each report part: how it runs, its stored form (``OUT/parts/<part>.json`` + ``.csv``), its
figure, the claims it gives the summary, its method and what its intervals do not support.

Probe parts (WSD among them) go through :func:`probing.probes.run.probe_layers`; the analyses
through the registry (:mod:`probing.analyses.registry`); a language-model head's parts
(cloze, tuned lens, agreement) through :mod:`probing.report.lm_parts`. The stored form is what the HTML page is made
from, so a resumed report and a fresh one render the same way.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from probing.report import lm_parts
from probing.report.plan import LM_PARTS, PROBE_TASKS

if TYPE_CHECKING:
    import plotly.graph_objects as go

    from probing.encoders.base import Encoder
    from probing.probes.results import ProbeResults

Progress = Callable[[str, int, int], None]

TITLES = {
    "pos": "Universal POS tags (UD-EWT)",
    "deprel": "Dependency relations (UD-EWT, head–dependent pairs)",
    "supersense": "WordNet supersenses (SemCor)",
    "wsd": "Word senses: 1-NN to SemCor sense centroids (WSD)",
    "dep-distance": "Structural probe: tree distance (UD-EWT)",
    "cka": "Linear CKA between layers",
    "contextuality": "Contextuality (Ethayarajh 2019)",
    "attention-stats": "Attention head statistics (Clark et al. 2019)",
    **lm_parts.TITLES,
}

PROBE_METHOD = (
    "A linear probe is trained on each layer's word vectors ({train} training sentences, a "
    "fixed seeded sample; at most 20,000 words) with its inverse regularisation C chosen on "
    "{dev} dev sentences, one C for all layers; it is scored on {test} test sentences with "
    "95 % bootstrap intervals (test sentences resampled, 1,000 draws). A control task "
    "(Hewitt & Liang 2019: random labels per word type) gives selectivity. Layers are compared "
    "in pairs on the same test sentences (paired bootstrap, Holm over the table); the "
    "sentences in the summary are written from that table. Scalar mixes are left out of a "
    "report (their cost does not shrink with the sample)."
)
WSD_METHOD = (
    "Word sense disambiguation as in Peters et al. (2018, §5.3) and Coenen et al. (2019): "
    "each layer's vectors of a sense's occurrences in {train} SemCor training sentences are "
    "averaged into a centroid; a test word takes the sense of its lemma whose centroid is "
    "nearest (cosine); a lemma unseen in training takes its only WordNet sense, and is left "
    "unanswered when it has several. Nothing is trained. Scored by F1 on {test} test "
    "sentences with 95 % bootstrap intervals (test sentences resampled); layers are compared "
    "in pairs on the same sentences (paired bootstrap, Holm over the table)."
)
STRUCTURAL_METHOD = (
    "Hewitt & Manning's (2019) structural probe: a linear map per layer trained so that "
    "squared distances between word vectors approximate tree distances, on {train} training "
    "sentences, scored by undirected UUAS and distance Spearman on {test} test sentences with "
    "bootstrap intervals; layers are compared in pairs on the same sentences."
)
METHODS = {
    "cka": (
        "Linear CKA (unbiased HSIC) between every pair of the model's layers on the same "
        "{n_words} words of UD-EWT {split} (whole sentences), with 95 % percentile intervals "
        "from {n_boot} sentence-bootstrap draws."
    ),
    "contextuality": (
        "Ethayarajh's (2019) self-similarity, intra-sentence similarity and maximum "
        "explainable variance per layer on {n_sentences} UD-EWT {split} sentences (seeded "
        "sample), for word types seen at least 5 times, each beside its anisotropy baseline "
        "(random pairs of words)."
    ),
    "attention-stats": (
        "Clark et al.'s (2019) head statistics (attention entropy and the share of attention "
        "to [CLS], [SEP], punctuation, the previous and next token) over {n_sentences} "
        "sentences of whole UD-EWT {split} documents, averaged per document; intervals "
        "resample documents."
    ),
}
LIMITS = {
    "probe": (
        "What the intervals do not support: a layer above another holds on this sample of "
        "this data set, not on other data sets or domains; where intervals overlap and the "
        "paired comparison is not called, no claim is made; a probe's accuracy says what a "
        "linear map can read from a layer, not that the model uses it."
    ),
    "wsd": (
        "What the intervals do not support: a layer's F1 holds for this sample of SemCor; at "
        "a reduced size many test lemmas have no training occurrence, and their items are "
        "answered by the back-off (the same at every layer) or not at all, so layers differ "
        "only on the lemmas seen; 1-NN measures how the layer's geometry separates senses, "
        "not what a trained classifier or the model itself could do with them."
    ),
    "cka": (
        "What the intervals do not support: a similarity between layers on these words, not "
        "that the layers compute the same thing; CKA values of different models or samples "
        "are not compared here, and no claim is made where intervals overlap."
    ),
    "contextuality": (
        "What the intervals do not support: these are descriptions of this sample's "
        "geometry; the report makes no comparative sentence about them, and differences "
        "between layers are not tested."
    ),
    "attention-stats": (
        "What the intervals do not support: attention weights are not explanations (Jain & "
        "Wallace 2019); a head's share on this sample says where its weight goes, not what "
        "the model uses; heads are not compared with each other here."
    ),
}


# -- running ---------------------------------------------------------------------------


def run_part(
    name: str, encoder: Encoder, settings: dict[str, Any], progress: Progress
) -> tuple[dict[str, Any], str]:
    """Run part ``name``: (its JSON-ready result, its CSV text)."""
    if name in LM_PARTS:
        return lm_parts.run_part(name, encoder, settings, progress)
    if name in PROBE_TASKS:
        from probing.probes.run import probe_layers
        from probing.probes.settings import ProbeSettings

        values = {k: v for k, v in settings.items() if k != "task"}
        results = probe_layers(encoder, ProbeSettings.of(name, **values), progress=progress)
        return results.to_dict(), results.table.to_csv(index=False, float_format="%.6g")
    from probing.analyses.registry import get

    analysis = get(name)
    result = analysis.run([encoder], analysis.params(**settings), progress)
    if name == "cka":
        payload = result.to_record()
        csv = pd.DataFrame(result.to_rows()).to_csv(index=False, float_format="%.5f")
        return payload, csv
    if name == "contextuality":
        table = result.astype(object).where(result.notna(), None)
        return {"rows": table.to_dict(orient="records")}, result.to_csv(index=False)
    if name == "attention-stats":
        payload = {
            "model": result.model,
            "n_sentences": result.n_sentences,
            "n_queries": result.n_queries,
            "skipped": result.skipped,
            "n_documents": result.n_documents,
            "averaging": result.averaging,
            "values": {k: np.asarray(v).round(6).tolist() for k, v in result.values.items()},
            "ci": {
                k: [np.asarray(lo).round(6).tolist(), np.asarray(hi).round(6).tolist()]
                for k, (lo, hi) in result.ci.items()
            },
        }
        return payload, result.to_frame().to_csv(index=False, float_format="%.6g")
    raise ValueError(name)


# -- reading back ------------------------------------------------------------------------


def probe_results(payload: dict[str, Any]) -> ProbeResults:
    """A probe part's stored result as :class:`~probing.probes.results.ProbeResults` (as
    ``ProbeResults.from_json`` reads a file)."""
    from probing.probes.meta import RunMeta
    from probing.probes.results import ProbeResults, typed_table

    cog = payload.get("centre_of_gravity")
    return ProbeResults(
        model=payload["model"],
        task=payload["task"],
        dataset=payload["dataset"],
        table=typed_table(payload["results"]),
        scalar_mix=payload.get("scalar_mix"),
        centre_of_gravity=float("nan") if cog is None else cog,
        meta=RunMeta.from_dict(
            payload.get("meta"),
            model=payload["model"],
            task=payload["task"],
            dataset=payload["dataset"],
        ),
        comparisons=payload.get("comparisons"),
    )


def figure(name: str, payload: dict[str, Any]) -> go.Figure:
    """The part's figure, from its stored result."""
    if name in LM_PARTS:
        return lm_parts.figure(name, payload)
    if name in PROBE_TASKS:
        from probing.figures.probing import layer_curve

        return layer_curve(probe_results(payload))
    if name == "cka":
        from probing.analyses.cka import CKAResult
        from probing.figures.cka import cka_figure

        return cka_figure(CKAResult.from_record(payload))
    if name == "contextuality":
        from probing.figures.contextual import contextuality_figure

        table = pd.DataFrame(payload["rows"])
        return contextuality_figure([table.astype({c: float for c in _float_columns(table)})])
    if name == "attention-stats":
        from probing.analyses.attention import HeadStatistics
        from probing.figures.attention import statistics_figure

        stats = HeadStatistics(
            values={k: np.asarray(v, dtype=float) for k, v in payload["values"].items()},
            n_sentences=payload["n_sentences"],
            n_queries=payload["n_queries"],
            skipped=payload["skipped"],
            model=payload["model"],
            n_documents=payload["n_documents"],
            averaging=payload["averaging"],
            ci={
                k: (np.asarray(lo, dtype=float), np.asarray(hi, dtype=float))
                for k, (lo, hi) in payload["ci"].items()
            },
        )
        return statistics_figure(stats)
    raise ValueError(name)


def _float_columns(table: pd.DataFrame) -> list[str]:
    """Columns of numbers stored with ``None`` for missing values (back to NaN)."""
    out = []
    for col in table.columns:
        values = [v for v in table[col] if v is not None]
        if values and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
            out.append(col)
    return out


def claims(name: str, payload: dict[str, Any]) -> list[str]:
    """The sentences the comparison engine wrote for this part (probe parts: the paired
    layer comparisons, :func:`probing.probes.statements.table_sentence`; the LM parts: their
    own tables, :func:`probing.report.lm_parts.claims`); none otherwise."""
    if name in LM_PARTS:
        return lm_parts.claims(name, payload)
    if name not in PROBE_TASKS:
        return []
    from probing.probes.statements import table_sentence

    sentence = table_sentence(payload.get("comparisons"))
    return [sentence] if sentence else []


def method(name: str, settings: dict[str, Any], payload: dict[str, Any]) -> str:
    """One paragraph: what was run, with the counts the run used (a split smaller than the
    plan's cap gives all of its sentences)."""
    if name in LM_PARTS:
        return lm_parts.method(name, settings, payload)
    if name in PROBE_TASKS:
        meta = payload.get("meta") or {}
        template = {"dep-distance": STRUCTURAL_METHOD, "wsd": WSD_METHOD}.get(name, PROBE_METHOD)
        return template.format(
            **{
                split: meta.get(f"n_{split}_sentences", settings[f"max_{split}_sentences"])
                for split in ("train", "dev", "test")
            }
        )
    values = dict(settings)
    if name == "cka":
        values.update(n_words=payload["n_words"], n_boot=payload["n_boot"])
    if name == "attention-stats":
        values.update(n_sentences=payload["n_sentences"])
    return METHODS[name].format(**values)


def limits(name: str) -> str:
    """What the part's intervals do not support."""
    if name in LM_PARTS:
        return lm_parts.limits(name)
    if name in LIMITS:
        return LIMITS[name]
    return LIMITS["probe"]
