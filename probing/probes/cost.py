"""How long a probing run will take, from measured runs of the same model and task.

A run costs a fixed part (reading and fingerprinting the splits, loading the cache; the C
grid and bootstrap on little data) plus a part per sentence (training and evaluation
sentences apart: a training sentence is fitted, an evaluation sentence only scored), and its
scalar mixes. They are measured by ``bench/run_cost.py`` with three cold runs of
:func:`probing.probes.run.probe_layers` at different sizes (its defaults otherwise, as the
Probing page runs it) and stored with the machine and date in ``results/run_costs.json``, as
CPU seconds of one thread (a heavy job's worker runs one). Scaling one large run down, as the
page did before, ignored the fixed part: a 20-sentence run was announced at 1 s and took 25.

The scalar mixes are not a line in the sentences: each trains for at least ``min_steps``
optimiser steps (:class:`probing.probes.mix.ScalarMixProbe`), so a small training sample
gets many epochs, and each epoch scores the whole dev split to keep the best one. With all
of UD-EWT dev, 110 training sentences cost ~290 epochs of 25,000 dev words per mix, more
than 400 sentences (72 epochs): a run estimated at 34 s took 86 (issue 46). Their cost is
counted from that work: seconds per (training word x layer x epoch), per (dev word x layer x
epoch), per optimiser step and per epoch (:func:`mix_work`), fitted to the timed mixes of
the measured runs.
"""

from __future__ import annotations

import functools
import json
import math
import os
from collections.abc import Sequence
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from probing import config
from probing.probes.defaults import DEFAULT_MAX_TRAIN_WORDS
from probing.probes.settings import ProbeSettings

if TYPE_CHECKING:
    from probing.encoders.base import Encoder
    from probing.probes.results import ProbeResults

COSTS_FILE = config.results_dir() / "run_costs.json"
MDL_FITS = 10  # an MDL measurement costs about ten fits (its blocks)


def mix_work(
    train_words: float,
    dev_words: float,
    layers: int,
    cumulative: bool = True,
    solver: str = "adam",
) -> tuple[float, float, float, float]:
    """The work of one seed's scalar mixes: (training words x layers x epochs, dev words x
    layers x epochs, optimiser steps, epochs), summed over the mix of all ``layers`` and,
    with ``cumulative``, the mixes of layers 0..l (as :mod:`probing.probes.runners.tagging`
    fits them, with :class:`~probing.probes.mix.ScalarMixProbe`'s defaults: at least
    ``epochs`` epochs and ``min_steps`` steps of ``batch_size`` words; every epoch scores
    dev). ``solver="lbfgs"``: a typical number of full-batch passes (``LBFGS_PASSES``) in
    place of epochs, one dev scoring per mix and no steps, priced at Adam's measured rates
    (a pass does an epoch's arithmetic; provisional until bench/run_cost.py re-measures)."""
    from probing.probes.mix import LBFGS_PASSES, ScalarMixProbe

    mix = ScalarMixProbe()
    n = max(1, round(train_words))
    ks = range(1, layers + 1) if cumulative else range(layers, layers + 1)
    k_sum = sum(ks)
    if solver == "lbfgs":
        return (LBFGS_PASSES * n * k_sum, dev_words * k_sum, 0.0, float(LBFGS_PASSES * len(ks)))
    per_epoch = math.ceil(n / mix.batch_size)
    epochs = max(mix.epochs, math.ceil(mix.min_steps / per_epoch))
    return (
        epochs * n * k_sum,
        epochs * dev_words * k_sum,
        float(epochs * per_epoch * len(ks)),
        float(epochs * len(ks)),
    )


