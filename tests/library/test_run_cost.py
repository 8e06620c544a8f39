"""The Probing page's time estimate: measured costs, the feature cache, a run's own time."""

from __future__ import annotations

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
            assert cost.extract_per_sentence > 0 and cost.fit_per_sentence > 0
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

    def unread(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        raise AssertionError("the split was read again")

    monkeypatch.setattr(features, "read_sentences", unread)
    assert split_size("ud-ewt", "test") == 2077  # …finds it in the file
