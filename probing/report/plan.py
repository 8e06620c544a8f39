"""The report's plan: which parts the model can do, and at what size to fit the budget.

A part's time is predicted as reading + encoding + computing:

- encoding is measured on the model itself: :func:`calibrate` times 64 UD-EWT sentences
  once (seconds per sentence on this machine now);
- reading (parsing a data set's files) and computing (probe fits, bootstraps, Gram
  matrices) are CPU seconds of one thread measured by ``bench/report_costs.py`` on minilm-l6
  (:data:`READ_S_PER_MB`, :data:`COMPUTE`: ``fixed + per_unit × size``), scaled by the
  model's layers and width relative to minilm-l6 and multiplied by the slowdown this process
  sees now (:func:`machine_speed`: a timed one-thread NumPy workload).

The probes of one data set share one size, so that their features are read and encoded once
(the feature cache keeps every word with every label). Each size comes from a ladder
(training sentences 50, 100, 200, …, 1600); the plan starts every part at its smallest rung
and raises the group furthest down its ladder while the total fits :data:`HEADROOM` of the
budget. While the report runs, parts that took longer than estimated shrink the parts still
to run (:func:`probing.report.run.shrink_rest`).

WSD (1-NN to SemCor sense centroids) is a probe of SemCor, sized with the supersense probe.
The masked-LM parts (:data:`LM_PARTS`: cloze accuracy per layer, the tuned lens) are planned
only for a model whose info says ``lm_kind == "masked"`` (:func:`lacks_lm_head` says why not
otherwise); the tuned lens's size is its training sentences, with its fine-tuning steps and
readout sentences on the same rung (:data:`LENS_STEPS`).
"""

from __future__ import annotations

import math
import re
import time
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from probing.errors import InvalidArgumentError, ReportBudgetError

if TYPE_CHECKING:
    from probing.encoders.base import Encoder

PROBE_TASKS = ("pos", "deprel", "supersense", "wsd", "dep-distance")
ANALYSIS_PARTS = ("cka", "contextuality", "attention-stats")
# A language-model head's parts (probing.report.lm_parts): cloze and the tuned lens need a
# masked one; agreement also runs on ELMo's next-word LMs (Linzen et al.'s left context).
LM_PARTS = ("cloze", "tuned-lens", "agreement")
PARTS = (*PROBE_TASKS, *ANALYSIS_PARTS, *LM_PARTS)

BUDGET_RANGE_S = (30, 24 * 3600)  # 30 s to 24 h
HEADROOM = 0.8  # plan for 80 % of the budget: estimates are within ~x1.5, not exact
REPORT_OVERHEAD_S = 3.0  # identity hashes, the HTML page and report.json

# Ladders: a probe's size is its training sentences (dev = half, test = as many, capped at
# the split); an analysis's is its own count (CKA words, sentences otherwise). The last rung
# is the full size: a part below it is "shrunk".
PROBE_LADDER = (50, 100, 200, 400, 800, 1600)
LADDERS: dict[str, tuple[int, ...]] = {
    **dict.fromkeys(PROBE_TASKS, PROBE_LADDER),
    "cka": (200, 400, 800, 1600, 2000),
    "contextuality": (60, 120, 250, 500),
    "attention-stats": (30, 60, 120, 200),
    "cloze": (100, 200, 500, 1000, 2000),
    "tuned-lens": (100, 200, 450, 900),  # training sentences (train-tuned-lens: 900)
    "agreement": (100, 250, 500),  # UD-EWT dev cases (it has 499)
}
# The tuned lens's KL fine-tuning steps and readout sentences at each rung (its full size is
# ``train-tuned-lens``'s defaults: 150 steps, 900 Brown sentences, 500 UD-EWT sentences).
LENS_STEPS = {100: 30, 200: 60, 450: 100, 900: 150}
WORDS_PER_SENTENCE = 12.5  # UD-EWT dev, for the sentences CKA's word count encodes


@dataclass(frozen=True)
class Compute:
    """CPU seconds of a part's computing (reading and encoding apart) on the reference
    model (minilm-l6: 7 layer arrays of 384), one thread: ``fixed + per_unit × units +
    per_eval × evaluation sentences`` (units: :func:`compute_units`)."""

    fixed: float
    per_unit: float
    per_eval: float = 0.0


