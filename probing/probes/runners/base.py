"""What every word-level runner shares: :class:`Run` keeps the tidy rows
(:data:`probing.probes.results.COLUMNS`), the paired sentence bootstrap, the replicates and
per-sentence counts behind the comparison table, the dev-chosen best layer; :meth:`Run.results`
turns a finished run into :class:`~probing.probes.results.ProbeResults`.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence

import numpy as np

from probing.features import Features
from probing.probes.compare import (
    KINDS,
    Replicates,
    SentenceCounts,
    compare,
    layer_table,
    table_dict,
    with_holm,
)
from probing.probes.metrics import Estimate, SentenceBootstrap, centre_of_gravity, seed_estimate
from probing.probes.results import PER_LAYER_PROBES, ProbeResults, typed_table
from probing.probes.settings import ProbeSettings
from probing.probes.tasks import Task

# (stage, done, total): stages "extract train", "extract dev", "extract test", "fit".
ProbeProgress = Callable[[str, int, int], None]


class Run:
    """One word-level run's bookkeeping (see the module doc)."""

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
        self.meta: dict = {}
        self.keep_probes: dict | None = None  # filled with the first seed's fitted probes
        # Per-seed replicates of every per-layer score, task and control, for the
        # comparison table (probing.probes.compare): (probe, layer, metric, "task"|"control").
        self.replicates: dict[tuple, Replicates] = {}
        # Per-sentence counts of the same scores (stored beside the results, so that cells
        # of different runs can be compared later): cell name -> SentenceCounts.
        self.counts: dict[str, SentenceCounts] = {}
        # One set of resampled test sentences for every score: task/control, layers and
        # seeds are paired (see probing.probes.metrics.SentenceBootstrap).
        self.boot = SentenceBootstrap(feats["test"].sentence_index, n_boot, seed)

    def add(
        self,
        probe: str,
        layer: int | None,
        metric: str,
        est: Estimate,
        control: Estimate | None = None,
        selectivity: Estimate | None = None,
        seeds: int = 1,
        selected_on: str = "",
    ) -> None:
        nan = math.nan
        c = control or Estimate(nan, nan, nan, 0)
        s = selectivity or Estimate(nan, nan, nan, 0)
        self.rows.append(
            {
                "model": self.model,
                "task": self.spec.name,
                "dataset": self.dataset,
                "split": "test",
                "probe": probe,
                "layer": layer,
                "metric": metric,
                "value": est.value,
                "ci_low": est.ci_low,
                "ci_high": est.ci_high,
                "control": c.value,
                "selectivity": s.value,
                "n": est.n,
                "control_ci_low": c.ci_low,
                "control_ci_high": c.ci_high,
                "selectivity_ci_low": s.ci_low,
                "selectivity_ci_high": s.ci_high,
                "seeds": seeds,
                "selected_on": selected_on,
                "sd": est.sd,
                "control_sd": c.sd,
                "selectivity_sd": s.sd,
            }
        )

    def score(
        self,
        probe: str,
        layer: int | None,
        y_true: np.ndarray,
        preds: Sequence[np.ndarray],
        metrics: Sequence[str],
        control: Sequence[tuple[np.ndarray, np.ndarray]] | None = None,
        selected_on: str = "",
        mask: np.ndarray | None = None,
        names: dict[str, str] | None = None,
    ) -> dict[str, np.ndarray]:
        """Rows for one probe: each metric's mean over seeds (``preds``: one (n,) array per
        seed), its CI and sd; with ``control`` ((gold, predicted) per seed) also control
        and selectivity, paired. Returns each metric's mean bootstrap draws."""
        out = {}
        # A cell has one set of per-sentence counts (the f1 family's are the same counts);
        # they are labelled with the run's headline metric when it is scored here, else
        # with the first countable metric, not with whichever metric came last.
        countable = [m for m in (self.spec.metric, *metrics) if m in metrics and m in KINDS]
        counts_kind = countable[0] if countable else None
        for metric in metrics:
            t = [self.boot.draws(y_true, p, metric, mask) for p in preds]
            n = int(len(y_true) if mask is None else mask.sum())
            est = seed_estimate([v for v, _ in t], [d for _, d in t], n)
            c_est = s_est = None
            if control:
                c = [self.boot.draws(cy, cp, metric, mask) for cy, cp in control]
                c_est = seed_estimate([v for v, _ in c], [d for _, d in c], n)
                s_est = seed_estimate(
                    [a - b for (a, _), (b, _) in zip(t, c, strict=True)],
                    [a - b for (_, a), (_, b) in zip(t, c, strict=True)],
                    n,
                )
            name = (names or {}).get(metric, metric)
            self.add(probe, layer, name, est, c_est, s_est, len(preds), selected_on)
            if probe in PER_LAYER_PROBES and mask is None and name == metric:
                seeds = tuple(getattr(self, "seeds", [self.seed]))[: len(preds)]
                self.replicates[(probe, layer, metric, "task")] = Replicates(
                    f"layer {layer}", [v for v, _ in t], [d for _, d in t], "test", seeds
                )
                if control:
                    self.replicates[(probe, layer, metric, "control")] = Replicates(
                        f"control {layer}", [v for v, _ in c], [d for _, d in c], "test", seeds
                    )
                if metric in KINDS and metric == counts_kind:
                    sent, n_sent = self.sentences()
                    self.counts[f"layer {layer}"] = SentenceCounts.from_predictions(
                        metric, y_true, preds, sent, n_sent, seeds
                    )
                    if control:
                        self.counts[f"control {layer}"] = _per_seed_counts(
                            metric, control, sent, n_sent, seeds
                        )
            elif (
                layer is None
                and mask is None
                and name == metric
                and metric in KINDS
                and metric == counts_kind
            ):
                # A baseline or the scalar mix: stored so that statements can compare it.
                sent, n_sent = self.sentences()
                seeds = tuple(getattr(self, "seeds", [self.seed]))[: len(preds)]
                if len(seeds) == len(preds):
                    self.counts[probe] = SentenceCounts.from_predictions(
                        metric, y_true, preds, sent, n_sent, seeds
                    )
            out[metric] = np.mean([d for _, d in t], axis=0)
        return out

    def sentences(self) -> tuple[np.ndarray, int]:
        """Each scored test item's sentence (aligned with the scores' ``y_true``) and the
        number of test sentences."""
        test = getattr(self, "scored_test", None)
        test = self.feats["test"] if test is None else test
        return np.asarray(test.sentence_index), len(test.sent_ids)

    def comparisons(self) -> dict | None:
        """The run's comparison table: adjacent layers and best-vs-each on the headline
        metric (two-level paired bootstrap, Holm), and task − control per layer."""
        metric = self.spec.metric
        pick = lambda kind: {  # noqa: E731
            k[1]: r for k, r in self.replicates.items() if k[2] == metric and k[3] == kind
        }
        task, ctl = pick("task"), pick("control")
        if len(task) < 2:
            return None
        best = (self.meta.get("best_layer") or {}).get("layer")
        out = table_dict(layer_table(task, best, seed=self.seed), metric)
        if ctl:
            sel = [compare(task[la], ctl[la], self.seed) for la in sorted(ctl)]
            out["selectivity"] = [d.as_dict() for d in with_holm(sel)]
        return out

    def _row(self, probe: str, layer: int | None, metric: str) -> dict:
        return next(
            r
            for r in reversed(self.rows)
            if r["probe"] == probe and r["layer"] == layer and r["metric"] == metric
        )

    def add_summary(self, probe: str, metric: str, point: float, draws: np.ndarray) -> None:
        """A row for a summary of the per-layer scores (centre of gravity), CI from the
        paired draws."""
        low, high = (
            np.nanquantile(draws, [0.025, 0.975])
            if np.isfinite(draws).any()
            else (math.nan, math.nan)
        )
        self.add(probe, None, metric, Estimate(point, float(low), float(high), len(draws)))

    def add_best_layer(self, dev_scores: dict[int, float], metric: str) -> None:
        """The layer with the best *dev* score, reported with its test row."""
        if not dev_scores:
            return
        best = max(sorted(dev_scores), key=lambda layer: dev_scores[layer])
        row = next(
            r
            for r in self.rows
            if r["probe"] in PER_LAYER_PROBES and r["layer"] == best and r["metric"] == metric
        )
        self.rows.append({**row, "probe": "best_layer", "selected_on": "dev"})
        self.meta["best_layer"] = {
            "layer": int(best),
            "selected_on": "dev",
            "metric": metric,
            "dev": float(dev_scores[best]),
            "test": row["value"],
            "test_ci": [row["ci_low"], row["ci_high"]],
        }

    def results(self, settings: ProbeSettings, seeds: list[int], fit_s: float) -> ProbeResults:
        """The finished run as ProbeResults: its rows, centre of gravity of the headline
        metric's per-layer scores, comparison table and ``meta`` (settings, sizes, timing)."""
        spec, feats = self.spec, self.feats
        table = typed_table(self.rows)
        per_layer = table[
            table["probe"].isin(PER_LAYER_PROBES) & (table["metric"] == spec.metric)
        ].sort_values("layer")
        cog = centre_of_gravity(
            per_layer["value"].to_numpy(), per_layer["layer"].to_numpy(dtype=float)
        )
        test, train = feats["test"], feats["train"]
        meta = {
            "layers": list(test.layer_ids),
            "seed": self.seed,
            "seeds": seeds,
            "n_boot": self.n_boot,
            "bootstrap_unit": "sentence",
            "max_train_words": settings.max_train_words if spec.kind != "wsd" else None,
            "n_train_sentences": len(train.sent_ids),
            "n_test_sentences": len(test.sent_ids),
            "n_dev_sentences": len(feats["dev"].sent_ids) if "dev" in feats else 0,
            "eval_split": "test",
            "timing_s": {"fit": round(fit_s, 2)},
            **self.meta,
        }
        return ProbeResults(
            model=self.model,
            task=spec.name,
            dataset=self.dataset,
            table=table,
            scalar_mix=self.mix,
            centre_of_gravity=cog,
            meta=meta,
            comparisons=self.comparisons(),
            sentence_counts=self.counts,
        )


def _per_seed_counts(
    metric: str,
    control: Sequence[tuple[np.ndarray, np.ndarray]],
    sent: np.ndarray,
    n_sent: int,
    seeds: Sequence[int],
) -> SentenceCounts:
    """Counts of control predictions whose gold labels differ per seed."""
    parts = [
        SentenceCounts.from_predictions(metric, cy, [cp], sent, n_sent).counts for cy, cp in control
    ]
    return SentenceCounts(metric, np.concatenate(parts), tuple(seeds))


def first_word_of_mwes(feats: dict[str, Features]) -> dict[str, Features]:
    """One instance per multi-word expression, its first word: the other words share its
    label and would count it several times (WSD and supersense alike)."""
    return {
        k: f.select(f.fields["mwe"] != "I") if "mwe" in f.fields else f for k, f in feats.items()
    }


def fit_progress(progress: ProbeProgress | None) -> Callable[[int, int], None]:
    """``(done, total)`` of the fits, reported as stage ``fit``."""
    report = progress or (lambda stage, done, total: None)
    return lambda done, total: report("fit", done, total)


def timer() -> Callable[[], float]:
    """Seconds since the call."""
    t0 = time.perf_counter()
    return lambda: time.perf_counter() - t0
