"""The heavy jobs the pages send to a worker process (:func:`ui.jobs.offload`).

Each takes model *names* and plain settings (what a pipe can carry) and loads the encoder in
the worker, where the registry keeps it loaded for the next job. No Streamlit here: the
worker process imports this module.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import pandas as pd

from probing.datasets import Sentence
from probing.probes.results import ProbeResults
from probing.probes.settings import ProbeSettings

if TYPE_CHECKING:
    from probing.encoders.base import Encoder


def _encoder(name: str) -> Encoder:
    from probing.models.registry import load_encoder

    return load_encoder(name)


def sense_table(model: str, lemma: str, pos: str, cap: int) -> pd.DataFrame:
    """Per-layer sense separability of a SemCor lemma's occurrences."""
    from probing.analyses.sense_geometry import encode_lemma, lemma_occurrences, separability

    occ = lemma_occurrences(lemma, pos, max_occurrences=cap)
    return separability(encode_lemma(_encoder(model), occ), occ.senses)


def sense_map(
    model: str, lemma: str, pos: str, cap: int, layer: int, method: str, user_text: str
) -> dict[str, Any]:
    """Map coordinates of the lemma's occurrences at ``layer`` and of the user's own;
    ``warm_s``: the seconds UMAP's first compilation took in this worker (0 when warm)."""
    from probing.analyses.contextual import split_lines
    from probing.analyses.sense_geometry import (
        encode_user_occurrences,
        lemma_occurrences,
        lemma_projection,
        warm_up_umap,
    )

    warm = warm_up_umap() if method == "umap" else 0.0
    encoder = _encoder(model)
    occ = lemma_occurrences(lemma, pos, max_occurrences=cap)
    proj = lemma_projection(encoder, occ, layer, method)
    labels, user = encode_user_occurrences(encoder, split_lines(user_text), occ.forms)
    return {
        "coords": proj.coords,
        "seconds": proj.seconds,
        "senses": occ.senses,
        "glosses": occ.glosses,
        "contexts": occ.contexts(),
        "user_coords": None if user is None else proj.transform(user.space(layer)),
        "user_labels": labels,
        "n_found": occ.n_found,
        "dropped": occ.dropped,
        "warm_s": warm,
    }


def semcor_pool(model: str, size: int, progress: Callable[[int, int], None] | None = None) -> Any:
    """Encode (or find on disk) the model's SemCor neighbour pool of ``size`` occurrences
    (:func:`probing.analyses.sense_pairs.semcor_vocabulary`). Returns None when the pool is
    kept on disk, where the server reads it (a pipe would carry ~100-300 MB of vectors), else
    the pool itself (a cache folder that could not take it)."""
    from probing.analyses.sense_pairs import semcor_pool_stored, semcor_vocabulary

    encoder = _encoder(model)
    pool = semcor_vocabulary(encoder, size, progress=progress)
    return None if semcor_pool_stored(encoder, size) else pool


def probe_layers(
    model: str, settings: ProbeSettings, progress: Callable[[str, int, int], None] | None = None
) -> ProbeResults:
    """The Probing page's run of one model (extraction, probe fits)."""
    import probing.probes.run as probe_run

    return probe_run.probe_layers(_encoder(model), settings, progress=progress)


def probe_upload(
    model: str,
    sentences: Sequence[Sentence],
    progress: Callable[[str, int, int], None] | None = None,
    **kwargs: Any,
) -> ProbeResults:
    """Probes on the user's own CoNLL-U sentences (``probing.probes.upload.probe_upload``)."""
    from probing.probes.upload import probe_upload as run

    return run(_encoder(model), list(sentences), progress=progress, **kwargs)


def sentence_eraser(model: str, task: str, layer: int) -> Any:
    """The Interventions page's eraser kit: LEACE at ``layer`` and the task's probes, fitted
    on 150 training sentences (:func:`probing.interventions.sentence.sentence_eraser`)."""
    from probing.interventions.sentence import sentence_eraser as fit

    return fit(_encoder(model), task, layer)


