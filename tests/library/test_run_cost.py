"""The Probing page's time estimate: measured costs, the feature cache, a run's own time."""

from __future__ import annotations

from typing import NoReturn

import pytest

from probing.features import extract_features, features_cached, split_size
from probing.probes.cost import COSTS_FILE, RunCost, estimate_seconds, load_costs
from probing.probes.settings import ProbeSettings


def test_two_runs_give_a_fixed_part_and_a_part_per_sentence():
    small = {
        "train": 20,
        "eval": 60,
        "layers": 7,
        "train_words": 300,
        "extract_s": 5.0,
        "fit_s": 4.0,
    }
    large = {
        "train": 400,
        "eval": 300,
        "layers": 7,
        "train_words": 6000,
        "extract_s": 9.0,
        "fit_s": 20.0,
    }
    cost = RunCost.from_runs([small, large])
    # Two runs: both are reproduced exactly by the fitted lines.
    for run in (small, large):
        ext, fit = cost.seconds(run["train"], run["eval"], 7, max_train_words=None)
        assert ext == pytest.approx(run["extract_s"]) and fit == pytest.approx(run["fit_s"])
    # Probes fit at most the word cap (15 words per sentence: 20,000 words = 1,333 sentences),
    # whatever was encoded; fewer layers fit less; nothing to encode costs nothing.
    capped = cost.seconds(12_000, 300, 7, max_train_words=20_000)[1]
    assert capped == pytest.approx(cost.seconds(20_000 / 15, 300, 7, max_train_words=None)[1])
    assert cost.seconds(400, 300, 2)[1] < cost.seconds(400, 300, 7)[1]
    assert cost.seconds(400, 300, 7, to_encode=0)[0] == 0.0
    with pytest.raises(ValueError, match="two sizes"):
        RunCost.from_runs([small, small])
    # Other tasks' runs on the same data steady extraction only: a third point off the line
    # moves the extraction fit, never the fitting one.
    other = {**large, "train": 200, "extract_s": 6.0, "fit_s": 99.0}  # under the line
    pooled = RunCost.from_runs([small, large], [other])
    assert (pooled.fit_fixed, pooled.fit_per_sentence) == (cost.fit_fixed, cost.fit_per_sentence)
    assert pooled.extract_per_sentence < cost.extract_per_sentence
    # Times never come out negative from noisy points (a falling line is held flat).
    flat = RunCost.from_runs([{**small, "extract_s": 9.0}, {**large, "extract_s": 5.0}])
    assert flat.extract_per_sentence == 0.0 and flat.extract_fixed == pytest.approx(7.0)


def test_the_shipped_costs_cover_the_embedded_models_on_the_pages_tasks():
    costs = load_costs()
    assert COSTS_FILE.is_file()
    for model in ("minilm-l6", "elmo-mini"):
        for task in ("pos", "xpos", "ptb-pos", "supersense", "wsd"):
            cost = costs[(model, task)]
            assert cost.extract_fixed >= 0 and cost.fit_fixed > 0
            assert cost.extract_per_sentence > 0
            # (WSD fits nothing per training sentence: its centroids are sums)
            assert cost.fit_per_sentence + cost.fit_per_eval_sentence > 0
            # the tagging tasks train scalar mixes; WSD none
            assert (cost.mix_per_dev_word > 0) == (task != "wsd")
    assert load_costs("/nonexistent/run_costs.json") == {}


def test_extraction_is_counted_only_for_splits_not_in_the_cache(minilm, tmp_path, monkeypatch):
    monkeypatch.setenv("CONTEXTLENS_CACHE_DIR", str(tmp_path))
    cfg = ProbeSettings(
        model="minilm-l6",
        task="pos",
        dataset="ud-ewt",
        layers=(0, 3),
        max_train_sentences=20,
        max_dev_sentences=15,
        max_test_sentences=15,
    )
    before = estimate_seconds(minilm, cfg)
    assert before is not None and before[0] > 0 and before[1] > 0
    assert not features_cached(minilm, "ud-ewt", "dev", max_sentences=15)
    for split, n in (("train", 20), ("dev", 15), ("test", 15)):
        extract_features(minilm, "ud-ewt", split, "upos", max_sentences=n)
        assert features_cached(minilm, "ud-ewt", split, max_sentences=n)
    after = estimate_seconds(minilm, cfg)
    assert after == (0.0, before[1])
    # A whole cached split holds every sample of it.
    extract_features(minilm, "ud-ewt", "dev", "upos")
    assert features_cached(minilm, "ud-ewt", "dev", max_sentences=7)
    assert split_size("ud-ewt", "dev") == 2001
    # A model or task without measured costs has no estimate.
    assert estimate_seconds(minilm, cfg, costs={}) is None


