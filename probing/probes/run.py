"""``probe_layers``: every probe of a task on every layer of a model, in one call.

For a tagging task (``pos``, ``xpos``, ``ptb-pos``, ``supersense``):

1. features of the train (capped by ``max_train_sentences``), dev and test splits;
2. per layer, a :class:`LinearProbe` (C chosen on dev) scored on **test** by accuracy and
   macro-F1 with bootstrap intervals (test sentences resampled), and the same probe (same C) trained on the
   :class:`ControlTask` labels, giving control accuracy and selectivity on the same test
   words;
3. baselines: majority label, most frequent label per word type, a linear probe on the
   context-free ``static`` vectors;
4. the :class:`ScalarMixProbe` over all probed layers (weights, γ, test accuracy);
5. the centre of gravity of the per-layer accuracies and the expected layer of the mix.

For ``wsd``: per layer, 1-NN to SemCor training sense centroids with WordNet first-sense
backoff, scored by F1 on the test split (with precision, recall, and accuracy on lemmas
seen in training); baselines WordNet first sense, SemCor most frequent sense and 1-NN on
the static vectors. Only the first word of a multi-word expression is an instance (the
others share its sense and would count it several times).

All training uses the same (seeded) training words, so baselines and probes are comparable.
:func:`probe_features` runs the same probes on features already extracted (an upload).
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from probing.encoders.base import Encoder
from probing.encoding import Pooling
from probing.errors import InvalidArgumentError
from probing.features import Features, extract_features
from probing.probes.control import TypeKeys, model_type_keys
from probing.probes.defaults import DEFAULT_MAX_TRAIN_SENTENCES, DEFAULT_MAX_TRAIN_WORDS
from probing.probes.meta import RunMeta
from probing.probes.metrics import centre_of_gravity
from probing.probes.runners import (
    PER_LAYER_PROBES,
    PROBE_CS,
    TaggingRun,
    WsdRun,
)
from probing.probes.tasks import get_task

# (stage, done, total): stages "extract train", "extract dev", "extract test", "fit".
ProbeProgress = Callable[[str, int, int], None]

COLUMNS = [
    "model", "task", "dataset", "split", "probe", "layer", "metric",
    "value", "ci_low", "ci_high", "control", "selectivity", "n",
    "control_ci_low", "control_ci_high", "selectivity_ci_low", "selectivity_ci_high",
    "seeds", "selected_on", "sd", "control_sd", "selectivity_sd",
]  # fmt: skip
_FLOAT_COLUMNS = ("value", "ci_low", "ci_high", "control", "selectivity", "control_ci_low",
                  "control_ci_high", "selectivity_ci_low", "selectivity_ci_high", "sd",
                  "control_sd", "selectivity_sd")  # fmt: skip


@dataclass
class ProbeResults:
    """Everything one :func:`probe_layers` run measured.

    Attributes:
        table: tidy DataFrame, one row per (probe, layer, metric) with columns
            :data:`COLUMNS`. ``probe`` is ``linear`` / ``1nn`` (per layer), ``scalar_mix``,
            or a baseline (``majority``, ``word_type``, ``static``, ``first_sense``,
            ``semcor_mfs``, ``static_1nn``) with ``layer`` missing. ``control`` and
            ``selectivity`` are set on the linear probe's accuracy rows.
        scalar_mix: ``{"layers", "weights", "gamma", "expected_layer", "accuracy", …}`` or None.
        centre_of_gravity: Tenney et al.'s expected layer over the headline metric's
            differential scores (see :func:`probing.probes.metrics.centre_of_gravity`).
        meta: sizes, chosen C per layer, timings, settings (:class:`RunMeta`).
    """

    model: str
    task: str
    dataset: str
    table: pd.DataFrame
    scalar_mix: dict | None = None
    centre_of_gravity: float = float("nan")
    meta: RunMeta = field(default_factory=RunMeta)
    # Adjacent-layer and best-vs-each differences (probing.probes.compare.table_dict), and
    # task-vs-control per layer where there is a control task.
    comparisons: dict | None = None
    # Per-sentence counts of those scores (probing.probes.compare.SentenceCounts by cell
    # name), written beside the results by ``probe --save-probes``; not in the JSON.
    sentence_counts: dict = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        if isinstance(self.meta, dict):  # the plain-dict form stored files (and older code) use
            self.meta = RunMeta.from_dict(self.meta)

    @property
    def metric(self) -> str:
        """The headline metric (``accuracy`` or ``f1``)."""
        return get_task(self.task).metric

    def layer_scores(self, metric: str | None = None) -> pd.DataFrame:
        """Per-layer rows of the per-layer probe for ``metric`` (default: headline), by layer."""
        metric = metric or self.metric
        t = self.table
        rows = t[t["layer"].notna() & (t["metric"] == metric) & t["probe"].isin(PER_LAYER_PROBES)]
        return rows.sort_values("layer").reset_index(drop=True)

    def baselines(self, metric: str | None = None) -> pd.DataFrame:
        """Baseline rows (no layer) for ``metric``, scalar mix excluded."""
        metric = metric or self.metric
        t = self.table
        return t[t["layer"].isna() & (t["metric"] == metric) & (t["probe"] != "scalar_mix")
                 & ~t["probe"].isin(("cog_running_best", "cog_cumulative_mix"))]  # fmt: skip

    def best_layer(self, metric: str | None = None) -> int:
        """The layer chosen on dev (``meta["best_layer"]``); results without a dev choice
        (older files, uploads without dev) fall back to the best test score."""
        chosen = self.meta.best_layer or {}
        if metric in (None, self.metric) and chosen.get("layer") is not None:
            return int(chosen["layer"])
        scores = self.layer_scores(metric)
        return int(scores.loc[scores["value"].idxmax(), "layer"])

    def summaries(self) -> pd.DataFrame:
        """Rows of the layer summaries: centres of gravity (``cog_running_best``,
        ``cog_cumulative_mix``) and the dev-chosen ``best_layer`` on test."""
        t = self.table
        return t[t["probe"].isin(("cog_running_best", "cog_cumulative_mix", "best_layer"))]

    def to_dict(self) -> dict:
        """JSON-ready: meta, centre of gravity, scalar mix, records (NaN -> None)."""
        records = [
            {k: _json_value(v) for k, v in row.items()} for row in self.table.to_dict("records")
        ]
        return {
            "model": self.model,
            "task": self.task,
            "dataset": self.dataset,
            "metric": self.metric,
            "centre_of_gravity": _json_value(self.centre_of_gravity),
            "scalar_mix": _jsonable(self.scalar_mix),
            "meta": _jsonable(RunMeta.from_dict(dict(self.meta)).to_dict()),
            **({"comparisons": _jsonable(self.comparisons)} if self.comparisons else {}),
            "results": records,
        }

    def to_json(self, path: str | Path) -> Path:
        path = Path(path)
        path.write_text(json.dumps(self.to_dict(), indent=1) + "\n", encoding="utf-8")
        return path

    @classmethod
    def from_json(cls, path: str | Path) -> ProbeResults:
        """Read back what :meth:`to_json` wrote (e.g. the committed ``results/`` files)."""
        d = json.loads(Path(path).read_text(encoding="utf-8"))
        table = typed_table(d["results"])
        cog = d.get("centre_of_gravity")
        return cls(
            model=d["model"], task=d["task"], dataset=d["dataset"], table=table,
            scalar_mix=d.get("scalar_mix"), centre_of_gravity=float("nan") if cog is None else cog,
            meta=RunMeta.from_dict(d.get("meta")), comparisons=d.get("comparisons"),
        )  # fmt: skip


def probe_layers(
    encoder_or_name: Encoder | str,
    task: str,
    dataset: str | None = None,
    layers: Sequence[int] | None = None,
    progress: ProbeProgress | None = None,
    max_train_sentences: int | None = DEFAULT_MAX_TRAIN_SENTENCES,
    seed: int = 0,
    *,
    pooling: Pooling = "first",
    max_train_words: int | None = DEFAULT_MAX_TRAIN_WORDS,
    max_dev_sentences: int | None = None,
    max_test_sentences: int | None = None,
    Cs: Sequence[float] = PROBE_CS,
    n_boot: int = 1000,
    scalar_mix: bool = True,
    control: bool = True,
    seeds: int = 1,
    per_layer_c: bool = False,
    mdl: bool = False,
    cumulative_mix: bool = True,
    mdl_seeds: int = 1,
    keep_probes: dict | None = None,
) -> ProbeResults:
    """Probe every layer of a model for one task; see the module doc for what runs.

    Args:
        encoder_or_name: an Encoder, or a name/path for :func:`probing.load_encoder`.
        task: ``pos``, ``xpos``, ``ptb-pos``, ``supersense`` or ``wsd``.
        dataset: data set (default: the task's own).
        layers: layers to probe (default: all, 0 = input layer).
        progress: ``(stage, done, total)`` callback.
        max_train_sentences: seeded sample of training sentences to encode (None: all).
        seed: seed of word subsampling, control labels, probes and the bootstrap.
        pooling: subword pooling (``first``, ``mean``, ``last``).
        max_train_words: cap on training words per probe fit (tagging tasks).
        max_dev_sentences, max_test_sentences: caps on dev/test sentences (None: all).
        Cs: grid for the linear probes' C.
        n_boot: bootstrap replicates for the intervals.
        scalar_mix: also train the scalar-mix probe (tagging tasks).
        control: also run control tasks (tagging tasks), word types keyed as the model
            sees them (:func:`probing.probes.control.model_type_keys`).
        seeds: runs with seeds ``seed … seed + seeds - 1``; each draws its own control
            labels, training sample and MDL order; scores are means over seeds with sd.
        per_layer_c: choose C per layer on dev (default: one C for all layers, the one
            with the best mean dev accuracy, so that layers are probed at equal capacity).
        mdl: also measure the online codelength (Voita & Titov 2020) of task and control
            labels per layer (tagging tasks).
        mdl_seeds: how many of the seeds also get an MDL measurement (each a new data
            order and control labelling; default the first only: MDL costs about ten fits).
        cumulative_mix: also train the cumulative scalar mixes over layers 0..l for Tenney
            et al.'s centre of gravity (tagging tasks with ``scalar_mix``).
        keep_probes: if given, filled with the fitted per-layer probes of the first seed
            (``{layer or "static": probe}``; tagging, edge and structural tasks).
    """
    from probing.models.registry import load_encoder

    check_run_arguments(n_boot, Cs, max_train_sentences, max_dev_sentences, max_test_sentences)
    encoder = load_encoder(encoder_or_name) if isinstance(encoder_or_name, str) else encoder_or_name
    spec = get_task(task)
    if spec.kind == "sentence":  # pooled sentence vectors, not word features
        raise ValueError(
            f"{task!r} is a sentence task: use probing.probes.sentence.probe_sentences"
        )
    dataset = dataset or spec.default_dataset
    label = spec.field_for(dataset)
    report = progress or (lambda stage, done, total: None)

    def stage(name: str) -> Callable[[int, int], None]:
        return lambda done, total: report(name, done, total)

    t0 = time.perf_counter()
    splits = ("train", "dev", "test")
    caps = {"train": max_train_sentences, "dev": max_dev_sentences, "test": max_test_sentences}
    feats: dict[str, Features] = {}
    for split in splits:
        feats[split] = extract_features(
            encoder, dataset, split, label, layers=layers, pooling=pooling,
            progress=stage(f"extract {split}"), max_sentences=caps[split],
        )  # fmt: skip
    t_extract = time.perf_counter() - t0
    results = probe_features(
        feats, spec.name, model=encoder.info.name, dataset=dataset, progress=progress,
        seed=seed, max_train_words=max_train_words, Cs=Cs, n_boot=n_boot,
        scalar_mix=scalar_mix, control=control, seeds=seeds, per_layer_c=per_layer_c,
        mdl=mdl, cumulative_mix=cumulative_mix, type_keys=model_type_keys(encoder),
        mdl_seeds=mdl_seeds, keep_probes=keep_probes,
    )  # fmt: skip
    meta = results.meta
    meta.encoder = encoder.info.name
    meta.layer_names = list(encoder.info.layer_names)
    meta.label_field = label
    meta.pooling = pooling
    meta.max_train_sentences = max_train_sentences
    meta.n_words_encoded = int(sum(f.n_words_total for f in feats.values()))
    meta.timing_s["extract"] = round(t_extract, 2)
    return results


def probe_features(
    feats: dict[str, Features],
    task: str,
    *,
    model: str,
    dataset: str,
    progress: ProbeProgress | None = None,
    seed: int = 0,
    max_train_words: int | None = DEFAULT_MAX_TRAIN_WORDS,
    Cs: Sequence[float] = PROBE_CS,
    n_boot: int = 1000,
    scalar_mix: bool = True,
    control: bool = True,
    seeds: int = 1,
    per_layer_c: bool = False,
    mdl: bool = False,
    cumulative_mix: bool = True,
    type_keys: TypeKeys | None = None,
    mdl_seeds: int = 1,
    keep_probes: dict | None = None,
) -> ProbeResults:
    """The probes of :func:`probe_layers` on features already extracted.

    Args:
        feats: ``train`` and ``test`` :class:`Features` (labels selected), and ``dev`` for
            a tagging task if there is one; without it each linear probe chooses C on 10 %
            of its training words and the scalar mix trains for its full epochs.
        task: a task name (see :mod:`probing.probes.tasks`).
        model, dataset: names recorded in the results.
        type_keys: word -> control-task type key (default: the word itself).
        Other arguments as in :func:`probe_layers`.
    """
    spec = get_task(task)
    check_run_arguments(n_boot, Cs)
    if spec.kind == "structural":
        from probing.probes.structural_run import structural_features

        return structural_features(
            feats, spec.name, model=model, dataset=dataset, progress=progress, seed=seed,
            n_boot=n_boot, keep_probes=keep_probes, seeds=seeds,
        )  # fmt: skip
    if spec.kind == "edge":  # one row per gold arc: [head vector; dependent vector]
        from probing.probes.edge import arc_features

        product = spec.name == "deprel-hd"  # Liu et al. 2019's [h; d; h ∘ d]
        feats = {split: arc_features(f, product) for split, f in feats.items()}
    report = progress or (lambda stage, done, total: None)
    fit_progress: Callable[[int, int], None] = lambda done, total: report("fit", done, total)  # noqa: E731
    run = WsdRun if spec.kind == "wsd" else TaggingRun
    if int(seeds) < 1:
        raise InvalidArgumentError(f"seeds must be at least 1, not {seeds}.")
    feats = _first_word_of_mwes(feats) if spec.name in ("supersense", "wsd") else feats
    runner = run(spec, dataset, model, feats, seed, n_boot, fit_progress)
    runner.keep_probes = keep_probes
    t1 = time.perf_counter()
    if spec.kind == "wsd":
        runner.run()
    else:
        runner.run(
            max_train_words, tuple(Cs), scalar_mix=scalar_mix, control=control, seeds=seeds,
            per_layer_c=per_layer_c, mdl=mdl, cumulative_mix=cumulative_mix, type_keys=type_keys,
            mdl_seeds=mdl_seeds,
        )  # fmt: skip
    t_fit = time.perf_counter() - t1

    table = typed_table(runner.rows)
    per_layer = table[
        table["probe"].isin(PER_LAYER_PROBES) & (table["metric"] == spec.metric)
    ].sort_values("layer")
    cog = centre_of_gravity(per_layer["value"].to_numpy(), per_layer["layer"].to_numpy(dtype=float))
    test, train = feats["test"], feats["train"]
    meta = {
        "layers": list(test.layer_ids),
        "seed": seed,
        "seeds": [seed + i for i in range(seeds)] if spec.kind != "wsd" else [seed],
        "n_boot": n_boot,
        "bootstrap_unit": "sentence",
        "max_train_words": max_train_words if spec.kind != "wsd" else None,
        "n_train_sentences": len(train.sent_ids),
        "n_test_sentences": len(test.sent_ids),
        "n_dev_sentences": len(feats["dev"].sent_ids) if "dev" in feats else 0,
        "eval_split": "test",
        "timing_s": {"fit": round(t_fit, 2)},
        **runner.meta,
    }
    return ProbeResults(
        model=model, task=spec.name, dataset=dataset, table=table,
        scalar_mix=runner.mix, centre_of_gravity=cog, meta=meta,
        comparisons=runner.comparisons(), sentence_counts=runner.counts,
    )  # fmt: skip


# -- helpers ------------------------------------------------------------------------------


def check_run_arguments(n_boot: int, Cs: Sequence[float], *sizes: int | None) -> None:
    """Raise before any work when an argument is out of range.

    Raises:
        InvalidArgumentError: ``n_boot`` < 1, a C that is not a positive number, no Cs,
            or a sentence cap below 1.
    """
    if int(n_boot) < 1:
        raise InvalidArgumentError(
            f"n_boot (bootstrap replicates) must be at least 1, not {n_boot}."
        )
    if not len(Cs) or not all(math.isfinite(c) and c > 0 for c in map(float, Cs)):
        raise InvalidArgumentError(
            f"Cs (inverse regularisation strengths) must be positive numbers, not {list(Cs)}."
        )
    for size in sizes:
        if size is not None and int(size) < 1:
            raise InvalidArgumentError(f"sentence caps must be at least 1 (or none), not {size}.")


def typed_table(rows: list[dict]) -> pd.DataFrame:
    """The tidy table with its dtypes: nullable int layers, float scores (NaN = none).
    Rows written before a column existed (older results) get NaN / 1 seed / "" there."""
    table = pd.DataFrame(rows, columns=COLUMNS)
    table["layer"] = table["layer"].astype("Int64")
    for col in _FLOAT_COLUMNS:
        table[col] = table[col].astype(float)
    table["seeds"] = table["seeds"].fillna(1).astype(int)
    table["selected_on"] = table["selected_on"].astype(object).fillna("").astype(str)
    return table


def _first_word_of_mwes(feats: dict[str, Features]) -> dict[str, Features]:
    """One instance per multi-word expression, its first word: the other words share its
    label and would count it several times (WSD and supersense alike)."""
    return {k: f.select(f.fields["mwe"] != "I") if "mwe" in f.fields else f
            for k, f in feats.items()}  # fmt: skip


def _json_value(v):  # noqa: ANN001, ANN202
    if v is None or v is pd.NA:
        return None
    if isinstance(v, (np.integer,)):
        return int(v)
    if isinstance(v, (float, np.floating)):
        return None if math.isnan(float(v)) else float(v)
    return v


def _jsonable(obj):  # noqa: ANN001, ANN202
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    return _json_value(obj)