@dataclass(frozen=True)
class RunCost:
    """Seconds of one model's run of one task: ``fixed + per_sentence * sentences`` for
    extraction (sentences encoded); ``fit_fixed + fit_per_sentence * training sentences +
    fit_per_eval_sentence * dev and test sentences`` for fitting the probes, with all
    ``layers`` probed (``fit_per_eval_sentence`` None: as per training sentence, the files
    before issue 46); ``words_per_train_sentence`` converts the training-word cap. The
    scalar mixes (:meth:`mix_seconds`): ``mix_per_train_word``, ``mix_per_dev_word``,
    ``mix_per_step`` and ``mix_per_epoch`` over :func:`mix_work`, with
    ``words_per_dev_sentence`` (all 0 for a task without mixes)."""

    extract_fixed: float
    extract_per_sentence: float
    fit_fixed: float
    fit_per_sentence: float
    layers: int
    words_per_train_sentence: float
    fit_per_eval_sentence: float | None = None
    words_per_dev_sentence: float = 0.0
    mix_per_train_word: float = 0.0
    mix_per_dev_word: float = 0.0
    mix_per_step: float = 0.0
    mix_per_epoch: float = 0.0

    def mix_seconds(
        self,
        train_sentences: float,
        dev_sentences: float,
        layers: int,
        *,
        cumulative: bool = True,
        max_train_words: int | None = DEFAULT_MAX_TRAIN_WORDS,
        solver: str | None = None,
    ) -> float:
        """Seconds of one seed's scalar mixes over ``layers`` layers (the mixes train on the
        probes' training words, at most ``max_train_words``), fitted by ``solver`` (default:
        the runners')."""
        from probing.probes.mix import RUNNER_SOLVER

        words = train_sentences * self.words_per_train_sentence
        if max_train_words is not None:
            words = min(words, max_train_words)
        dev_words = dev_sentences * self.words_per_dev_sentence
        work = mix_work(words, dev_words, layers, cumulative, solver or RUNNER_SOLVER)
        rates = (self.mix_per_train_word, self.mix_per_dev_word)
        return float(np.dot((*rates, self.mix_per_step, self.mix_per_epoch), work))

    def seconds(
        self,
        train_sentences: int,
        eval_sentences: int,
        layers: int,
        *,
        to_encode: int | None = None,
        max_train_words: int | None = DEFAULT_MAX_TRAIN_WORDS,
    ) -> tuple[float, float]:
        """(extraction s, fitting s of the probes, the scalar mixes apart) of a run probing
        ``layers`` layers.

        ``to_encode``: sentences not in the feature cache (None: all of them; 0: no
        extraction). Probes fit on at most ``max_train_words`` words, whatever was encoded.
        """
        n_encode = train_sentences + eval_sentences if to_encode is None else to_encode
        ext = self.extract_fixed + self.extract_per_sentence * n_encode if n_encode else 0.0
        fitted = float(train_sentences)
        if max_train_words is not None and self.words_per_train_sentence > 0:
            fitted = min(fitted, max_train_words / self.words_per_train_sentence)
        share = max(1, layers) / max(1, self.layers)
        per_eval = (
            self.fit_per_sentence
            if self.fit_per_eval_sentence is None
            else self.fit_per_eval_sentence
        )
        return ext, self.fit_fixed + (
            self.fit_per_sentence * fitted + per_eval * eval_sentences
        ) * share

    @classmethod
    def from_runs(
        cls,
        runs: Sequence[dict],
        extraction_runs: Sequence[dict] = (),
        mix_runs: Sequence[dict] = (),
    ) -> RunCost:
        """Fitted to measured runs of this model and task (keys ``train``, ``eval``,
        ``layers``, ``train_words``, ``extract_s``, ``fit_s``; with mixes, ``dev``,
        ``dev_words``, ``mixes``: one ``{k, n, m, epochs, steps, s}`` per mix the run fitted,
        whose seconds are part of ``fit_s``, and ``mix_checks``: mixes timed apart on the
        run's features). ``extraction_runs`` adds runs of other tasks on the same data set:
        extraction does not depend on the task (the cache holds every word), and more points
        steady its per-sentence cost. ``mix_runs``: runs of any task with the same model,
        whose timed mixes steady the mix costs (a mix step costs what the model's dimensions
        make it cost). Runs of three sizes whose training and evaluation sentences vary apart
        give the two their own cost per sentence; two sizes, one for both."""
        if len({r["train"] + r["eval"] for r in runs}) < 2:
            raise ValueError("need runs of at least two sizes")
        both = [*runs, *extraction_runs]
        e0, e1 = fit_line([(r["train"] + r["eval"], r["extract_s"]) for r in both])
        probes = [
            (r["train"], r["eval"], r["fit_s"] - sum(m["s"] for m in r.get("mixes", ())))
            for r in runs
        ]
        sizes = np.array([(1.0, t, e) for t, e, _ in probes])
        if np.linalg.matrix_rank(sizes) == 3:
            f0, f1, f_eval = fit_plane(probes)
        else:
            f0, f1 = fit_line([(t + e, s) for t, e, s in probes])
            f_eval = f1
        largest = max(runs, key=lambda r: r["train"])
        timed = [m for r in runs for m in (*r.get("mixes", ()), *r.get("mix_checks", ()))]
        rates = (0.0, 0.0, 0.0, 0.0)
        if timed:  # a task with mixes: every run of the model steadies their costs
            pool = [
                m
                for r in [*runs, *mix_runs]
                for m in (*r.get("mixes", ()), *r.get("mix_checks", ()))
            ]
            rates = fit_mix_costs(list({id(m): m for m in pool}.values()))
        with_dev = [r for r in runs if r.get("dev")]
        words_per_dev = (
            sum(r["dev_words"] for r in with_dev) / sum(r["dev"] for r in with_dev)
            if timed and with_dev
            else 0.0
        )
        return cls(
            e0,
            e1,
            f0,
            f1,
            int(largest["layers"]),
            largest["train_words"] / max(1, largest["train"]),
            f_eval,
            words_per_dev,
            *rates,
        )


