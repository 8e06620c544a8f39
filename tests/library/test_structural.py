"""Structural probes (Hewitt & Manning 2019), their metrics, and dependency edge probes."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from probing.probes.edge import arc_features, arc_rows, base_relation
from probing.probes.structural import (
    SentenceScores,
    StructuralProbe,
    bootstrap_scores,
    gold_edges,
    mst_edges,
    right_branching,
    score_sentences,
    tree_depths,
    tree_distances,
)

# -- trees and the spanning tree ----------------------------------------------------------


def test_tree_distances_and_depths_of_a_known_tree():
    # "the dog saw a cat": the->dog, dog->saw (root), a->cat, cat->saw
    heads = [2, 3, 0, 5, 3]
    d = tree_distances(heads)
    assert d[0, 1] == 1 and d[0, 2] == 2 and d[0, 4] == 3 and d[0, 3] == 4
    assert np.array_equal(d, d.T) and np.all(np.diag(d) == 0)
    assert tree_depths(heads).tolist() == [2, 1, 0, 2, 1]
    assert gold_edges(heads) == {(0, 1), (1, 2), (3, 4), (2, 4)}
    # Leaving out word 3 ("a") drops its one edge only.
    assert gold_edges(heads, np.array([1, 1, 1, 0, 1], bool)) == {(0, 1), (1, 2), (2, 4)}


def test_mst_on_a_known_distance_matrix():
    d = np.array(
        [
            [0.0, 1.0, 4.0, 5.0],
            [1.0, 0.0, 2.0, 6.0],
            [4.0, 2.0, 0.0, 0.0],  # a zero distance is still an edge (scipy reads 0 as none)
            [5.0, 6.0, 0.0, 0.0],
        ]
    )
    assert mst_edges(d) == {(0, 1), (1, 2), (2, 3)}
    # Without word 2 the tree must pass through the cheapest remaining edges.
    assert mst_edges(d, np.array([1, 1, 0, 1], bool)) == {(0, 1), (0, 3)}
    assert mst_edges(d, np.array([1, 0, 0, 0], bool)) == set()


def test_true_distances_score_perfectly_and_right_branching_scores_a_chain():
    rng = np.random.default_rng(0)
    heads = [_random_tree(n, rng) for n in range(5, 30)]
    punct = [np.zeros(len(h), bool) for h in heads]
    sc = score_sentences("distance", [tree_distances(h) for h in heads], heads, punct)
    assert sc.headline() == 1.0 and sc.spearman() == pytest.approx(1.0)
    dp = score_sentences("depth", [tree_depths(h) for h in heads], heads, punct)
    assert dp.headline() == 1.0 and dp.spearman() == pytest.approx(1.0)
    chain = [[0] + list(range(1, n)) for n in range(5, 12)]  # word i+1's head is word i
    pc = [np.zeros(len(h), bool) for h in chain]
    rb = score_sentences(
        "distance", [right_branching("distance", len(h)) for h in chain], chain, pc
    )
    assert rb.headline() == 1.0


def test_punctuation_is_left_out_of_uuas_and_root_accuracy():
    heads = [2, 0, 2, 2]  # words 0, 2 depend on the root word 1; word 3 is "." on word 1
    punct = [np.array([0, 0, 0, 1], bool)]
    wrong_on_punct = tree_distances(heads)
    wrong_on_punct[3, :] = wrong_on_punct[:, 3] = 0.5  # would attach everything to "."
    wrong_on_punct[3, 3] = 0
    sc = score_sentences("distance", [wrong_on_punct], [heads], punct)
    assert (sc.correct[0], sc.total[0]) == (2, 2)
    depths = np.array([1.0, 0.5, 1.0, 0.0])  # "." is shallowest, the root word next
    assert score_sentences("depth", [depths], [heads], punct).headline() == 1.0


def test_spearman_is_averaged_per_length_then_over_lengths_5_to_50():
    sc = SentenceScores(
        correct=np.zeros(4),
        total=np.ones(4),
        rho_sum=np.array([1.0, 0.0, 3.0, 5.0]),
        rho_count=np.array([1.0, 1.0, 6.0, 5.0]),
        length=np.array([5, 5, 6, 4]),  # length 4 is outside 5-50
    )
    # length 5: (1 + 0) / 2; length 6: 3 / 6; mean of the two lengths
    assert sc.spearman() == pytest.approx(0.5)
    est, draws = bootstrap_scores([sc], n_boot=50, seed=0)
    assert est[0]["spearman"].value == pytest.approx(0.5) and draws.shape == (50, 1)


# -- the probe on synthetic vectors -------------------------------------------------------


def _random_tree(n: int, rng: np.random.Generator) -> list[int]:
    """1-based heads of a random tree over n words (a random word is the root)."""
    order = rng.permutation(n)
    heads = [0] * n
    for k in range(1, n):
        heads[order[k]] = int(order[rng.integers(0, k)]) + 1
    return heads


def _tree_vectors(heads: list[int], dim: int) -> np.ndarray:
    """Vectors whose squared distances are tree distances and squared norms depths:
    each word is the sum of one unit vector per edge on its path to the root."""
    n = len(heads)
    paths = np.zeros((n, dim))
    for i in range(n):
        j = i
        while heads[j] != 0:
            paths[i, j] = 1.0  # the edge from j to its head, named by j
            j = heads[j] - 1
    return paths


@pytest.mark.parametrize("kind", ["distance", "depth"])
def test_probe_recovers_trees_from_vectors_of_true_tree_positions(kind):
    rng = np.random.default_rng(1)
    dim, noise_dims = 24, 16
    # The tree coordinates, rotated into a bigger space with nuisance dimensions.
    rot = np.linalg.qr(rng.normal(size=(dim + noise_dims, dim + noise_dims)))[0]

    def sentences(k: int) -> tuple[list, list]:
        heads = [_random_tree(int(rng.integers(6, dim)), rng) for _ in range(k)]
        X = []
        for h in heads:
            v = np.hstack([_tree_vectors(h, dim), 0.3 * rng.normal(size=(len(h), noise_dims))])
            X.append((v @ rot).astype(np.float32))
        return X, heads

    (X_tr, h_tr), (X_dev, h_dev), (X_te, h_te) = sentences(300), sentences(40), sentences(60)
    fn = tree_distances if kind == "distance" else tree_depths
    probe = StructuralProbe(kind, rank=dim, lr=1e-2, max_epochs=60, random_state=0)
    probe.fit(X_tr, [fn(h) for h in h_tr], X_dev, [fn(h) for h in h_dev])
    punct = [np.zeros(len(h), bool) for h in h_te]
    sc = score_sentences(kind, [probe.predict(x) for x in X_te], h_te, punct)
    assert sc.headline() > 0.95
    # Gold depths and distances are full of ties that continuous predictions break.
    assert sc.spearman() > 0.9
    assert probe.B_.shape == (dim, dim + noise_dims)


# -- edge probes on real EWT sentences ----------------------------------------------------


@pytest.fixture(scope="module")
def ewt_arcs(minilm):
    from probing.datasets import read_sentences
    from probing.features import features_of_sentences

    sents = list(itertools.islice(read_sentences("ud-ewt", "dev"), 12))
    feats = features_of_sentences(minilm, sents, "deprel", layers=[0, 3])
    return sents, feats, arc_features(feats)


def test_edge_probe_instances_are_the_gold_arcs(ewt_arcs):
    sents, feats, arcs = ewt_arcs
    expected = [
        (s.words[int(h) - 1], w, base_relation(r))
        for s in sents
        for w, h, r in zip(s.words, s.labels["head"], s.labels["deprel"], strict=True)
        if h != "0"
    ]
    got = list(zip(arcs.fields["head_word"], arcs.words, arcs.labels, strict=True))
    assert got == expected
    assert "root" not in set(arcs.labels) and all(":" not in lab for lab in arcs.labels)
    # Row i of a layer is [the head's vector; the dependent's vector] of arc i.
    dep, head = arc_rows(feats)
    X = arcs.layer(3)
    dim = feats.dim
    assert X.shape == (len(expected), 2 * dim)
    assert np.array_equal(X[:, :dim], feats.layer(3)[head])
    assert np.array_equal(X[:, dim:], feats.layer(3)[dep])
    sub = arcs.subsample(10, seed=0)
    idx = np.sort(np.random.default_rng(0).choice(arcs.n_words, size=10, replace=False))
    assert np.array_equal(sub.layer(3), X[idx]) and list(sub.labels) == list(arcs.labels[idx])
    assert arcs.layers.shape == (2, arcs.n_words, 2 * dim)


def test_deprel_probe_sweep_runs_with_control_task(ewt_arcs):
    from probing.probes.run import probe_features

    sents, feats, _ = ewt_arcs
    res = probe_features(
        {"train": feats, "test": feats},
        "deprel",
        model="minilm-l6",
        dataset="ud-ewt",
        n_boot=20,
        scalar_mix=False,
    )
    acc = res.layer_scores()
    assert list(acc["layer"]) == [0, 3] and acc["control"].notna().all()
    # Trained and tested on the same arcs: a linear probe on 768 dims fits them well.
    assert acc["value"].max() > 0.9
    assert res.meta["n_labels"] == len(
        {base_relation(r) for s in sents for r in s.labels["deprel"] if r != "root"}
    )
