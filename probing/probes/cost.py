"""How long a probing run will take, from measured runs of the same model and task.

A run costs a fixed part (reading and fingerprinting the splits, loading the cache; the C
grid, mixes and bootstrap on little data) plus a part per sentence. Both are measured by
``bench/run_cost.py`` with two cold runs of :func:`probing.probes.run.probe_layers` at
different sizes (its defaults otherwise, as the Probing page runs it) and stored with the
machine and date in ``results/run_costs.json``. Scaling one large run down, as the page did
before, ignored the fixed part: a 20-sentence run was announced at 1 s and took 25.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from probing import config
from probing.probes.defaults import DEFAULT_MAX_TRAIN_WORDS
from probing.probes.settings import ProbeSettings

COSTS_FILE = config.results_dir() / "run_costs.json"
MDL_FITS = 10  # an MDL measurement costs about ten fits (its blocks)


@dataclass(frozen=True)
class RunCost:
    """Seconds of one model's run of one task: ``fixed + per_sentence * sentences`` for
    extraction (sentences encoded) and for fitting (training + evaluation sentences), with
    all ``layers`` probed; ``words_per_train_sentence`` converts the training-word cap."""

    extract_fixed: float
    extract_per_sentence: float
    fit_fixed: float
    fit_per_sentence: float
    layers: int
    words_per_train_sentence: float

    def seconds(
        self,
        train_sentences: int,
        eval_sentences: int,
        layers: int,
        *,
        to_encode: int | None = None,
        max_train_words: int | None = DEFAULT_MAX_TRAIN_WORDS,
    ) -> tuple[float, float]:
        """(extraction s, fitting s) of a run probing ``layers`` layers.

        ``to_encode``: sentences not in the feature cache (None: all of them; 0: no
        extraction). Probes fit on at most ``max_train_words`` words, whatever was encoded.
        """
        n_encode = train_sentences + eval_sentences if to_encode is None else to_encode
        ext = self.extract_fixed + self.extract_per_sentence * n_encode if n_encode else 0.0
        fitted = float(train_sentences)
        if max_train_words is not None and self.words_per_train_sentence > 0:
            fitted = min(fitted, max_train_words / self.words_per_train_sentence)
        share = max(1, layers) / max(1, self.layers)
        return ext, self.fit_fixed + self.fit_per_sentence * (fitted + eval_sentences) * share

    @classmethod
    def from_runs(cls, runs: Sequence[dict], extraction_runs: Sequence[dict] = ()) -> RunCost:
        """Fitted to measured runs of this model and task (keys ``train``, ``eval``,
        ``layers``, ``train_words``, ``extract_s``, ``fit_s``). ``extraction_runs`` adds runs
        of other tasks on the same data set: extraction does not depend on the task (the
        cache holds every word), and more points steady its per-sentence cost."""
        if len({r["train"] + r["eval"] for r in runs}) < 2:
            raise ValueError("need runs of at least two sizes")
        both = [*runs, *extraction_runs]
        e0, e1 = fit_line([(r["train"] + r["eval"], r["extract_s"]) for r in both])
        f0, f1 = fit_line([(r["train"] + r["eval"], r["fit_s"]) for r in runs])
        largest = max(runs, key=lambda r: r["train"])
        return cls(
            e0,
            e1,
            f0,
            f1,
            int(largest["layers"]),
            largest["train_words"] / max(1, largest["train"]),
        )


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


@functools.lru_cache(maxsize=4)
def _parsed_costs(path: str, version: int) -> dict[tuple[str, str], RunCost]:  # noqa: ARG001
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    fields = set(RunCost.__dataclass_fields__)
    return {
        (row["model"], row["task"]): RunCost(**{k: row[k] for k in fields})
        for row in data.get("costs", [])
    }


def cost_row(model: str, task: str, cost: RunCost) -> dict:
    """One entry of ``results/run_costs.json``."""
    return {"model": model, "task": task, **{k: round(v, 5) for k, v in asdict(cost).items()}}


def estimate_seconds(
    encoder,  # noqa: ANN001 - any Encoder
    settings: ProbeSettings,
    costs: dict[tuple[str, str], RunCost] | None = None,
) -> tuple[float, float] | None:
    """(extraction s, fitting s) of a run of ``settings``; extraction counts only the splits
    not in the feature cache, fitting scales with the seeds and MDL (about ten fits per MDL
    seed). None without measured costs for the model and task."""
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
    return extract, fit * fits


def extraction_plan(encoder, settings: ProbeSettings) -> dict[str, tuple[int, bool]]:  # noqa: ANN001
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


def estimate_run(encoder, settings: ProbeSettings, last=None) -> RunEstimate | str:  # noqa: ANN001
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