def fit_mix_costs(mixes: Sequence[dict]) -> tuple[float, float, float, float]:
    """Non-negative least squares (seconds per training word x layer x epoch, per dev word x
    layer x epoch, per optimiser step, per epoch) of timed mix fits ``{k, n, m, epochs,
    steps, s}``, relative errors weighted alike (a small fit counts as much as a large one)."""
    from scipy.optimize import nnls

    A = np.array(
        [
            [m["epochs"] * m["n"] * m["k"], m["epochs"] * m["m"] * m["k"], m["steps"], m["epochs"]]
            for m in mixes
        ],
        float,
    )
    t = np.array([m["s"] for m in mixes], float)
    w = 1.0 / np.maximum(t, 1e-3)
    coef, _ = nnls(A * w[:, None], t * w)
    return tuple(float(c) for c in coef)


def fit_plane(points: Sequence[tuple[float, float, float]]) -> tuple[float, float, float]:
    """Non-negative least squares (fixed, per a, per b) of ``seconds = fixed + per_a * a +
    per_b * b`` over (a, b, seconds) points (a negative part is noise in a time)."""
    from scipy.optimize import nnls

    A = np.array([(1.0, a, b) for a, b, _ in points])
    coef, _ = nnls(A, np.array([s for _, _, s in points], float))
    return float(coef[0]), float(coef[1]), float(coef[2])


def fit_line(points: Sequence[tuple[float, float]]) -> tuple[float, float]:
    """Least-squares (fixed, per) of ``seconds = fixed + per * n`` over (n, seconds) points,
    neither below zero (a negative slope or intercept is noise in a time)."""
    n = np.array([p[0] for p in points], float)
    t = np.array([p[1] for p in points], float)
    per = max(0.0, float(np.polyfit(n, t, 1)[0]))
    return max(0.0, float(np.mean(t - per * n))), per


def load_costs(path: str | os.PathLike[str] = COSTS_FILE) -> dict[tuple[str, str], RunCost]:
    """{(model, task): RunCost} from the measured file ({} when it is missing); parsed once
    per version of the file (the Probing page asks on every render)."""
    try:
        version = Path(path).stat().st_mtime_ns
    except OSError:
        return {}
    return dict(_parsed_costs(str(path), version))


@functools.lru_cache(maxsize=4)  # ``version`` is only part of the cache key
def _parsed_costs(path: str, version: int) -> dict[tuple[str, str], RunCost]:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    names = [f.name for f in fields(RunCost)]
    # (a row of an older file, without the mix costs, reads with their defaults)
    return {
        (row["model"], row["task"]): RunCost(**{k: row[k] for k in names if k in row})
        for row in data.get("costs", [])
    }


def cost_row(model: str, task: str, cost: RunCost) -> dict:
    """One entry of ``results/run_costs.json`` (6 significant digits: the mix costs are
    around 1e-8 s)."""
    return {
        "model": model,
        "task": task,
        **{
            k: v if v is None or isinstance(v, int) else float(f"{v:.6g}")
            for k, v in asdict(cost).items()
        },
    }