def test_split_sizes_are_remembered_beside_the_cache(tmp_path, monkeypatch):
    import probing.features as features

    monkeypatch.setenv("CONTEXTLENS_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(features, "_split_sizes", {})
    assert split_size("ud-ewt", "test") == 2077  # read once…
    monkeypatch.setattr(features, "_split_sizes", {})  # …a new process…

    def unread(*args: object, **kwargs: object) -> NoReturn:
        raise AssertionError("the split was read again")

    monkeypatch.setattr(features, "read_sentences", unread)
    assert split_size("ud-ewt", "test") == 2077  # …finds it in the file


# -- the scalar mixes (issue 46: a run estimated at 34 s took 86 s) ----------------------------


def test_mix_work_follows_the_minimum_steps():
    from probing.probes.cost import mix_work
    from probing.probes.mix import ScalarMixProbe

    mix = ScalarMixProbe()
    # 1,768 words: 7 steps an epoch, so 286 epochs to reach 2,000 steps; each scores dev
    train, dev, steps, all_epochs = mix_work(1768, 25_000, 7)
    epochs = -(-mix.min_steps // 7)
    assert epochs == 286
    k_sum = 7 * 8 // 2  # the cumulative mixes over layers 0..0, 0..1, …, 0..6
    assert (train, dev) == (epochs * 1768 * k_sum, epochs * 25_000 * k_sum)
    assert (steps, all_epochs) == (epochs * 7 * 7, epochs * 7)
    # four times the words, fewer epochs: less dev scoring, about the same training work
    train4, dev4, _, _ = mix_work(4 * 1768, 25_000, 7)
    assert dev4 < dev / 3 and 0.9 < train4 / train < 1.2
    # large samples: at least ``epochs`` epochs
    assert mix_work(200_000, 0, 1)[2] == mix.epochs * -(-200_000 // mix.batch_size)
    assert mix_work(200_000, 0, 1)[3] == mix.epochs
    assert mix_work(1768, 25_000, 7, cumulative=False)[1] == epochs * 25_000 * 7


def test_mix_costs_are_recovered_from_timed_fits():
    from probing.probes.cost import fit_mix_costs, mix_work

    truth = (2e-8, 5e-9, 1e-4, 3e-4)
    fits = []
    for n, m, k in [(385, 500, 1), (385, 500, 7), (7099, 2500, 3), (7099, 2500, 7), (1768, 0, 4)]:
        work = mix_work(n, m, k, cumulative=False)
        s = sum(rate * w for rate, w in zip(truth, work, strict=True))
        fits.append({"k": k, "n": n, "m": m, "epochs": work[3], "steps": work[2], "s": s})
    assert fit_mix_costs(fits) == pytest.approx(truth, rel=1e-6)


def test_the_estimate_counts_the_mixes_of_a_small_sample_against_a_large_dev_split():
    """With all of UD-EWT dev (the page's default), 110 training sentences cost more mix
    epochs than 400: the estimate follows (a line in the sentences could not)."""
    costs = load_costs()
    cost = costs[("minilm-l6", "pos")]
    assert cost.mix_per_dev_word > 0 and cost.words_per_dev_sentence > 5
    small = cost.mix_seconds(110, 2001, 7, solver="adam")
    assert small > cost.mix_seconds(400, 2001, 7, solver="adam")
    assert small > 5 * cost.mix_seconds(110, 30, 7, solver="adam")  # all of dev vs 30
    # An L-BFGS mix (issue 41) scores dev once: the small sample is the cheap one.
    assert cost.mix_seconds(110, 2001, 7, solver="lbfgs") < small / 5
    assert cost.mix_seconds(110, 2001, 7) == cost.mix_seconds(110, 2001, 7, solver="adam")


def test_the_estimate_is_within_half_again_of_a_measured_run(minilm, tmp_path, monkeypatch):
    """A real run through the page's path, CPU seconds (what the costs are measured in; wall
    time on a shared machine grows with its load): within x1.5 of the estimate either way."""
    import os
    import time

    from probing.probes.run import probe_layers

    monkeypatch.setenv("CONTEXTLENS_CACHE_DIR", str(tmp_path))
    settings = ProbeSettings(
        model="minilm-l6",
        task="pos",
        layers=(0, 3, 6),
        max_train_sentences=110,
        max_dev_sentences=100,
        max_test_sentences=100,
    )
    extract, fit = estimate_seconds(minilm, settings)
    c0 = time.process_time()
    probe_layers(minilm, settings)
    took = time.process_time() - c0
    ratio = took / (extract + fit)
    assert 1 / 1.5 <= ratio <= 1.5, (
        f"estimated {extract:.1f} + {fit:.1f} s, took {took:.1f} CPU s "
        f"(load {os.getloadavg()[0]:.1f})"
    )