REFERENCE_LAYERS, REFERENCE_DIM = 7, 384
# CPU seconds of one thread measured by bench/report_costs.py on minilm-l6 (2026-12-05, this
# 2-core machine): probes on features already in the cache at 50 and 200 training sentences
# (dev and test at the ladder's ratio, folded into per_unit); the rest at two sizes with
# their encoding subtracted, as :func:`calibrate` measures it (64 sentences; re-measured
# 16:32-16:42 UTC at load average 4-14 once the calibration stopped timing padding: the
# 16-sentence one had counted 2.4x the encoding and left these near zero).
COMPUTE: dict[str, Compute] = {
    "pos": Compute(3.03, 0.0228),
    "deprel": Compute(9.10, 0.0455),
    "supersense": Compute(2.96, 0.0254),
    "dep-distance": Compute(2.37, 0.0656),
    # CKA at 200 and 800 words (per (words / 100)^2), the others at 60/250 and 30/120
    # sentences
    "cka": Compute(1.035, 0.0143),
    "contextuality": Compute(0.428, 0.00163),
    "attention-stats": Compute(0.348, 0.00499),
    # WSD on minilm-l6 at 50 and 200; the LM parts on minilm-l6-mlm, cloze at 100 and 500
    # sentences (the head at every layer: per sentence), the tuned lens at 30 and 60 steps
    # (per step; its readout's head products are in ``fixed``), agreement at 100 and 500
    # cases less the reading of UD-EWT train and dev (16 MB, counted apart: 3.2 s)
    "wsd": Compute(0.13, 0.0106),
    "cloze": Compute(0.554, 0.0366),
    "tuned-lens": Compute(1.984, 0.704),
    "agreement": Compute(2.67, 0.0154),
}
# Parsing a data set's files (CoNLL-U, SemCor XML), CPU seconds per MB (bench: UD-EWT 0.20,
# SemCor 0.15). A probe reads its three splits whole (then samples); the first run on a
# feature cache reads them twice (their sizes are counted and kept beside the cache).
READ_S_PER_MB = 0.2
MASKED_LM_REASON = (
    "{part} needs a masked-LM head; {name} has {what}, so no fill-mask or lens readout"
)
SPEED_REFERENCE_S = 0.057  # speed_probe()'s CPU seconds on one core of the reference machine


@dataclass(frozen=True)
class Calibration:
    """The model on this machine now: encoding seconds per UD-EWT sentence (attention
    weights asked for apart, where the model has them) and the speed probe's factor."""

    seconds_per_sentence: float
    seconds_per_sentence_attention: float
    speed: float
    seconds: float  # what calibrating took

    def to_dict(self) -> dict[str, float]:
        return {k: round(v, 5) for k, v in asdict(self).items()}


@dataclass
class PlannedPart:
    """One part of the plan: ``size`` on its ladder (``None`` with ``skipped`` when the
    model cannot do it), its settings and its estimate in seconds."""

    name: str
    size: int | None = None
    full_size: int | None = None
    settings: dict[str, Any] = field(default_factory=dict)
    estimate_s: float = 0.0
    skipped: str = ""  # why the part is not run

    @property
    def shrunk(self) -> bool:
        return self.size is not None and self.full_size is not None and self.size < self.full_size

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["shrunk"] = self.shrunk
        d["estimate_s"] = round(self.estimate_s, 1)
        return d


@dataclass
class Plan:
    budget_s: float
    calibration: Calibration
    parts: list[PlannedPart]

    @property
    def runnable(self) -> list[PlannedPart]:
        return [p for p in self.parts if not p.skipped]

    @property
    def estimate_s(self) -> float:
        return (
            self.calibration.seconds + REPORT_OVERHEAD_S + sum(p.estimate_s for p in self.runnable)
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "budget_s": self.budget_s,
            "estimate_s": round(self.estimate_s, 1),
            "headroom": HEADROOM,
            "calibration": self.calibration.to_dict(),
            "parts": [p.to_dict() for p in self.parts],
        }


# -- the budget --------------------------------------------------------------------------

_UNITS = {"s": 1, "m": 60, "h": 3600}