def estimate_seconds(
    encoder: Encoder,
    settings: ProbeSettings,
    costs: dict[tuple[str, str], RunCost] | None = None,
) -> tuple[float, float] | None:
    """(extraction s, fitting s) of a run of ``settings``; extraction counts only the splits
    not in the feature cache, fitting the probes scales with the seeds and MDL (about ten
    fits per MDL seed), the scalar mixes with the seeds. None without measured costs for the
    model and task."""
    cost = (load_costs() if costs is None else costs).get((settings.model, settings.task))
    if cost is None:
        return None
    plan = extraction_plan(encoder, settings)
    sizes = {split: n for split, (n, _) in plan.items()}
    to_encode = sum(n for n, cached in plan.values() if not cached)
    layers = len(settings.layers) if settings.layers else int(encoder.info.n_contextual_layers) + 1
    extract, fit = cost.seconds(
        sizes["train"],
        sizes["dev"] + sizes["test"],
        layers,
        to_encode=to_encode,
        max_train_words=settings.max_train_words,
    )
    n_mdl = (
        settings.seeds if settings.mdl_seeds is None else min(settings.mdl_seeds, settings.seeds)
    )
    fits = settings.seeds + (MDL_FITS * n_mdl if settings.mdl else 0)
    mixes = 0.0
    if settings.scalar_mix:
        mixes = settings.seeds * cost.mix_seconds(
            sizes["train"],
            sizes["dev"],
            layers,
            cumulative=settings.cumulative_mix,
            max_train_words=settings.max_train_words,
        )
    return extract, fit * fits + mixes


def extraction_plan(encoder: Encoder, settings: ProbeSettings) -> dict[str, tuple[int, bool]]:
    """Per split the run reads (train, dev, test: every one, whatever the task): (sentences,
    already in the feature cache?). A run extracts the splits that are not."""
    from probing.features import features_cached, split_size

    caps = {
        "train": settings.max_train_sentences,
        "dev": settings.max_dev_sentences,
        "test": settings.max_test_sentences,
    }
    plan = {}
    for split, cap in caps.items():
        whole = split_size(settings.dataset_name, split)
        n = whole if cap is None else min(int(cap), whole)
        plan[split] = (n, features_cached(encoder, settings.dataset_name, split, max_sentences=cap))
    return plan


@dataclass(frozen=True)
class RunEstimate:
    """What pressing Run will cost: ``extract_s`` + ``fit_s``. ``from_last_run``: the fit
    time is the model's own last run of these settings (extraction then counts only splits
    the cache has lost); else both come from the measured costs. ``to_encode``: sentences
    per split not in the feature cache."""

    extract_s: float
    fit_s: float
    from_last_run: bool
    to_encode: dict[str, int]

    @property
    def seconds(self) -> float:
        return self.extract_s + self.fit_s

    @property
    def measured(self) -> bool:
        """Whether any part comes from the measured (idle-machine) costs."""
        return not self.from_last_run or self.extract_s > 0


def estimate_run(
    encoder: Encoder, settings: ProbeSettings, last: ProbeResults | None = None
) -> RunEstimate | str:
    """The estimate of a run of ``settings`` (``last``: the model's own stored run of them,
    whose fit time is used), or why there is none."""
    from probing.errors import ContextLensError

    try:
        est = estimate_seconds(encoder, settings)
        plan = extraction_plan(encoder, settings) if est is not None else {}
    except ContextLensError:
        est, why = None, "time unknown: its data could not be read"
    else:
        why = "not measured for this model and task (minutes for thousands of sentences)"
    to_encode = {split: n for split, (n, cached) in plan.items() if not cached} if est else {}
    fit = None if last is None else last.meta.timing_s.get("fit")
    if fit is not None:
        return RunEstimate(est[0] if est else 0.0, float(fit), True, to_encode)
    if est is None:
        return why
    return RunEstimate(est[0], est[1], False, to_encode)


def load_factor() -> float:
    """How much slower than on an idle machine work runs now: the 1-minute load average per
    core, at least 1 (the measured costs are from an idle 2-core machine)."""
    try:
        return max(1.0, os.getloadavg()[0] / max(1, os.cpu_count() or 1))
    except OSError:
        return 1.0
