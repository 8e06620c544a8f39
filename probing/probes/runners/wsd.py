"""The word-sense run: 1-NN to SemCor training sense centroids per layer, with WordNet
backoff, scored by F1 on the test split (overall, polysemous lemmas, seen vs back-off items)
against the first-sense and most-frequent-sense baselines. Only the first word of a
multi-word expression is an instance (the others share its sense).
"""

from __future__ import annotations

import numpy as np

from probing.features import Features
from probing.probes.metrics import (
    ABSTAIN,
    SentenceBootstrap,
    centre_of_gravity,
    centre_of_gravity_draws,
)
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
from probing.probes.wsd import (
    MostFrequentSense,
    NearestSenseClassifier,
    first_sense_backoff,
    is_placeholder,
    lemma_key,
    only_sense_backoff,
    wordnet_sense_count,
)


def run(
    task: Task,
    feats: dict[str, Features],
    settings: ProbeSettings,
    *,
    model: str,
    dataset: str,
    progress: ProbeProgress | None = None,
    type_keys: object = None,  # the runners' common signature
    keep_probes: dict | None = None,
) -> ProbeResults:
    """1-NN sense classification of every layer in ``feats`` (deterministic: one seed)."""
    feats = first_word_of_mwes(feats)
    runner = WsdRun(
        task, dataset, model, feats, settings.seed, settings.n_boot, fit_progress(progress)
    )
    runner.keep_probes = keep_probes
    elapsed = timer()
    runner.run()
    return runner.results(settings, [settings.seed], elapsed())


class WsdRun(Run):
    """1-NN to sense centroids per layer (deterministic: one seed), scored on the test
    split overall, on polysemous lemmas, and on seen-lemma vs back-off items."""

    def run(self) -> None:
        train, test, dev = self.feats["train"], self.feats["test"], self.feats.get("dev")
        # SemCor's proper-name placeholders (person/group/location%1:03:00::) tag a class,
        # not a word sense: left out of training and scoring.
        train = train.select(~np.array([is_placeholder(s) for s in train.labels], bool))
        keep = ~np.array([is_placeholder(s) for s in test.labels], bool)
        self.meta["n_test_placeholders_left_out"] = int((~keep).sum())
        self.boot = SentenceBootstrap(test.sentence_index[keep], self.n_boot, self.seed)
        test = test.select(keep)
        self.scored_test = test
        if dev is not None:
            dev = dev.select(~np.array([is_placeholder(s) for s in dev.labels], bool))
        k_tr = np.array([lemma_key(s) for s in train.labels])
        k_te = np.array([lemma_key(s) for s in test.labels])
        y_tr, y_te = train.labels, test.labels
        seen = np.isin(k_te, k_tr)
        poly = np.array([wordnet_sense_count(k) > 1 for k in k_te], bool)
        self.masks = {"": None, "_polysemous": poly, "_seen": seen, "_backoff": ~seen}
        # Headline rows back off only to a lemma's one WordNet sense (no leak); the first
        # sense (ordered by counts that include the test documents) stays in side rows.
        leaky, backoff = first_sense_backoff(), only_sense_backoff()
        steps = len(test.layer_ids) + 1
        self.progress(0, steps)

        first = np.array([leaky(k) or ABSTAIN for k in k_te])
        leaky_fill = np.where(seen, ABSTAIN, first)  # what the leaky backoff answers

        def with_leak(pred: np.ndarray) -> np.ndarray:
            return np.where(seen, pred, leaky_fill)

        mfs = MostFrequentSense(backoff).fit(y_tr, k_tr).predict(k_te)
        mfs_only = MostFrequentSense(None).fit(y_tr, k_tr).predict(k_te)
        for name, pred in (
            ("first_sense", first),
            ("semcor_mfs", mfs),
            ("semcor_mfs_leaky_backoff", with_leak(mfs)),
            ("semcor_mfs_train_only", mfs_only),
        ):
            self._score(name, None, y_te, pred, seen)
        static = NearestSenseClassifier(backoff).fit(train.static, y_tr, k_tr)
        self._score("static_1nn", None, y_te, static.predict(test.static, k_te), seen)
        if self.keep_probes is not None:
            self.keep_probes["static"] = static
        self.progress(1, steps)

        dev_scores, draws, points = {}, {}, {}
        k_dev = None if dev is None else np.array([lemma_key(s) for s in dev.labels])
        for i, layer in enumerate(test.layer_ids, start=2):
            clf = NearestSenseClassifier(backoff).fit(train.layer(layer), y_tr, k_tr)
            if self.keep_probes is not None:
                self.keep_probes[layer] = clf
            pred = clf.predict(test.layer(layer), k_te)
            d = self._score("1nn", layer, y_te, pred, seen)
            self.score("1nn_leaky_backoff", layer, y_te, [with_leak(pred)], ("f1",))
            draws[layer], points[layer] = d, self._row("1nn", layer, "f1")["value"]
            if dev is not None and dev.n_words:
                dp = clf.predict(dev.layer(layer), k_dev)
                dev_scores[layer] = float(np.mean(dp == dev.labels))
            self.progress(i, steps)
        self.add_best_layer(dev_scores, "f1")
        ls = list(test.layer_ids)
        self.add_summary(
            "cog_running_best",
            "centre_of_gravity",
            centre_of_gravity(np.array([points[x] for x in ls]), ls),
            centre_of_gravity_draws(np.stack([draws[x] for x in ls], 1), ls),
        )
        self.meta.update(
            {
                "n_train_instances": int(len(y_tr)),
                "n_test_instances": int(len(y_te)),
                "n_train_senses": int(len(np.unique(y_tr))),
                "test_seen_lemma_rate": float(np.mean(seen)),
                "test_polysemous_rate": float(np.mean(poly)),
                "first_sense_coverage": float(np.mean(first != ABSTAIN)),
                "dev_f1": {str(k): v for k, v in dev_scores.items()},
                "first_sense_note": "WordNet's sense order comes from tag counts of the "
                "semantic concordances (SemCor foremost, test documents included): this "
                "baseline has seen the test data's sense distribution.",
                "backoff": "headline rows: a lemma unseen in training gets its only WordNet "
                "sense, or no answer when it has several (P/R/F1 over answered items); "
                "*_leaky_backoff rows: WordNet's first sense (ordered by counts that "
                "include the test documents)",
                "test_unseen_answered_rate": float(
                    np.mean(np.array([backoff(k) is not None for k in k_te[~seen]], bool))
                )
                if (~seen).any()
                else None,
            }
        )

    def _score(
        self, probe: str, layer: int | None, y: np.ndarray, pred: np.ndarray, seen: np.ndarray
    ) -> np.ndarray:
        """Rows f1/precision/recall (all items), f1 on polysemous lemmas, on seen lemmas and
        on back-off items, and accuracy_seen; returns the overall F1 draws."""
        out = self.score(probe, layer, y, [pred], ("f1", "precision", "recall"))["f1"]
        for suffix in ("_polysemous", "_seen", "_backoff"):
            self.score(
                probe,
                layer,
                y,
                [pred],
                ("f1",),
                mask=self.masks[suffix],
                names={"f1": f"f1{suffix}"},
            )
        self.score(
            probe, layer, y, [pred], ("accuracy",), mask=seen, names={"accuracy": "accuracy_seen"}
        )
        return out
