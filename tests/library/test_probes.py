"""Probes, control tasks, baselines, metrics, WSD and the scalar mix; one real end-to-end run."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from sklearn.base import clone

from probing.probes import (
    ABSTAIN,
    ControlTask,
    LinearProbe,
    MajorityBaseline,
    MostFrequentSense,
    NearestSenseClassifier,
    ScalarMixProbe,
    WordTypeBaseline,
    accuracy,
    bootstrap_ci,
    centre_of_gravity,
    expected_layer,
    lemma_key,
    macro_f1,
    precision_recall_f1,
    probe_layers,
    selectivity,
)

# -- control tasks ------------------------------------------------------------------------


def test_control_labels_are_fixed_per_type_across_splits_and_instances():
    train_words = ["the", "dog", "the", "cat", "runs", "dog", "the"]
    train_tags = ["DET", "NOUN", "DET", "NOUN", "VERB", "NOUN", "DET"]
    ctl = ControlTask(seed=0).fit(train_words, train_tags)
    train_ctl = ctl.transform(train_words)
    test_ctl = ctl.transform(["cat", "the", "zebra", "dog", "the"])
    by_type = {}
    all_words = train_words + ["cat", "the", "zebra", "dog", "the"]
    for w, c in zip(all_words, [*train_ctl, *test_ctl], strict=True):
        assert by_type.setdefault(w, c) == c  # one label per type, train and test alike
    assert set(train_ctl) <= {"DET", "NOUN", "VERB"}
    # Deterministic across objects (and processes: it is a hash); another seed differs.
    again = ControlTask(seed=0).fit(train_words, train_tags).transform(train_words)
    np.testing.assert_array_equal(again, train_ctl)
    many = [f"w{i}" for i in range(200)]
    other = ControlTask(seed=1).fit(train_words, train_tags).transform(many)
    assert (other != ctl.transform(many)).any()


def test_control_labels_follow_the_task_label_distribution():
    tags = ["A"] * 70 + ["B"] * 20 + ["C"] * 10
    ctl = ControlTask(seed=3).fit(["x"] * 100, tags)
    types = [f"type{i}" for i in range(20_000)]
    labels, counts = np.unique(ctl.transform(types), return_counts=True)
    freq = dict(zip(labels, counts / counts.sum(), strict=True))
    assert freq["A"] == pytest.approx(0.7, abs=0.015)
    assert freq["B"] == pytest.approx(0.2, abs=0.015)
    assert freq["C"] == pytest.approx(0.1, abs=0.015)


def test_selectivity_is_task_minus_control_per_layer():
    np.testing.assert_allclose(selectivity([0.9, 0.95, 0.8], [0.6, 0.5, 0.7]), [0.3, 0.45, 0.1])


# -- baselines ----------------------------------------------------------------------------


def test_majority_and_word_type_baselines_on_a_hand_example():
    words = ["the", "can", "can", "can", "fish", "the", "fish"]
    tags = ["DET", "AUX", "AUX", "NOUN", "NOUN", "DET", "VERB"]
    maj = MajorityBaseline().fit(words, tags)
    # DET, AUX and NOUN tie at 2; the tie goes to the label sorting first: AUX.
    assert list(maj.predict(["x", "the"])) == ["AUX", "AUX"]
    wt = WordTypeBaseline().fit(words, tags)
    # can -> AUX (2 of 3); fish: NOUN/VERB tie -> NOUN; unseen -> overall majority AUX.
    assert list(wt.predict(["can", "fish", "the", "zebra"])) == ["AUX", "NOUN", "DET", "AUX"]
    assert list(wt.seen(["can", "zebra"])) == [True, False]
    assert wt.score(["the", "can", "fish"], ["DET", "NOUN", "NOUN"]) == pytest.approx(2 / 3)
    assert list(WordTypeBaseline(lowercase=True).fit(["The"], ["DET"]).predict(["the"])) == ["DET"]


# -- metrics ------------------------------------------------------------------------------


def test_bootstrap_interval_contains_the_estimate_and_narrows_with_n():
    rng = np.random.default_rng(0)
    widths = []
    for n in (100, 1_000, 10_000):
        y = rng.integers(0, 3, size=n)
        pred = np.where(rng.random(n) < 0.8, y, (y + 1) % 3)
        for metric in ("accuracy", "macro_f1"):
            est = bootstrap_ci(y, pred, metric, n_boot=500, seed=0)
            assert est.ci_low <= est.value <= est.ci_high
            if metric == "accuracy":
                assert est.value == pytest.approx(np.mean(y == pred))
                widths.append(est.ci_high - est.ci_low)
            else:
                assert est.value == pytest.approx(macro_f1(y, pred))
    assert widths[0] > widths[1] > widths[2]
    assert widths[2] < 0.02  # ~ 2 * 1.96 * sqrt(.8 * .2 / 10000) = 0.016
    # Same seed, same interval.
    assert bootstrap_ci(y, pred, seed=4) == bootstrap_ci(y, pred, seed=4)


def test_multinomial_bootstrap_matches_resampling_items():
    rng = np.random.default_rng(1)
    y = rng.integers(0, 5, size=800)
    pred = np.where(rng.random(800) < 0.7, y, rng.integers(0, 5, size=800))
    fast = bootstrap_ci(y, pred, "macro_f1", n_boot=1000, seed=0)
    slow = bootstrap_ci(y, pred, macro_f1, n_boot=1000, seed=0)  # explicit index resampling
    assert fast.value == pytest.approx(slow.value)
    assert fast.ci_low == pytest.approx(slow.ci_low, abs=0.012)
    assert fast.ci_high == pytest.approx(slow.ci_high, abs=0.012)


def test_sentence_bootstrap_is_wider_when_errors_cluster_and_matches_resampling_groups():
    rng = np.random.default_rng(2)
    sentence = np.repeat(np.arange(150), 12)  # 150 sentences of 12 words
    hard = rng.random(150) < 0.3  # errors cluster in hard sentences
    y = rng.integers(0, 4, size=sentence.size)
    wrong = (hard[sentence] & (rng.random(sentence.size) < 0.6)) | (
        rng.random(sentence.size) < 0.05
    )
    pred = np.where(wrong, (y + 1) % 4, y)
    for metric, fn in (("accuracy", accuracy), ("macro_f1", macro_f1)):
        by_word = bootstrap_ci(y, pred, metric, n_boot=1000, seed=0)
        by_sentence = bootstrap_ci(y, pred, metric, n_boot=1000, seed=0, groups=sentence)
        slow = bootstrap_ci(y, pred, fn, n_boot=1000, seed=0, groups=sentence)
        assert by_sentence.value == by_word.value == pytest.approx(fn(y, pred))
        width = by_sentence.ci_high - by_sentence.ci_low
        assert width > 1.7 * (by_word.ci_high - by_word.ci_low)
        assert by_sentence.ci_low == pytest.approx(slow.ci_low, abs=0.012)
        assert by_sentence.ci_high == pytest.approx(slow.ci_high, abs=0.012)
    # One word per sentence: resampling sentences is resampling words.
    one = bootstrap_ci(y, pred, "accuracy", n_boot=2000, groups=np.arange(y.size))
    plain = bootstrap_ci(y, pred, "accuracy", n_boot=2000)
    assert one.ci_low == pytest.approx(plain.ci_low, abs=0.006)
    with pytest.raises(ValueError, match="groups"):
        bootstrap_ci(y, pred, groups=sentence[:-1])


def test_precision_recall_f1_with_and_without_abstentions():
    gold = ["a", "b", "c", "d"]
    assert precision_recall_f1(gold, ["a", "b", "x", "y"]) == pytest.approx([0.5, 0.5, 0.5])
    p, r, f = precision_recall_f1(gold, ["a", "b", "x", ABSTAIN])  # 2 right of 3 answered
    assert (p, r) == pytest.approx((2 / 3, 2 / 4)) and f == pytest.approx(2 * p * r / (p + r))
    est = bootstrap_ci(gold * 50, ["a", "b", "x", ABSTAIN] * 50, "f1", n_boot=300)
    assert est.value == pytest.approx(f) and est.ci_low <= f <= est.ci_high


def test_centre_of_gravity_on_a_hand_example():
    # Δ = (.2, .2, 0) at layers 1, 2, 3  ->  (1*.2 + 2*.2 + 3*0) / .4 = 1.5
    assert centre_of_gravity([0.5, 0.7, 0.9, 0.9]) == pytest.approx(1.5)
    # A dip is ignored by the running best (Tenney's cumulative scores never decrease):
    # best-so-far .5 .7 .9 .9 .95 -> Δ .2 .2 0 .05 at layers 1..4 -> (.2 + .4 + .2) / .45
    assert centre_of_gravity([0.5, 0.7, 0.9, 0.8, 0.95]) == pytest.approx(0.8 / 0.45)
    # Raw single-layer differences: Δ .2 .2 -.1 .15 -> (.2 + .4 - .3 + .6) / .45 = 2.0
    assert centre_of_gravity([0.5, 0.7, 0.9, 0.8, 0.95], cumulative=False) == pytest.approx(2.0)
    # Explicit layer numbers (a subset of layers), and the flat case.
    assert centre_of_gravity([0.5, 0.9], layers=[0, 6]) == pytest.approx(6.0)
    assert np.isnan(centre_of_gravity([0.7, 0.7, 0.6]))
    assert expected_layer([0.25, 0.25, 0.5]) == pytest.approx(1.25)


# -- WSD ----------------------------------------------------------------------------------


def test_wsd_1nn_to_sense_centroids_with_first_sense_backoff():
    X = np.array([[1, 0], [0.9, 0.1], [0, 1], [0.1, 1], [1, 1]], dtype=np.float32)
    senses = [
        "bank%1:14:00::",
        "bank%1:14:00::",
        "bank%1:17:01::",
        "bank%1:17:01::",
        "run%2:38:00::",
    ]
    assert lemma_key("bank%1:17:01::") == "bank%n" and lemma_key("big%5:00:00:large:00") == "big%a"
    backoff = {"river%n": "river%1:17:00::"}.get
    clf = NearestSenseClassifier(backoff=backoff).fit(X, senses)
    test = np.array([[0.8, 0.3], [0.2, 0.9], [5, 0.1], [1, 0], [0, 1]], dtype=np.float32)
    lemmas = ["bank%n", "bank%n", "run%v", "river%n", "zebra%n"]
    pred, source = clf.predict_with_source(test, lemmas)
    assert list(pred) == [
        "bank%1:14:00::",  # nearer the money-bank centroid (cosine)
        "bank%1:17:01::",  # nearer the river-bank centroid
        "run%2:38:00::",  # only one sense seen for run%v
        "river%1:17:00::",  # unseen lemma: WordNet first sense
        ABSTAIN,  # unseen and no backoff sense: no answer
    ]
    assert list(source) == ["nn", "nn", "nn", "backoff", "none"]
    gold = [
        "bank%1:14:00::",
        "bank%1:17:01::",
        "run%2:38:00::",
        "river%1:17:00::",
        "zebra%1:05:00::",
    ]
    assert clf.score(test, gold, lemmas) == pytest.approx(2 * 1.0 * 0.8 / 1.8)  # P 1, R .8
    mfs = MostFrequentSense(backoff).fit(senses).predict(["bank%n", "river%n", "zebra%n"])
    assert list(mfs) == ["bank%1:14:00::", "river%1:17:00::", ABSTAIN]


def test_wordnet_first_sense_backoff_uses_the_data_folder(data_dir):
    from probing.probes import first_sense_backoff

    backoff = first_sense_backoff()
    assert backoff("bank%n") == "bank%1:17:01::"  # WordNet's sense 1 of the noun bank
    assert backoff("notaword%n") is None


# -- estimators ---------------------------------------------------------------------------


def _blobs(n=600, dim=8, k=3, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, size=n)
    centres = rng.normal(0, 3, size=(k, dim))
    return (centres[y] + rng.normal(0, 1, size=(n, dim))).astype(np.float32), y.astype(str)


def test_linear_probe_is_a_sklearn_estimator_and_chooses_c_on_dev():
    X, y = _blobs(n=1200)
    X, Xd, y, yd = X[:600], X[600:], y[:600], y[600:]
    probe = LinearProbe(Cs=(0.001, 1.0), max_train_words=400).fit(X, y, Xd, yd)
    assert probe.n_train_ == 400 and set(probe.dev_scores_) == {0.001, 1.0}
    best_c = max(probe.dev_scores_, key=probe.dev_scores_.get)
    assert best_c == probe.C_
    assert probe.score(Xd, yd) > 0.9
    assert probe.predict_proba(Xd).shape == (len(yd), 3)
    assert clone(probe).get_params()["Cs"] == (0.001, 1.0)
    fixed = LinearProbe(C=0.5).fit(X, y)  # no search, no dev needed
    assert fixed.C_ == 0.5 and fixed.dev_scores_ == {}


def test_scalar_mix_weights_sum_to_one_and_find_the_informative_layer():
    X, y = _blobs(n=800, dim=16, k=4)
    rng = np.random.default_rng(5)
    noise = [rng.normal(size=X.shape).astype(np.float32) for _ in range(3)]
    layers = np.stack([noise[0], X, noise[1], noise[2]])  # (4, n, 16): only layer 1 informs
    probe = ScalarMixProbe(epochs=10, random_state=0).fit(layers, y, layers=[0, 1, 2, 3])
    assert probe.weights_.shape == (4,)
    assert probe.weights_.sum() == pytest.approx(1.0, abs=1e-6)
    assert int(np.argmax(probe.weights_)) == 1
    assert probe.score(layers, y) > 0.9


# -- end to end on real data --------------------------------------------------------------


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CONTEXTLENS_CACHE_DIR", str(tmp_path))
    return tmp_path


def test_cumulative_mixes_on_one_standardised_sample_equal_mixes_on_their_own(minilm, cache):
    # The sweep standardises the mixes' sample once and gives each cumulative mix its first
    # k layers; that must be the very mix a probe standardising its own input trains.
    from probing.features import extract_features
    from probing.probes.mix import standardise_layers

    tr = extract_features(minilm, "ud-ewt", "train", "upos", max_sentences=60)
    dv = extract_features(minilm, "ud-ewt", "dev", "upos", max_sentences=30)
    X, Xd = tr.layers, dv.layers
    Xs, (mean, std) = standardise_layers(X)
    assert Xs.dtype == np.float32 and Xs.shape == X.shape
    for k in (2, 7):
        own = ScalarMixProbe(epochs=2, max_train_words=None).fit(
            X[:k], tr.labels, Xd[:k], dv.labels
        )
        shared = ScalarMixProbe(epochs=2, max_train_words=None).fit(
            Xs[:k], tr.labels, Xd[:k], dv.labels, standardised=(mean[:k], std[:k])
        )
        assert np.array_equal(own.weights_, shared.weights_) and own.gamma_ == shared.gamma_
        assert np.array_equal(own.predict_proba(Xd[:k]), shared.predict_proba(Xd[:k]))
        # The sweep's way (no float32 copy of the sample): raw X, shared statistics.
        raw = ScalarMixProbe(epochs=2, max_train_words=None).fit(
            X[:k], tr.labels, Xd[:k], dv.labels, stats=(mean[:k], std[:k])
        )
        assert np.array_equal(own.weights_, raw.weights_) and own.gamma_ == raw.gamma_
        assert np.array_equal(own.predict_proba(Xd[:k]), raw.predict_proba(Xd[:k]))
    with pytest.raises(ValueError, match="max_train_words"):
        ScalarMixProbe(max_train_words=10).fit(Xs, tr.labels, standardised=(mean, std))
    with pytest.raises(ValueError, match="max_train_words"):
        ScalarMixProbe(max_train_words=10).fit(X, tr.labels, stats=(mean, std))


def test_real_upos_probe_beats_the_majority_baseline(minilm, cache):
    seen = []
    res = probe_layers(
        minilm,
        "pos",
        "ud-ewt",
        layers=[0, 2],
        max_train_sentences=300,
        max_dev_sentences=80,
        max_test_sentences=150,
        Cs=(0.1,),
        n_boot=200,
        progress=lambda stage, d, t: seen.append((stage, d, t)),
    )
    t = res.table
    acc = res.layer_scores("accuracy").set_index("layer")
    majority = t[(t.probe == "majority") & (t.metric == "accuracy")]["value"].item()
    assert majority < 0.25
    assert acc.loc[2, "value"] > majority + 0.5  # a contextual middle layer tags well
    assert acc.loc[2, "value"] > 0.85
    # Selectivity is task minus control accuracy, both on the same (test) words.
    np.testing.assert_allclose(acc["selectivity"], acc["value"] - acc["control"])
    assert (acc["control"] < acc["value"]).all() and (acc["n"] == res.meta["n_test_words"]).all()
    assert set(t.probe) == {
        "linear",
        "majority",
        "word_type",
        "static",
        "scalar_mix",
        "best_layer",
        "cog_running_best",
        "cumulative_mix",
        "cog_cumulative_mix",
    }
    assert sum(res.scalar_mix["weights"]) == pytest.approx(1.0)
    # Each cumulative mix against its best single layer, paired (issue 27).
    checks = res.meta["mix_vs_best_member"]
    assert [c["layers"] for c in checks] == [[0], [0, 2]]
    assert all(c["ci_low"] <= c["diff"] <= c["ci_high"] for c in checks)
    assert res.comparisons["rows"] and res.sentence_counts["layer 2"].counts.shape[0] == 1
    assert res.meta["n_test_sentences"] == 150 and res.meta["layers"] == [0, 2]
    assert seen[-1][0] == "fit" and seen[-1][1] == seen[-1][2]  # progress reaches its total
    assert {s[0] for s in seen} == {"extract train", "extract dev", "extract test", "fit"}


@pytest.mark.slow
def test_real_scalar_mixes_train_on_the_single_layers_words_per_seed(minilm, cache, monkeypatch):
    """Issue 27: each seed's mixes see exactly the training words of that seed's single-layer
    probes (before: the first seed's words only, capped at 50,000), and each mix is checked
    against its best member with the seeds folded in."""
    from probing.features import extract_features

    fitted = []
    real_fit = ScalarMixProbe.fit

    def spy(
        self: ScalarMixProbe,
        X: np.ndarray,
        y: Sequence,
        *args: Any,  # Any: passed on to ScalarMixProbe.fit as given
        **kwargs: Any,
    ) -> ScalarMixProbe:
        fitted.append((self.random_state, X.shape[0], np.asarray(y).copy()))
        return real_fit(self, X, y, *args, **kwargs)

    monkeypatch.setattr(ScalarMixProbe, "fit", spy)
    res = probe_layers(
        minilm,
        "pos",
        "ud-ewt",
        layers=[0, 2],
        max_train_sentences=300,
        max_train_words=2000,
        max_dev_sentences=60,
        max_test_sentences=100,
        Cs=(0.1,),
        n_boot=200,
        seeds=2,
        control=False,
    )
    train = extract_features(minilm, "ud-ewt", "train", label="upos", max_sentences=300)
    assert train.n_words > 2000  # each seed draws its own 2,000 words
    assert sorted((s, k) for s, k, _ in fitted) == [(0, 1), (0, 2), (1, 1), (1, 2)]
    for s, _, y in fitted:
        assert np.array_equal(y, train.subsample(2000, seed=s).labels)
    assert res.scalar_mix["train_words"] == res.meta["n_train_words"] == 2000
    assert sorted(res.scalar_mix["weights_by_seed"]) == ["0", "1"]
    t = res.table
    assert (t[t.probe.isin(["scalar_mix", "cumulative_mix"])]["seeds"] == 2).all()
    checks = res.meta["mix_vs_best_member"]
    assert [c["layers"] for c in checks] == [[0], [0, 2]]
    assert all(c["ci_low"] <= c["diff"] <= c["ci_high"] for c in checks)
    assert res.sentence_counts["scalar_mix"].seeds == (0, 1)


def test_real_wsd_run_reports_f1_next_to_the_first_sense_baseline(minilm, cache):
    res = probe_layers(
        minilm,
        "wsd",
        "semcor",
        layers=[3],
        max_train_sentences=120,
        max_test_sentences=30,
        max_dev_sentences=30,
        n_boot=100,
    )
    t = res.table
    assert {
        "1nn",
        "first_sense",
        "semcor_mfs",
        "semcor_mfs_train_only",
        "static_1nn",
        "best_layer",
    } <= set(t.probe)
    # Subsets: polysemous lemmas, seen lemmas (1-NN answers) and back-off items, paired.
    assert {"f1_polysemous", "f1_seen", "f1_backoff", "accuracy_seen"} <= set(t.metric)
    rows = t[t.probe == "1nn"].set_index("metric")
    n = rows["n"]
    assert n["f1_seen"] + n["f1_backoff"] == n["f1"] and n["f1_polysemous"] <= n["f1"]
    assert res.meta["best_layer"]["selected_on"] == "dev"
    f1 = t[(t.probe == "1nn") & (t.metric == "f1")]["value"].item()
    first = t[(t.probe == "first_sense") & (t.metric == "f1")]["value"].item()
    assert 0.2 < f1 <= 1 and 0.2 < first <= 1
    assert res.meta["n_test_instances"] > 50 and 0 < res.meta["test_seen_lemma_rate"] < 1
    # The stored per-sentence counts of a cell scored by F1, precision and recall are
    # labelled F1 (the headline), not by the last metric scored; with abstentions (unseen
    # polysemous lemmas) recall is below F1, so the label changes what the counts score.
    recall = t[(t.probe == "1nn") & (t.metric == "recall")]["value"].item()
    assert recall < f1
    for cell, probe in (("layer 3", "1nn"), ("semcor_mfs", "semcor_mfs")):
        counts = res.sentence_counts[cell]
        value = t[(t.probe == probe) & (t.metric == "f1")]["value"].item()
        assert counts.kind == "f1" and counts.points[0] == pytest.approx(value)


def test_an_elmo_encoder_runs_through_the_same_pipeline(data_dir, cache):
    """ELMo follows the encoder protocol: AllenNLP's tiny test ELMo, 3 layers of 32 dims."""
    from probing.encoders.elmo import load_elmo

    fixture = data_dir / "allennlp-elmo-fixture"
    elmo = load_elmo((fixture / "options.json", fixture / "lm_weights.hdf5"), name="elmo-fixture")
    res = probe_layers(
        elmo,
        "pos",
        "ud-ewt",
        max_train_sentences=60,
        max_dev_sentences=20,
        max_test_sentences=30,
        Cs=(0.1,),
        n_boot=50,
    )
    assert res.meta["layers"] == [0, 1, 2] and len(res.scalar_mix["weights"]) == 3
    acc = res.layer_scores()
    assert acc["value"].between(0, 1).all() and acc["selectivity"].notna().all()