def parse_budget(text: str) -> float:
    """Seconds of a budget such as ``90s``, ``10m``, ``1h``, ``1h30m`` or a bare number of
    seconds, within :data:`BUDGET_RANGE_S`.

    Raises:
        InvalidArgumentError: unreadable or out of range (the range named).
    """
    spec = str(text).strip().lower().replace(" ", "")
    lo, hi = BUDGET_RANGE_S
    if re.fullmatch(r"\d+(\.\d+)?", spec):
        seconds = float(spec)
    elif spec and re.fullmatch(r"(\d+(\.\d+)?[smh])+", spec):
        seconds = sum(float(n) * _UNITS[u] for n, u in re.findall(r"(\d+(?:\.\d+)?)([smh])", spec))
    else:
        raise InvalidArgumentError(
            f"--budget {text!r} is not a duration; write e.g. 90s, 10m, 1h or 1h30m "
            f"({format_seconds(lo)} to {format_seconds(hi)})."
        )
    if not lo <= seconds <= hi:
        raise InvalidArgumentError(
            f"--budget must be from {format_seconds(lo)} to {format_seconds(hi)}, not {text}."
        )
    return seconds


def format_seconds(seconds: float) -> str:
    """``45s``, ``2m30s``, ``1h5m``: how budgets are written back."""
    s = int(math.ceil(seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        m, r = divmod(s, 60)
        return f"{m}m{r}s" if r else f"{m}m"
    h, r = divmod(s, 3600)
    m = math.ceil(r / 60)
    return f"{h}h{m}m" if m else f"{h}h"


# -- calibration ---------------------------------------------------------------------------


def speed_probe(repeats: int = 5) -> float:
    """Wall seconds of a fixed NumPy workload (matrix products and solves on one BLAS
    thread), the median of ``repeats``: with :data:`SPEED_REFERENCE_S`, its CPU seconds on an
    idle core of the reference machine, how much slower computing runs for this process now
    (other processes, its niceness, a slower CPU). One thread: a multi-threaded BLAS under
    contention measured 3–6× on a machine where one thread ran at 0.9×."""
    import numpy as np
    from threadpoolctl import threadpool_limits

    rng = np.random.default_rng(0)
    a = rng.standard_normal((400, 400))
    walls = []
    with threadpool_limits(1):
        for _ in range(repeats):
            t = time.perf_counter()
            for _ in range(6):
                b = a @ a.T + np.eye(400)
                np.linalg.solve(b, a)
            walls.append(time.perf_counter() - t)
    return sorted(walls)[len(walls) // 2]


CALIBRATION_SENTENCES = 64  # fewer time padding, not encoding (module doc of calibrate)


def calibration_sentences(n: int = CALIBRATION_SENTENCES, among: int = 800) -> list[list[str]]:
    """``n`` UD-EWT dev sentences spread over its first ``among`` (read lazily: parsing a
    whole split costs seconds)."""
    from itertools import islice

    from probing.datasets import read_sentences

    sents = [s.words for s in islice(read_sentences("ud-ewt", "dev"), among) if s.words]
    step = max(1, len(sents) // n)
    return sents[::step][:n]


def calibrate(encoder: Encoder, n: int = CALIBRATION_SENTENCES) -> Calibration:
    """Time the model's encoding of ``n`` UD-EWT dev sentences (after a warm-up of two),
    with attention weights too (half as many) where the model has them, and the machine's
    slowdown.

    ``n`` is 64 because the parts encode thousands of sentences sorted by length, so that a
    batch pads little: 16 sentences of mixed lengths cost 0.018 CPU-s each on minilm-l6,
    64 cost 0.0077, a bulk 500 0.0075 (2026-12-05). A short timing can land in a quiet
    moment of a loaded machine: seconds per sentence are the larger of the wall time and
    the CPU time times the slowdown over torch's threads (CPU seconds of two threads are
    not two wall seconds)."""
    import torch

    t0 = time.perf_counter()
    speed = machine_speed()
    threads = max(1, torch.get_num_threads())
    sents = calibration_sentences(n)
    encoder.encode(sents[:2], windowed=True)

    def timed(batch: list[list[str]], attentions: bool) -> float:
        wall, cpu = time.perf_counter(), time.process_time()
        encoder.encode(batch, attentions=attentions, windowed=not attentions)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        return max(wall, cpu * speed / threads) / len(batch)

    per = timed(sents, False)
    per_att = timed(sents[: max(2, n // 2)], True) if encoder.info.has_attention else per
    return Calibration(per, per_att, speed, time.perf_counter() - t0)


def machine_speed() -> float:
    """How much slower than an idle reference core computing runs for this process now:
    :func:`speed_probe`'s ratio, at least 1/2 (a faster CPU is not trusted further). The
    probe sees the share of a core this process gets; the load average does not (it counts
    niced jobs that take little from this one, and lags a minute: estimates made with it
    were 5–20× the measured times once a load fell)."""
    return max(0.5, speed_probe() / SPEED_REFERENCE_S)


# -- sizes and estimates ------------------------------------------------------------------


def group_of(name: str) -> str:
    """Parts of one group share one size: the probes of one data set read and encode the
    same sentences once (the feature cache holds every word with every label)."""
    if name in PROBE_TASKS:
        from probing.probes.tasks import get_task

        return get_task(name).default_dataset
    return name


def probe_sizes(size: int) -> tuple[int, int, int]:
    """(train, dev, test) sentences of a probe of ladder ``size`` (a cap above a split's size
    means the whole split)."""
    return size, max(25, size // 2), size


def part_settings(name: str, size: int, model: str) -> dict[str, Any]:
    """The settings of part ``name`` at ``size`` (JSON-ready; the part's key on resume)."""
    if name in PROBE_TASKS:
        train, dev, test = probe_sizes(size)
        return {
            "model": model,
            "task": name,
            "max_train_sentences": train,
            "max_dev_sentences": dev,
            "max_test_sentences": test,
            # The scalar mixes train for thousands of steps whatever the sample (issue 46):
            # a report at reduced size leaves them out; the layer curve and its paired
            # comparisons do not use them.
            "scalar_mix": False,
            "cumulative_mix": False,
            "seed": 0,
            "seeds": 1,
            "n_boot": 1000,
        }
    if name == "cka":
        return {"n_words": size, "n_boot": 200, "split": "dev", "seed": 0}
    if name == "contextuality":
        return {"n_sentences": size, "split": "dev", "seed": 0}
    if name == "attention-stats":
        return {"n_sentences": size, "split": "dev"}
    if name == "cloze":
        return {"n_sentences": size, "split": "dev", "mask_rate": 0.15, "n_boot": 1000, "seed": 0}
    if name == "agreement":
        return {"n_cases": size, "split": "dev", "n_boot": 1000}
    if name == "tuned-lens":
        return {
            "n_train": size,
            "train_dataset": "brown",
            "train_split": "dev",
            "steps": LENS_STEPS[size],
            "n_eval": min(500, max(50, size // 2)),
            "eval_split": "dev",
            "n_boot": 1000,
            "seed": 0,
        }
    raise InvalidArgumentError(f"No report part {name!r}; parts: {', '.join(PARTS)}.")


def encoded_sentences(name: str, settings: dict[str, Any]) -> float:
    """Sentences part ``name`` encodes with ``settings``."""
    if name in PROBE_TASKS:
        return sum(settings[f"max_{s}_sentences"] for s in ("train", "dev", "test"))
    if name == "cka":
        return settings["n_words"] / WORDS_PER_SENTENCE
    if name == "tuned-lens":
        return float(settings["n_train"] + settings["n_eval"])
    if name == "agreement":
        return float(settings["n_cases"])
    return float(settings["n_sentences"])


def eval_sentences(name: str, settings: dict[str, Any]) -> float:
    """Sentences :data:`COMPUTE`'s ``per_eval`` multiplies (probes: dev and test; the tuned
    lens: its readout, two lenses through the head per layer)."""
    if name == "tuned-lens":
        return float(settings["n_eval"])
    return float(settings.get("max_dev_sentences", 0) + settings.get("max_test_sentences", 0))


def part_data(name: str, settings: dict[str, Any] | None = None) -> list[tuple[str, str]]:
    """The (data set, split) pairs part ``name`` reads."""
    if name in PROBE_TASKS:
        return [(group_of(name), s) for s in ("train", "dev", "test")]
    settings = settings or {}
    if name == "tuned-lens":
        return [
            (settings.get("train_dataset", "brown"), settings.get("train_split", "dev")),
            ("ud-ewt", settings.get("eval_split", "dev")),
        ]
    if name == "agreement":  # the verb forms come from the training split
        return [("ud-ewt", "train"), ("ud-ewt", settings.get("split", "dev"))]
    return [("ud-ewt", settings.get("split", "dev"))]


def compute_units(name: str, settings: dict[str, Any]) -> float:
    """The size :data:`COMPUTE`'s ``per_unit`` multiplies: probes, training sentences; CKA,
    (words / 100)² (its Gram matrices); the others, sentences."""
    if name in PROBE_TASKS:
        return float(settings["max_train_sentences"])
    if name == "cka":
        return (settings["n_words"] / 100) ** 2
    if name == "tuned-lens":
        return float(settings["steps"])
    if name == "agreement":
        return float(settings["n_cases"])
    return float(settings["n_sentences"])


def split_megabytes(dataset: str, splits: tuple[str, ...] = ("train", "dev", "test")) -> float:
    """Size of the files a read of ``splits`` parses, in MB."""
    from probing.features import dataset_files

    return sum(p.stat().st_size for s in splits for p in dataset_files(dataset, s)) / 1e6


def sizes_known(dataset: str) -> bool:
    """Whether the feature cache already knows the split sizes of ``dataset``."""
    import json

    from probing.features import features_dir

    try:
        known = json.loads((features_dir() / "split_sizes.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return sum(1 for k in known if k.startswith(f"{dataset}/")) >= 3


def estimate(
    name: str,
    settings: dict[str, Any],
    cal: Calibration,
    layers: int,
    dim: int,
    *,
    reads: bool = True,
) -> float:
    """Predicted seconds of part ``name`` (module doc); ``reads`` False: a probe whose
    features an earlier part of its group extracted (computing only)."""
    c = COMPUTE[name]
    scale = max(0.05, (layers / REFERENCE_LAYERS) * (dim / REFERENCE_DIM))
    if name == "cka":
        scale = max(0.05, (layers / REFERENCE_LAYERS) ** 2)  # every pair of layers
    evals = eval_sentences(name, settings)
    compute = c.fixed + (c.per_unit * compute_units(name, settings) + c.per_eval * evals) * scale
    seconds = compute * cal.speed
    if name in PROBE_TASKS and not reads:
        return seconds
    per_sentence = (
        cal.seconds_per_sentence_attention
        if name == "attention-stats"
        else cal.seconds_per_sentence
    )
    seconds += per_sentence * encoded_sentences(name, settings)
    if name in PROBE_TASKS:
        dataset = group_of(name)
        passes = 1 if sizes_known(dataset) else 2
        seconds += passes * READ_S_PER_MB * split_megabytes(dataset) * cal.speed
    else:
        megabytes = sum(split_megabytes(d, (s,)) for d, s in part_data(name, settings))
        seconds += READ_S_PER_MB * megabytes * cal.speed
    return seconds


def lacks_lm_head(name: str, encoder: Encoder) -> str:
    """Why ``encoder`` cannot give LM part ``name`` (no masked-LM head, or one whose layers
    cannot be read apart; agreement: no LM head at all); empty when it can."""
    from probing.encoders.base import LensableMLM, MaskedLM

    info = encoder.info
    if name == "agreement":
        if info.lm_kind == "masked" or info.lm_directions:
            return ""
        return (
            f"agreement needs a language-model head (a masked one, or ELMo's next-word LMs); "
            f"{info.name} has none in its checkpoint"
        )
    if info.lm_kind != "masked" or not isinstance(encoder, MaskedLM):
        what = {
            "bidirectional-lm": "a bidirectional next-word LM (ELMo), not a masked one",
            "": "no language-model head in its checkpoint",
        }.get(info.lm_kind, f"a {info.lm_kind} head")
        return MASKED_LM_REASON.format(part=name, name=info.name, what=what)
    if name == "tuned-lens" and not isinstance(encoder, LensableMLM):
        return f"tuned-lens needs a masked-LM head whose layers can be read apart; {info.name} has none"
    return ""


def cannot_run(name: str, encoder: Encoder) -> str:
    """Why the model (or the data folder) cannot give part ``name``; empty when it can."""
    if name in ANALYSIS_PARTS:
        from probing.analyses.registry import get

        reason = get(name).is_compatible(encoder.info)
        if reason:
            return reason
    if name in LM_PARTS:
        reason = lacks_lm_head(name, encoder)
        if reason:
            return reason
    from probing.errors import ContextLensError
    from probing.features import dataset_files

    needed = part_data(name)
    if name == "wsd":  # the back-off to a lemma's only sense reads WordNet
        from probing.datasets.registry import dataset_path

        try:
            folder = dataset_path("wordnet")
            if not (folder / "index.sense").is_file():
                return f"it needs WordNet 3.0 (index.sense) in {folder}"
        except (ContextLensError, OSError, KeyError) as exc:
            return f"it needs WordNet 3.0, which cannot be read: {exc}"
    for dataset, split in needed:
        try:
            missing = [p for p in dataset_files(dataset, split) if not p.is_file()]
            if missing:
                return f"its data set {dataset} is missing {missing[0]}"
        except (ContextLensError, OSError, KeyError) as exc:
            return f"its data set {dataset} cannot be read: {exc}"
    return ""


def make_plan(
    encoder: Encoder,
    budget_s: float,
    parts: tuple[str, ...] = PARTS,
    calibration: Calibration | None = None,
) -> Plan:
    """The parts ``encoder`` can do, each at the largest size that keeps the whole within
    :data:`HEADROOM` of ``budget_s`` (module doc).

    Raises:
        ReportBudgetError: even the smallest size of every part does not fit (names the
            smallest budget that does), or the model can do none of the parts.
    """
    cal = calibration or calibrate(encoder)
    info = encoder.info
    layers, dim = int(info.n_contextual_layers) + 1, int(info.dim)
    planned = [
        PlannedPart(name, full_size=LADDERS[name][-1], skipped=cannot_run(name, encoder))
        for name in parts
    ]
    runnable = [p for p in planned if not p.skipped]
    if not runnable:
        raise ReportBudgetError(
            "The model can do none of the parts asked for: "
            + "; ".join(f"{p.name}: {p.skipped}" for p in planned)
        )
    groups = list(dict.fromkeys(group_of(p.name) for p in runnable))
    ladder = {g: LADDERS[next(p.name for p in runnable if group_of(p.name) == g)] for g in groups}

    def sized(rungs: dict[str, int]) -> list[tuple[PlannedPart, dict[str, Any], float]]:
        out, seen = [], set()
        for p in runnable:
            g = group_of(p.name)
            settings = part_settings(p.name, ladder[g][rungs[g]], info.name)
            out.append(
                (p, settings, estimate(p.name, settings, cal, layers, dim, reads=g not in seen))
            )
            seen.add(g)
        return out

    def total(rungs: dict[str, int]) -> float:
        return cal.seconds + REPORT_OVERHEAD_S + sum(e for _, _, e in sized(rungs))

    rungs = dict.fromkeys(groups, 0)
    smallest = total(rungs)
    if smallest > budget_s * HEADROOM:
        need = smallest / HEADROOM
        raise ReportBudgetError(
            f"A budget of {format_seconds(budget_s)} is too small for the smallest report of "
            f"{info.name} (estimated {smallest:.0f} s for "
            f"{', '.join(p.name for p in runnable)} at their smallest sizes, planned at "
            f"{HEADROOM:.0%} of the budget); the smallest budget that works is --budget "
            f"{format_seconds(need)}."
        )
    while True:  # raise the group furthest down its ladder, while the whole fits
        order = sorted(
            (g for g in groups if rungs[g] + 1 < len(ladder[g])),
            key=lambda g: rungs[g] / (len(ladder[g]) - 1),
        )
        for g in order:
            trial = {**rungs, g: rungs[g] + 1}
            if total(trial) <= budget_s * HEADROOM:
                rungs = trial
                break
        else:
            break
    for p, settings, seconds in sized(rungs):
        p.settings, p.estimate_s = settings, seconds
        p.size = ladder[group_of(p.name)][rungs[group_of(p.name)]]
    return Plan(budget_s, cal, planned)
