"""Units that matter: both rankings find a planted neuron, the top-k probe beats random k on
it, k above the dimension is refused, and mean-ablating neurons changes the MLM loss while
ablating none leaves it bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

from probing.errors import RankTooLargeError
from probing.interventions.neurons import (
    ablation_mlm_loss,
    check_k,
    elastic_net_ranking,
    probeless_ranking,
    top_vs_random,
    weight_mass_ordering,
)
from probing.interventions.neurons_compare import probe_table
from probing.probes.compare import Engine

PLANTED = 17


def planted(n: int = 600, dim: int = 40, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Gaussian noise with the label (3 classes) written into neuron PLANTED only."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)
    X = rng.normal(size=(n, dim))
    X[:, PLANTED] += 3.0 * y
    return X, y


def test_both_rankings_find_the_planted_neuron():
    X, y = planted()
    scores, order = probeless_ranking(X, y)
    assert order[0] == PLANTED and scores[PLANTED] > 5 * np.median(scores)
    weights, order_en = elastic_net_ranking(X, y)
    assert order_en[0] == PLANTED
    assert sorted(order_en.tolist()) == list(range(X.shape[1]))  # every neuron once


def test_weight_mass_ordering_follows_the_mass():
    w = np.array([[0.0, 5.0, 1.0, 0.1], [3.0, 0.0, 0.0, 0.2]])
    assert weight_mass_ordering(w, stride=10).tolist()[:3] == [1, 0, 2]


def test_top_k_beats_random_k_and_k_is_checked():
    X, y = planted()
    _, order = probeless_ranking(X[:400], y[:400])
    (p,) = top_vs_random(X[:400], y[:400], X[400:], {"probeless": order}, [1], n_random=5)
    top = (p.top["probeless"] == y[400:]).mean()
    per_draw = (p.random == y[400:]).mean(axis=1)
    assert p.random.shape == (5, 200)
    assert top > 0.8 and top > per_draw.max()
    with pytest.raises(RankTooLargeError, match="k = 41 .* has 40"):
        top_vs_random(X[:400], y[:400], X[400:], {"probeless": order}, [41])
    with pytest.raises(RankTooLargeError):
        check_k(0, 40)


def test_the_engine_calls_the_planted_neuron_and_not_a_random_one():
    """Top 1 on the planted neuron is called above random 1; a "ranking" that is itself a
    random draw is not called (its sign differs between draws, or its interval holds 0)."""
    X, y = planted(n=800)
    _, order = probeless_ranking(X[:400], y[:400])
    decoy = [i for i in range(40) if i != PLANTED]  # a ranking that never holds the label
    preds = top_vs_random(
        X[:400], y[:400], X[400:], {"probeless": order, "decoy": decoy}, [1], n_random=8
    )
    sentence = np.arange(400) // 4  # 100 "sentences" of 4 items
    table = probe_table(preds, y[400:], sentence, 100, Engine(n_boot=500))
    rows = {(r["a"], r["b"]): r for r in table["comparisons"]["rows"]}
    assert rows[("probeless top 1", "random 1")]["called"]
    assert rows[("probeless top 1", "random 1")]["diff"] > 0.3
    assert not rows[("decoy top 1", "random 1")]["called"]
    assert all(r["p_holm"] >= r["p"] for r in rows.values())  # one Holm family
    (row,) = table["rows"]
    assert row["probeless_accuracy_lo"] <= row["probeless_accuracy"] <= row["probeless_accuracy_hi"]
    assert row["random_min"] <= row["random_accuracy"] <= row["random_max"]


def test_mean_ablation_changes_the_mlm_loss_and_none_changes_nothing():
    from probing.models.registry import load_encoder

    enc = load_encoder("minilm-l6-mlm")
    sents = [["the", "cat", "sat", "on", "the", "mat", "and", "the", "dog", "ran", "home"]] * 2
    means = np.zeros(enc.info.dim, np.float32)
    out = ablation_mlm_loss(enc, sents, 3, {"empty": [], "top": list(range(64))}, means)
    assert out["empty"] == out["none"]  # nothing replaced: bit for bit
    assert out["top"] != out["none"]
