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
from probing.probes.baselines import MajorityBaseline, WordTypeBaseline
from probing.probes.control import ControlTask
from probing.probes.guards import check_probe_size
from probing.probes.linear import DEFAULT_CS, LinearProbe
from probing.probes.meta import RunMeta
from probing.probes.metrics import (
    ABSTAIN,
    Estimate,
    bootstrap_ci,
    centre_of_gravity,
    expected_layer,
)
from probing.probes.mix import ScalarMixProbe
from probing.probes.tasks import Task, get_task
from probing.probes.wsd import (
    MostFrequentSense,
    NearestSenseClassifier,
    first_sense_backoff,
    lemma_key,
)

# (stage, done, total): stages "extract train", "extract dev", "extract test", "fit".
ProbeProgress = Callable[[str, int, int], None]

COLUMNS = [
    "model", "task", "dataset", "split", "probe", "layer", "metric",
    "value", "ci_low", "ci_high", "control", "selectivity", "n",
]  # fmt: skip

DEFAULT_MAX_TRAIN_SENTENCES = 2000
DEFAULT_MAX_TRAIN_WORDS = 20_000


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
        rows = t[t["layer"].notna() & (t["metric"] == metric)]
        return rows.sort_values("layer").reset_index(drop=True)

    def baselines(self, metric: str | None = None) -> pd.DataFrame:
        """Baseline rows (no layer) for ``metric``, scalar mix excluded."""
        metric = metric or self.metric
        t = self.table
        return t[t["layer"].isna() & (t["metric"] == metric) & (t["probe"] != "scalar_mix")]

    def best_layer(self, metric: str | None = None) -> int:
        scores = self.layer_scores(metric)
        return int(scores.loc[scores["value"].idxmax(), "layer"])

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
        table = _typed_table(d["results"])
        cog = d.get("centre_of_gravity")
        return cls(
            model=d["model"], task=d["task"], dataset=d["dataset"], table=table,
            scalar_mix=d.get("scalar_mix"), centre_of_gravity=float("nan") if cog is None else cog,
            meta=RunMeta.from_dict(d.get("meta")),
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
    Cs: Sequence[float] = DEFAULT_CS,
    n_boot: int = 1000,
    scalar_mix: bool = True,
    control: bool = True,
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
        control: also run control tasks (tagging tasks).
        keep_probes: if given, filled with the fitted per-layer probes
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
    splits = ("train", "test") if spec.kind == "wsd" else ("train", "dev", "test")
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
        scalar_mix=scalar_mix, control=control, keep_probes=keep_probes,
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
    Cs: Sequence[float] = DEFAULT_CS,
    n_boot: int = 1000,
    scalar_mix: bool = True,
    control: bool = True,
    keep_probes: dict | None = None,
) -> ProbeResults:
    """The probes of :func:`probe_layers` on features already extracted.

    Args:
        feats: ``train`` and ``test`` :class:`Features` (labels selected), and ``dev`` for
            a tagging task if there is one; without it each linear probe chooses C on 10 %
            of its training words and the scalar mix trains for its full epochs.
        task: a task name (see :mod:`probing.probes.tasks`).
        model, dataset: names recorded in the results.
        Other arguments as in :func:`probe_layers`.
    """
    check_run_arguments(n_boot, Cs)
    spec = get_task(task)
    if spec.kind == "structural":
        from probing.probes.structural_run import structural_features

        return structural_features(
            feats, spec.name, model=model, dataset=dataset, progress=progress, seed=seed,
            n_boot=n_boot, keep_probes=keep_probes,
        )  # fmt: skip
    if spec.kind == "edge":  # one row per gold arc: [head vector; dependent vector]
        from probing.probes.edge import arc_features

        feats = {split: arc_features(f) for split, f in feats.items()}
    report = progress or (lambda stage, done, total: None)
    fit_progress: Callable[[int, int], None] = lambda done, total: report("fit", done, total)  # noqa: E731
    run = _WsdRun if spec.kind == "wsd" else _TaggingRun
    runner = run(spec, dataset, model, feats, seed, n_boot, fit_progress)
    runner.keep_probes = keep_probes
    t1 = time.perf_counter()
    if spec.kind == "wsd":
        runner.run()
    else:
        runner.run(max_train_words, tuple(Cs), scalar_mix, control)
    t_fit = time.perf_counter() - t1

    table = _typed_table(runner.rows)
    per_layer = table[table["layer"].notna() & (table["metric"] == spec.metric)].sort_values(
        "layer"
    )
    cog = centre_of_gravity(per_layer["value"].to_numpy(), per_layer["layer"].to_numpy(dtype=float))
    test, train = feats["test"], feats["train"]
    meta = runner.meta
    meta.layers = list(test.layer_ids)
    meta.seed = seed
    meta.n_boot = n_boot
    meta.bootstrap_unit = "sentence"
    meta.max_train_words = max_train_words if spec.kind != "wsd" else None
    meta.n_train_sentences = len(train.sent_ids)
    meta.n_test_sentences = len(test.sent_ids)
    meta.n_dev_sentences = len(feats["dev"].sent_ids) if "dev" in feats else 0
    meta.eval_split = "test"
    meta.timing_s = {"fit": round(t_fit, 2)}
    return ProbeResults(
        model=model, task=spec.name, dataset=dataset, table=table,
        scalar_mix=runner.mix, centre_of_gravity=cog, meta=meta,
    )  # fmt: skip


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