def cka_compare(
    model_a: str,
    model_b: str | None,
    n_words: int,
    n_boot: int,
    progress: Callable[[int, int], None] | None = None,
) -> Any:
    """The Layer Similarity page's on-request CKA (the registry's ``cka``)."""
    from probing.analyses.params import CkaParams
    from probing.analyses.registry import get

    encoders = [_encoder(model_a)] + ([] if model_b is None else [_encoder(model_b)])
    return get("cka").run(
        encoders,
        CkaParams(n_words=n_words, n_boot=n_boot),
        None if progress is None else (lambda stage, done, total: progress(done, total)),
    )


def layer_report(
    model: str,
    budget_s: float,
    out: str,
    names: Sequence[str],
    progress: Callable[[float, str], None] | None = None,
) -> dict[str, Any]:
    """The Report page's run: ``python -m probing report`` for ``model`` into ``out`` (a
    folder of the cache; a re-run with the same model and budget resumes from its finished
    parts). Returns the report's record (``report.json``)."""
    from pathlib import Path

    from probing.report.run import run_report

    encoder = _encoder(model)
    return run_report(
        model, encoder, Path(out), budget_s, tuple(names), log=None, progress=progress
    )


def report_plan(model: str, budget_s: float, out: str, names: Sequence[str]) -> dict[str, Any]:
    """The plan a report of ``model`` within ``budget_s`` would run (calibrating the model,
    unless ``out`` holds a plan made for the same request): ``Plan.to_dict()`` and whether
    the plan was reused. The plan is kept in ``out`` so that the run is the one shown."""
    from pathlib import Path

    from probing.io import atomic_write_json
    from probing.report.run import PLAN_FILE, prepare

    folder = Path(out)
    prepared = prepare(model, _encoder(model), folder, budget_s, tuple(names))
    folder.mkdir(parents=True, exist_ok=True)
    record = {"request": prepared.request, "plan": prepared.plan.to_dict()}
    atomic_write_json(folder / PLAN_FILE, record)
    return {**prepared.plan.to_dict(), "reused": prepared.reused}


def alterrep_layer(
    model: str,
    layer: int,
    where: str,
    max_fit_cases: int,
    max_eval_cases: int,
    progress: Callable[[str, int, int], None] | None = None,
) -> Any:
    """The Interventions page's on-request AlterRep at one layer (the registry's ``alterrep``)."""
    from probing.analyses.params import AlterRepParams
    from probing.analyses.registry import get

    params = AlterRepParams(
        layers=str(layer),
        where=where,
        max_fit_cases=max_fit_cases,
        max_eval_cases=max_eval_cases,
        n_boot=300,
    )
    return get("alterrep").run([_encoder(model)], params, progress)


def neuron_units(
    model: str,
    task: str,
    layer: int,
    ks: Sequence[int],
    sizes: tuple[int, int, int],
    n_random: int,
    progress: Callable[[str, int, int], None] | None = None,
) -> dict:
    """The Interventions page's on-request "units that matter" run at one layer;
    ``sizes``: train, test and held-out sentences
    (:func:`probing.interventions.neurons_run.run_units`)."""
    from probing.interventions.neurons_run import run_units

    train, test, heldout = sizes
    return run_units(
        _encoder(model),
        task,
        layer,
        ks,
        train_sentences=train,
        test_sentences=test,
        heldout_sentences=heldout,
        n_random=n_random,
        n_boot=300,
        say=progress,
    )


def alterrep_sentence(
    model: str,
    layer: int,
    where: str,
    max_fit_cases: int,
    text: str,
    subject: str,
    forms: tuple[str, str],
) -> dict[str, float]:
    """The user's sentence before and after AlterRep's push at ``layer`` (the eraser fitted
    on ``max_fit_cases`` UD-EWT train cases)."""
    from probing.interventions.alterrep import (
        fit_number_eraser,
        sentence_before_after,
        sentence_case,
    )

    case = sentence_case(text, subject, forms)  # a typo is reported before any fitting
    encoder = _encoder(model)
    eraser = fit_number_eraser(encoder, layer, max_fit_cases)
    return sentence_before_after(encoder, case, layer, eraser, where=where)
