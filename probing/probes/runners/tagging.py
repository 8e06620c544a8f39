"""The tagging and edge runs (POS, XPOS, PTB, supersense; deprel, deprel-hd).

Baselines, one C for all layers chosen on dev, per layer and seed a linear probe and its
control probe (paired bootstrap over test sentences), optional MDL, the scalar mix and the
cumulative mixes, the dev-chosen best layer and both centres of gravity. An edge task's
instances are the gold arcs ([head; dependent], or Liu et al.'s [h; d; h∘d] for
``deprel-hd``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from probing.features import Features, LayerStack
from probing.heap import release_free_memory
from probing.probes.baselines import MajorityBaseline, WordTypeBaseline
from probing.probes.compare import Replicates, mix_vs_best_member
from probing.probes.control import ControlTask, TypeKeys
from probing.probes.defaults import PROBE_CS
from probing.probes.guards import check_probe_size
from probing.probes.linear import LinearProbe
from probing.probes.mdl import online_codelength
from probing.probes.metrics import (
    Estimate,
    centre_of_gravity,
    centre_of_gravity_draws,
    expected_layer,
    seed_estimate,
)
from probing.probes.mix import RUNNER_SOLVER, ScalarMixProbe, layer_stats
from probing.probes.results import ProbeResults
from probing.probes.runners.base import (
    ProbeProgress,
    Run,
    first_word_of_mwes,
    fit_progress,
    timer,
)
from probing.probes.settings import ProbeSettings
from probing.probes.tasks import Task


def run(
    task: Task,
    feats: dict[str, Features],
    settings: ProbeSettings,
    *,
    model: str,
    dataset: str,
    progress: ProbeProgress | None = None,
    type_keys: TypeKeys | None = None,
    keep_probes: dict | None = None,
) -> ProbeResults:
    """Tagging (or edge) probes of every layer in ``feats`` (``train``, ``test``, ``dev`` if
    there is one). ``type_keys``: word -> control-task type key (default: the word)."""
    if task.kind == "edge":  # one row per gold arc: [head vector; dependent vector]
        from probing.probes.edge import arc_features

        product = task.variant == "product"  # Liu et al. 2019's [h; d; h ∘ d]
        feats = {split: arc_features(f, product) for split, f in feats.items()}
    if task.per_expression:  # one instance per multi-word expression
        feats = first_word_of_mwes(feats)
    runner = TaggingRun(
        task, dataset, model, feats, settings.seed, settings.n_boot, fit_progress(progress)
    )
    runner.keep_probes = keep_probes
    elapsed = timer()
    runner.run(settings, type_keys)
    seeds = [settings.seed + i for i in range(settings.seeds)]
    return runner.results(settings, seeds, elapsed())


class TaggingRun(Run):
    """Linear probes per layer and seed with control tasks, baselines and mixes."""

    def run(self, settings: ProbeSettings, type_keys: TypeKeys | None = None) -> None:
        """Append every row of the run (``settings``: the caps, C grid, seeds and which of
        control, MDL and the mixes run)."""
        s = settings
        max_train_words, Cs, seeds, mdl = s.max_train_words, s.Cs, s.seeds, s.mdl
        scalar_mix, control, per_layer_c = s.scalar_mix, s.control, s.per_layer_c
        cumulative_mix, mdl_seeds = s.cumulative_mix, s.mdl_seeds
        full = self.feats["train"]
        self.seeds = [self.seed + i for i in range(seeds)]
        # Each seed its own training sample; with the whole split they are all the same
        # words, and the (convex, deterministic) task probe is fitted once.
        self.trains = {s: full.subsample(max_train_words, seed=s) for s in self.seeds}
        self.same_train = max_train_words is None or full.n_words <= max_train_words
        check_probe_size(full.labels, full.dim, f"A {self.spec.name} probe")
        self.dev, self.test = self.feats.get("dev"), self.feats["test"]
        self.y_te = self.test.labels
        layer_ids = self.test.layer_ids
        # MDL on every seed unless fewer are asked for: its seed spread is in its rows.
        n_mdl = len(self.seeds) if mdl_seeds is None else max(1, mdl_seeds)
        self.mdl_seeds = self.seeds[:n_mdl] if mdl else []
        steps = 1 + len(layer_ids) * (
            2 + len(self.seeds) * int(control) + len(self.mdl_seeds) * (1 + int(control))
        )
        steps += (
            int(scalar_mix) * (1 + int(cumulative_mix) * (len(layer_ids) - 1)) * len(self.seeds)
        )
        self._done, self._steps = 0, steps
        self.progress(0, steps)

        self._baselines()
        chosen, dev_at_c = self._choose_c(layer_ids, Cs, per_layer_c)
        ctl = self._control_labels(type_keys) if control else None
        self._control_prev: dict[int, LinearProbe | None] = {}  # per seed, the last layer's
        self._members: dict[tuple[int, int], LinearProbe] = {}  # (layer, seed): task probe
        acc_draws, acc_points = {}, {}
        for layer in layer_ids:
            draws = self._probe_layer(layer, chosen[layer], ctl, mdl)
            acc_draws[layer] = draws["accuracy"]
            acc_points[layer] = self._row("linear", layer, "accuracy")["value"]
        self.add_best_layer(dev_at_c, "accuracy")
        ls = list(layer_ids)
        pts = np.array([acc_points[layer] for layer in ls])
        self.add_summary(
            "cog_running_best",
            "centre_of_gravity",
            centre_of_gravity(pts, ls),
            centre_of_gravity_draws(np.stack([acc_draws[layer] for layer in ls], 1), ls),
        )
        if scalar_mix:
            self._scalar_mixes(ls, cumulative_mix, chosen, dev_at_c)
        self.meta.update(
            {
                "n_train_words": self.trains[self.seed].n_words,
                "n_dev_words": 0 if self.dev is None else self.dev.n_words,
                "n_test_words": self.test.n_words,
                "n_labels": int(len(np.unique(full.labels))),
                "C": {str(k): v for k, v in chosen.items()},
                "C_grid": list(Cs),
                "C_selection": "per layer, on dev"
                if per_layer_c
                else "one C for all layers: best mean dev accuracy",
                "C_at_grid_edge": any(c in (min(Cs), max(Cs)) for c in chosen.values()),
                "dev_accuracy": {str(k): v for k, v in dev_at_c.items()},
                "dev_accuracy_by_C": {
                    str(k): {str(c): s for c, s in v.items()} for k, v in self._dev_scores.items()
                },
                "same_train_words_for_all_seeds": self.same_train,
                "type_keys": "model" if type_keys is not None else "word",
            }
        )

    def _check_mix(self, sub: list[int], mix: Replicates) -> None:
        """Record the mix over ``sub`` against its best single layer (paired, seeds folded
        in; issue 27: a mix below its best member beyond noise is flagged in meta, with
        the reason)."""
        members = {
            la: r
            for (probe, la, metric, kind), r in self.replicates.items()
            if probe == "linear" and metric == "accuracy" and kind == "task" and la in sub
        }
        if not members:
            return
        d = mix_vs_best_member(mix, members, self.seed)
        row = {
            "layers": list(sub),
            **d.as_dict(),
            "below_beyond_noise": bool(d.called and d.value < 0),
        }
        self.meta.setdefault("mix_vs_best_member", []).append(row)
        if row["below_beyond_noise"]:
            self.meta["mix_below_best_member_note"] = (
                "the mix and its members are trained on the same words; a mix below its "
                "best member measures the mix's trainer against the single layers' L-BFGS "
                "at the dev-chosen C, not the layers: "
                + (
                    "full-batch L-BFGS from the best member's probe, with its L2 and tolerance"
                    if RUNNER_SOLVER == "lbfgs"
                    else "Adam with the members' L2, at least 8 epochs and 2,000 steps, best "
                    "dev epoch"
                )
            )

    def _step(self) -> None:
        release_free_memory()  # what the step freed, before the next one allocates
        self._done += 1
        self.progress(self._done, self._steps)

    def _X(self, feats: Features, layer: int | None) -> np.ndarray:
        return feats.static if layer is None else feats.layer(layer)

    def _baselines(self) -> None:
        y_te, test = self.y_te, self.test
        metrics = ("accuracy", "macro_f1")
        for name, cls in (("majority", MajorityBaseline), ("word_type", WordTypeBaseline)):
            preds = [
                cls().fit(tr.words, tr.labels).predict(test.words) for tr in self.trains.values()
            ]
            self.score(name, None, y_te, preds, metrics)
        tr0 = self.trains[self.seed]
        seen = WordTypeBaseline().fit(tr0.words, tr0.labels).seen(test.words)
        self.seen = seen
        self.meta["test_unseen_type_rate"] = float(np.mean(~seen))
        dev_X = None if self.dev is None else self.dev.static
        dev_y = None if self.dev is None else self.dev.labels
        static = LinearProbe(Cs=PROBE_CS, max_train_words=None, random_state=self.seed)
        static.fit(tr0.static, tr0.labels, dev_X, dev_y)
        self._static_probe = static  # its C path starts the first layer's grid
        if self.keep_probes is not None:
            self.keep_probes["static"] = static
        preds = []
        for s, tr in self.trains.items():
            if s != self.seed and not self.same_train:
                static = LinearProbe(C=static.C_, max_train_words=None, random_state=s)
                static.fit(tr.static, tr.labels)
            preds.append(static.predict(test.static))
        self.score("static", None, y_te, preds, metrics, selected_on="dev")
        self.meta["C_static"] = static.C_
        self._step()

    def _choose_c(
        self, layer_ids: Sequence[int], Cs: tuple[float, ...], per_layer: bool
    ) -> tuple[dict[int, float], dict[int, float]]:
        """C per layer (one for all unless ``per_layer``) and each layer's dev accuracy at
        it, from the first seed's training words."""
        tr0 = self.trains[self.seed]
        self._probes0: dict[int, LinearProbe] = {}
        self._dev_scores: dict[int, dict[float, float]] = {}
        # The previous layer's probe (for the first layer, the static one): its solutions
        # start this layer's grid (warm start; ignored when classes or dimensions differ).
        prev = getattr(self, "_static_probe", None)
        for layer in layer_ids:
            probe = LinearProbe(Cs=Cs, max_train_words=None, random_state=self.seed, init=prev)
            prev = probe
            dev_X = None if self.dev is None else self.dev.layer(layer)
            probe.fit(
                tr0.layer(layer), tr0.labels, dev_X, None if self.dev is None else self.dev.labels
            )
            self._probes0[layer] = probe
            self._dev_scores[layer] = {float(c): float(v) for c, v in probe.dev_scores_.items()}
            self._step()
        if per_layer:
            chosen = {layer: float(self._probes0[layer].C_) for layer in layer_ids}
        else:
            grid = sorted(self._dev_scores[layer_ids[0]])
            mean = {c: np.mean([self._dev_scores[layer][c] for layer in layer_ids]) for c in grid}
            best = max(grid, key=lambda c: mean[c])  # ties: the smaller C (first in the grid)
            chosen = dict.fromkeys(layer_ids, best)
        dev_at = {layer: self._dev_scores[layer][chosen[layer]] for layer in layer_ids}
        return chosen, dev_at

    def _control_labels(self, type_keys: TypeKeys | None) -> dict[int, tuple]:
        """Per seed: (train control labels, test control labels)."""
        out = {}
        for s, tr in self.trains.items():
            task = ControlTask(seed=s, type_keys=type_keys).fit(tr.words, tr.labels)
            out[s] = (task.transform(tr.words), task.transform(self.test.words))
        return out

    def _task_probe(self, layer: int, C: float, seed: int) -> LinearProbe:
        first = self._probes0[layer]
        if (seed == self.seed or self.same_train) and first.C_ == C:
            return first
        if self.same_train and getattr(self, "_refit", {}).get(layer) is not None:
            return self._refit[layer]
        tr = self.trains[self.seed if self.same_train else seed]
        # From the grid's solution at C (on the same words it is already the answer, to
        # the tolerance: one evaluation confirms it; a from-zero refit cost ~70 at full data).
        probe = LinearProbe(C=C, max_train_words=None, random_state=seed, init=first)
        probe.fit(tr.layer(layer), tr.labels)
        if self.same_train:
            self._refit = {**getattr(self, "_refit", {}), layer: probe}
        return probe

    def _probe_layer(self, layer: int, C: float, ctl: dict | None, mdl: bool) -> dict:
        X_te = self.test.layer(layer)
        preds, control, codes = [], [], {"task": [], "control": []}
        for s, tr in self.trains.items():
            X_tr = tr.layer(layer)
            probe = self._task_probe(layer, C, s)
            # Each mix starts from its dev-best member's probe on the same words at C.
            self._members[(layer, s)] = probe
            if self.keep_probes is not None and s == self.seed:
                self.keep_probes[layer] = probe
            pred = probe.predict(X_te)
            preds.append(pred)
            if ctl is not None:
                # Same probe family, same C, same words: only the labels differ.
                pred_c, self._control_prev[s] = _control_predict(
                    C, s, X_tr, ctl[s][0], X_te, self._control_prev.get(s)
                )
                control.append((ctl[s][1], pred_c))
                self._step()
            if s in self.mdl_seeds:

                def make(s: int = s) -> LinearProbe:  # a fresh probe at the task's C
                    return LinearProbe(C=C, max_train_words=None, random_state=s)

                labels = {"task": tr.labels}
                if ctl is not None:
                    labels["control"] = ctl[s][0]
                for kind, y in labels.items():
                    codes[kind].append(online_codelength(X_tr, y, make, seed=s))
                    self._step()
        self._step()
        seen = self.seen
        oov = float(np.mean(preds[0][~seen] == self.y_te[~seen])) if (~seen).any() else None
        self.meta.setdefault("unseen_type_accuracy", {})[str(layer)] = oov
        draws = self.score(
            "linear",
            layer,
            self.y_te,
            preds,
            ("macro_f1", "accuracy"),
            control or None,
            selected_on="dev",
        )
        if mdl:
            self._add_mdl(layer, codes)
        return draws

    def _add_mdl(self, layer: int, codes: dict[str, list]) -> None:
        """Rows ``mdl_kbits`` and ``compression``: task in value, control in control
        (mean over seeds, sd across them; no bootstrap: the code is over training data)."""
        nan = math.nan
        for metric, get in (
            ("mdl_kbits", lambda c: c.kbits),
            ("compression", lambda c: c.compression),
        ):
            vals = {k: np.array([get(c) for c in v]) for k, v in codes.items() if v}

            def est(v: np.ndarray) -> Estimate:
                return Estimate(
                    float(v.mean()),
                    nan,
                    nan,
                    codes["task"][0].n,
                    float(v.std(ddof=1)) if len(v) > 1 else 0.0,
                )

            ctl = est(vals["control"]) if "control" in vals else None
            self.add(
                "linear", layer, metric, est(vals["task"]), ctl, None, len(vals["task"]), "dev"
            )
        self.meta.setdefault("mdl", {})[str(layer)] = {
            k: [
                {
                    "bits": c.bits,
                    "uniform_bits": c.uniform_bits,
                    "boundaries": list(c.boundaries),
                    "block_bits": list(c.block_bits),
                }
                for c in v
            ]
            for k, v in codes.items()
            if v
        }

    def _scalar_mixes(
        self,
        layer_ids: list[int],
        cumulative: bool,
        chosen: dict[int, float],
        dev_at_c: dict[int, float],
    ) -> None:
        """The mix over all layers and, for Tenney et al.'s own centre of gravity, the
        cumulative mixes over layers 0..l: per seed, on that seed's training words, the
        same words as its single-layer probes, with their L2 penalty (the C chosen on dev
        for the dev-best member; issue 27: mixes trained on fewer words than their members,
        or without their penalty, fell below them). Rows are means over seeds, intervals
        paired."""
        n = len(layer_ids)
        order = {layer: i for i, layer in enumerate(self.test.layer_ids)}
        pos = [order[layer] for layer in layer_ids]
        if pos == list(range(len(order))):
            # Lazy stacks: each batch and chunk is read when used (a float16 copy of every
            # layer's training words was 4.1 GB for mpnet-base on all of UD-EWT train).
            def stack(f: Features) -> LayerStack | np.ndarray:
                # Arc features (edge tasks) are built in memory: their layers are no copy.
                return f.layer_stack() if hasattr(f, "layer_stack") else f.layers
        else:

            def stack(f: Features) -> LayerStack | np.ndarray:
                return f.layers[pos]

        X_te = stack(self.test)
        dev = self.dev
        X_dev = None if dev is None else stack(dev)
        y_dev = None if dev is None else dev.labels
        ks = list(range(1 if cumulative else n, n + 1))
        best = {k: max(layer_ids[:k], key=lambda la: dev_at_c[la]) for k in ks}
        mix_c = {k: chosen[best[k]] for k in ks}
        preds: dict[int, list[np.ndarray]] = {k: [] for k in ks}
        top: dict[int, ScalarMixProbe] = {}  # per seed, the mix over every layer
        stats = None
        for s in self.seeds:
            tr = self.trains[s]
            X_tr = stack(tr)
            if stats is None or not self.same_train:
                # The sample's statistics once for every mix of the seed (a layer's do not
                # depend on the others); each mix standardises its batches with them.
                mean, std = stats = layer_stats(X_tr)
            for k in ks:
                # RUNNER_SOLVER (mix.py says why Adam); "lbfgs" starts from the dev-best
                # member's probe, which the Adam path ignores.
                probe = ScalarMixProbe(
                    max_train_words=None, C=mix_c[k], random_state=s, solver=RUNNER_SOLVER
                )
                member = self._members.get((best[k], s))
                probe.fit(
                    X_tr[:k],
                    tr.labels,
                    None if X_dev is None else X_dev[:k],
                    y_dev,
                    layers=layer_ids[:k],
                    stats=(mean[:k], std[:k]),
                    member=None if member is None else (layer_ids.index(best[k]), member),
                )
                preds[k].append(probe.predict(X_te[:k]))
                if k == n:
                    top[s] = probe
                self._step()
        cum_draws, cum_points = [], []
        for k in ks:
            sub = layer_ids[:k]
            t = [self.boot.draws(self.y_te, p, "accuracy") for p in preds[k]]
            points, draws = [v for v, _ in t], [d for _, d in t]
            mix = Replicates(f"mix 0..{sub[-1]}", points, draws, "test", tuple(self.seeds))
            self._check_mix(sub, mix)
            cum_points.append(float(np.mean(points)))
            cum_draws.append(np.mean(draws, axis=0))  # the seed mean's replicates
            if k < n:
                est = seed_estimate(points, draws, self.test.n_words)
                self.add(
                    "cumulative_mix", sub[-1], "accuracy", est, seeds=len(points), selected_on="dev"
                )
        self.score(
            "scalar_mix", None, self.y_te, preds[n], ("accuracy", "macro_f1"), selected_on="dev"
        )
        acc = next(
            r
            for r in reversed(self.rows)
            if r["probe"] == "scalar_mix" and r["metric"] == "accuracy"
        )
        first = top[self.seed]
        self.mix = {
            "layers": list(layer_ids),
            "weights": [float(w) for w in first.weights_],
            "gamma": float(first.gamma_),
            "expected_layer": expected_layer(first.weights_, layer_ids),
            "weights_by_seed": {str(s): [float(w) for w in p.weights_] for s, p in top.items()},
            "accuracy": acc["value"],
            "ci_low": acc["ci_low"],
            "ci_high": acc["ci_high"],
            "seeds": list(self.seeds),
            "train_words": self.trains[self.seed].n_words,
            "train_words_note": "each seed's mixes are trained on that seed's single-layer "
            "training words",
            "C": mix_c[n],
            "C_note": "the classifier's L2 is the members' (the C chosen on dev for the "
            "dev-best member); gamma is held at 1",
            "epochs": first.epochs_,
            "solver": first.solver,
            "evaluations": getattr(first, "n_evals_", None),
        }
        if cumulative and n > 1:
            cum = np.array(cum_points)
            self.add_summary(
                "cog_cumulative_mix",
                "centre_of_gravity",
                centre_of_gravity(cum, layer_ids, cumulative=False),
                centre_of_gravity_draws(np.stack(cum_draws, 1), layer_ids, cumulative=False),
            )
            self.mix["cumulative_accuracy"] = [float(v) for v in cum]


def _control_predict(
    C: float,
    seed: int,
    X_tr: np.ndarray,
    c_tr: np.ndarray,
    X_te: np.ndarray,
    init: LinearProbe | None = None,
) -> tuple[np.ndarray, LinearProbe | None]:
    """The control probe's test predictions (same family and C as the task probe) and the
    probe (None for one label), which warm-starts the next layer's (``init``)."""
    if len(np.unique(c_tr)) < 2:
        # One word type (or all types drew the same label): the control probe can only
        # predict that label, which is what a classifier of one class does.
        return np.full(len(X_te), c_tr[0]), None
    probe = LinearProbe(C=C, max_train_words=None, random_state=seed, init=init)
    return probe.fit(X_tr, c_tr).predict(X_te), probe