# -- the two kinds of run -----------------------------------------------------------------


class _Run:
    def __init__(
        self,
        spec: Task,
        dataset: str,
        model: str,
        feats: dict[str, Features],
        seed: int,
        n_boot: int,
        progress: Callable[[int, int], None],
    ) -> None:
        self.spec, self.dataset, self.model, self.feats = spec, dataset, model, feats
        self.seed, self.n_boot, self.progress = seed, n_boot, progress
        self.rows: list[dict] = []
        self.mix: dict | None = None
        self.meta = RunMeta()
        self.keep_probes: dict | None = None

    def add(
        self,
        probe: str,
        layer: int | None,
        metric: str,
        est: Estimate,
        control: float = math.nan,
        selectivity: float = math.nan,
    ) -> None:
        self.rows.append(
            {
                "model": self.model, "task": self.spec.name, "dataset": self.dataset,
                "split": "test", "probe": probe, "layer": layer, "metric": metric,
                "value": est.value, "ci_low": est.ci_low, "ci_high": est.ci_high,
                "control": control, "selectivity": selectivity, "n": est.n,
            }
        )  # fmt: skip

    def ci(self, y_true, y_pred, metric: str, groups: np.ndarray) -> Estimate:  # noqa: ANN001
        # Test words resampled by sentence: words of one sentence are not independent.
        return bootstrap_ci(
            y_true, y_pred, metric, n_boot=self.n_boot, seed=self.seed, groups=groups
        )


class _TaggingRun(_Run):
    def _control_accuracy(self, C: float, X_tr, c_tr, X_te, c_te) -> float:  # noqa: ANN001
        if len(np.unique(c_tr)) < 2:
            # One word type (or all types drew the same label): the control probe can only
            # predict that label, which is what a classifier of one class does.
            return float(np.mean(c_te == c_tr[0]))
        c_probe = LinearProbe(C=C, max_train_words=None, random_state=self.seed)
        return float(np.mean(c_probe.fit(X_tr, c_tr).predict(X_te) == c_te))

    def run(
        self, max_train_words: int | None, Cs: tuple[float, ...], scalar_mix: bool, control: bool
    ) -> None:
        # Every fit uses the same training words: subsample once here.
        train = self.feats["train"].subsample(max_train_words, seed=self.seed)
        check_probe_size(train.labels, train.dim, f"A {self.spec.name} probe")
        dev, test = self.feats.get("dev"), self.feats["test"]
        layer_ids = test.layer_ids
        y_tr, y_te, g_te = train.labels, test.labels, test.sentence_index
        y_dev = None if dev is None else dev.labels

        def on_dev(layer: int | None) -> np.ndarray | None:
            if dev is None:
                return None
            return dev.static if layer is None else dev.layer(layer)

        steps = len(layer_ids) * (2 if control else 1) + 1 + int(scalar_mix)
        done = 0
        self.progress(done, steps)

        for name, base in (("majority", MajorityBaseline()), ("word_type", WordTypeBaseline())):
            pred = base.fit(train.words, y_tr).predict(test.words)
            self.add(name, None, "accuracy", self.ci(y_te, pred, "accuracy", g_te))
            self.add(name, None, "macro_f1", self.ci(y_te, pred, "macro_f1", g_te))
        seen = WordTypeBaseline().fit(train.words, y_tr).seen(test.words)

        probe_kw = {"Cs": Cs, "max_train_words": None, "random_state": self.seed}
        static = LinearProbe(**probe_kw).fit(train.static, y_tr, on_dev(None), y_dev)
        pred = static.predict(test.static)
        if self.keep_probes is not None:
            self.keep_probes["static"] = static
        self.add("static", None, "accuracy", self.ci(y_te, pred, "accuracy", g_te))
        self.add("static", None, "macro_f1", self.ci(y_te, pred, "macro_f1", g_te))
        done += 1
        self.progress(done, steps)

        if control:
            ctl = ControlTask(seed=self.seed).fit(train.words, y_tr)
            c_tr, c_te = ctl.transform(train.words), ctl.transform(test.words)
        chosen, dev_scores, oov_acc = {}, {}, {}
        for layer in layer_ids:
            X_tr, X_te = train.layer(layer), test.layer(layer)
            probe = LinearProbe(**probe_kw).fit(X_tr, y_tr, on_dev(layer), y_dev)
            pred = probe.predict(X_te)
            chosen[layer], dev_scores[layer] = probe.C_, probe.dev_scores_
            if self.keep_probes is not None:
                self.keep_probes[layer] = probe
            oov_acc[layer] = float(np.mean(pred[~seen] == y_te[~seen])) if (~seen).any() else None
            done += 1
            self.progress(done, steps)
            acc = self.ci(y_te, pred, "accuracy", g_te)
            c_acc = sel = math.nan
            if control:
                # Same probe family, same C, same words: only the labels differ.
                c_acc = self._control_accuracy(probe.C_, X_tr, c_tr, X_te, c_te)
                sel = acc.value - c_acc
                done += 1
                self.progress(done, steps)
            self.add("linear", layer, "accuracy", acc, c_acc, sel)
            self.add("linear", layer, "macro_f1", self.ci(y_te, pred, "macro_f1", g_te))

        if scalar_mix:
            probe = ScalarMixProbe(max_train_words=None, random_state=self.seed)
            probe.fit(train.layers, y_tr, None if dev is None else dev.layers, y_dev,
                      layers=layer_ids)  # fmt: skip
            pred = probe.predict(test.layers)
            acc = self.ci(y_te, pred, "accuracy", g_te)
            self.add("scalar_mix", None, "accuracy", acc)
            self.add("scalar_mix", None, "macro_f1", self.ci(y_te, pred, "macro_f1", g_te))
            self.mix = {
                "layers": list(layer_ids),
                "weights": [float(w) for w in probe.weights_],
                "gamma": float(probe.gamma_),
                "expected_layer": expected_layer(probe.weights_, layer_ids),
                "accuracy": acc.value,
                "ci_low": acc.ci_low,
                "ci_high": acc.ci_high,
            }
            done += 1
            self.progress(done, steps)

        self.meta.update(
            {
                "n_train_words": train.n_words,
                "n_dev_words": 0 if dev is None else dev.n_words,
                "n_test_words": test.n_words,
                "n_labels": int(len(np.unique(y_tr))),
                "test_unseen_type_rate": float(np.mean(~seen)),
                "C": {str(k): v for k, v in chosen.items()},
                "dev_accuracy_by_C": {
                    str(k): {str(c): s for c, s in v.items()} for k, v in dev_scores.items()
                },
                "unseen_type_accuracy": {str(k): v for k, v in oov_acc.items()},
            }
        )


class _WsdRun(_Run):
    def run(self) -> None:
        train, test = self.feats["train"], self.feats["test"]
        # One instance per multi-word expression: its first word.
        if "mwe" in train.fields:
            train = train.select(train.fields["mwe"] != "I")
            test = test.select(test.fields["mwe"] != "I")
        k_tr = np.array([lemma_key(s) for s in train.labels])
        k_te = np.array([lemma_key(s) for s in test.labels])
        y_tr, y_te = train.labels, test.labels
        self.y_test, self.g_test = y_te, test.sentence_index
        seen = np.isin(k_te, k_tr)
        backoff = first_sense_backoff()
        steps = len(test.layer_ids) + 1
        self.progress(0, steps)

        first = np.array([backoff(k) or ABSTAIN for k in k_te])
        mfs = MostFrequentSense(backoff).fit(y_tr, k_tr).predict(k_te)
        for name, pred in (("first_sense", first), ("semcor_mfs", mfs)):
            self._score(name, None, pred, seen)
        pred = (
            NearestSenseClassifier(backoff).fit(train.static, y_tr, k_tr).predict(test.static, k_te)
        )
        self._score("static_1nn", None, pred, seen)
        self.progress(1, steps)

        for i, layer in enumerate(test.layer_ids, start=2):
            clf = NearestSenseClassifier(backoff).fit(train.layer(layer), y_tr, k_tr)
            self._score("1nn", layer, clf.predict(test.layer(layer), k_te), seen)
            self.progress(i, steps)

        self.meta.update(
            {
                "n_train_instances": int(len(y_tr)),
                "n_test_instances": int(len(y_te)),
                "n_train_senses": int(len(np.unique(y_tr))),
                "test_seen_lemma_rate": float(np.mean(seen)),
                "first_sense_coverage": float(np.mean(first != ABSTAIN)),
            }
        )

    def _score(self, probe: str, layer: int | None, pred: np.ndarray, seen: np.ndarray) -> None:
        y, g = self.y_test, self.g_test
        for metric in ("f1", "precision", "recall"):
            self.add(probe, layer, metric, self.ci(y, pred, metric, g))
        self.add(probe, layer, "accuracy_seen", self.ci(y[seen], pred[seen], "accuracy", g[seen]))


# -- helpers ------------------------------------------------------------------------------


def _typed_table(rows: list[dict]) -> pd.DataFrame:
    """The tidy table with its dtypes: nullable int layers, float scores (NaN = none)."""
    table = pd.DataFrame(rows, columns=COLUMNS)
    table["layer"] = table["layer"].astype("Int64")
    for col in ("value", "ci_low", "ci_high", "control", "selectivity"):
        table[col] = table[col].astype(float)
    return table


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
