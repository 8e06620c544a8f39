"""Ethayarajh (2019) metrics: explicit loops on tiny arrays, then minilm-l6 on UD-EWT."""

from __future__ import annotations

import math

import numpy as np
import pytest

from probing.analyses.contextuality import (
    CorpusVectors,
    contextuality_table,
    intra_sentence_similarity,
    max_explainable_variance,
    mean_pair_cosine,
    random_pairs,
    self_similarity,
)


def cos(a: np.ndarray, b: np.ndarray) -> float:
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def loop_self_similarity(vectors, sentence_ids) -> float:
    total, n = 0.0, 0
    for j in range(len(vectors)):
        for k in range(len(vectors)):
            if j != k and sentence_ids[j] != sentence_ids[k]:
                total += cos(vectors[j], vectors[k])
                n += 1
    return total / n


def loop_intra(vectors) -> float:
    mean = np.mean(np.asarray(vectors, np.float64), axis=0)
    return sum(cos(v, mean) for v in vectors) / len(vectors)


def loop_mev(vectors) -> float:
    s = np.linalg.svd(np.asarray(vectors, np.float64), compute_uv=False)
    return float(s[0] ** 2 / (s**2).sum())


@pytest.fixture
def tiny() -> CorpusVectors:
    """Three sentences; "bank" 3×, "the" 3× (twice in one sentence), "river"/"money" once."""
    rng = np.random.default_rng(1)
    words = ["the", "bank", "the", "river", "bank", "the", "money", "bank"]
    sids = np.array([0, 0, 0, 1, 1, 2, 2, 2])
    layers = rng.normal(size=(3, 8, 4)).astype(np.float32) + np.array([0.5, 0, 0, 0], np.float32)
    static = np.stack(
        [
            {
                "the": [1, 0, 0, 1],
                "bank": [0, 2, 1, 0],
                "river": [3, 1, 0, 0],
                "money": [0, 0, 1, 1],
            }[w]
            for w in words
        ]
    ).astype(np.float32)
    return CorpusVectors("tiny", ["emb", "l1", "l2"], words, sids, layers, static)


def test_metrics_match_explicit_loops(tiny):
    v = tiny.layers[1]
    bank = [1, 4, 7]
    the = [0, 2, 5]
    assert self_similarity(v[bank], tiny.sentence_ids[bank]) == pytest.approx(
        loop_self_similarity(v[bank], tiny.sentence_ids[bank]), abs=1e-9
    )
    # "the" twice in sentence 0: that pair is not a different context and is left out.
    assert self_similarity(v[the], tiny.sentence_ids[the]) == pytest.approx(
        loop_self_similarity(v[the], tiny.sentence_ids[the]), abs=1e-9
    )
    assert self_similarity(v[[0, 2]], [0, 0]) is not None and math.isnan(
        self_similarity(v[[0, 2]], [0, 0])
    )
    assert intra_sentence_similarity(v[:3]) == pytest.approx(loop_intra(v[:3]), abs=1e-9)
    for x in (v[bank], v):  # n < dim and n > dim
        assert max_explainable_variance(x, centred=False) == pytest.approx(loop_mev(x), abs=1e-9)
        centred = x - x.mean(axis=0)
        assert max_explainable_variance(x) == pytest.approx(loop_mev(centred), abs=1e-6)
    pairs = random_pairs(tiny.sentence_ids, 50, np.random.default_rng(0))
    assert pairs.shape == (50, 2)
    assert np.all(tiny.sentence_ids[pairs[:, 0]] != tiny.sentence_ids[pairs[:, 1]])
    assert mean_pair_cosine(v, pairs) == pytest.approx(
        np.mean([cos(v[i], v[j]) for i, j in pairs]), abs=1e-9
    )


def test_table_matches_loops_and_static_is_one(tiny):
    table = contextuality_table(
        tiny, min_count=3, n_pairs=40, seed=0, max_per_type=None, centred=False
    )
    assert table["layer"].tolist() == [-1, 0, 1, 2]
    assert table["layer_name"].tolist() == ["static", "emb", "l1", "l2"]
    groups = {"the": [0, 2, 5], "bank": [1, 4, 7]}
    for _, row in table.iterrows():
        v = tiny.static if row["layer"] < 0 else tiny.layers[int(row["layer"])]
        sid = tiny.sentence_ids
        expected_self = np.mean([loop_self_similarity(v[g], sid[g]) for g in groups.values()])
        expected_intra = np.mean([loop_intra(v[sid == s]) for s in range(3)])
        expected_mev = np.mean([loop_mev(v[g]) for g in groups.values()])
        assert row["self_similarity"] == pytest.approx(expected_self, abs=1e-6)
        assert row["intra_sentence"] == pytest.approx(expected_intra, abs=1e-6)
        assert row["mev"] == pytest.approx(expected_mev, abs=1e-6)
        for m in ("self_similarity", "intra_sentence", "mev"):
            assert row[f"{m}_adjusted"] == pytest.approx(row[m] - row[f"{m}_baseline"], abs=1e-12)
        assert row["self_similarity_baseline"] == row["intra_sentence_baseline"]
        assert row["n_types"] == 2 and row["n_sentences"] == 3
    static = table.iloc[0]
    # One vector per word type: every occurrence identical, so both are exactly 1.
    assert static["self_similarity"] == pytest.approx(1.0, abs=1e-12)
    assert static["mev"] == pytest.approx(1.0, abs=1e-12)
    again = contextuality_table(
        tiny, min_count=3, n_pairs=40, seed=0, max_per_type=None, centred=False
    )
    assert again.equals(table)  # seeded
    assert (table["mev_kind"] == "uncentred").all()
    centred = contextuality_table(tiny, min_count=3, n_pairs=40, seed=0, max_per_type=None)
    # Centred (the reference's PCA): a static space has no variance, so no MEV.
    assert (centred["mev_kind"] == "centred").all() and math.isnan(centred.iloc[0]["mev"])
    # Intervals (types / sentences resampled) bracket the means.
    for m in ("self_similarity", "intra_sentence", "mev"):
        rows = centred[centred[m].notna()]
        assert (rows[f"{m}_ci_low"] <= rows[m] + 1e-12).all()
        assert (rows[m] <= rows[f"{m}_ci_high"] + 1e-12).all()


def test_centred_mev_of_an_isotropic_cloud_is_one_over_dim():
    """Synthetic: an isotropic Gaussian cloud has no preferred direction, so the first PC
    explains ≈ 1/dim of the variance (a little more: the sample's top eigenvalue is biased
    up by about (1 + sqrt(dim/n))², here 1.045), wherever the cloud is centred."""
    rng = np.random.default_rng(0)
    dim, n = 10, 20_000
    cloud = rng.normal(size=(n, dim)) + 5.0  # far from the origin: uncentred MEV ≈ 1
    mev = max_explainable_variance(cloud)
    assert 1 / dim < mev < 1.1 / dim
    assert max_explainable_variance(cloud, centred=False) > 0.9
    line = np.outer(rng.normal(size=n), rng.normal(size=dim)) + 3.0  # one direction
    assert max_explainable_variance(line) == pytest.approx(1.0, abs=1e-9)


def test_too_few_occurrences_is_explained(tiny):
    with pytest.raises(ValueError, match="more sentences"):
        contextuality_table(tiny, min_count=10)


@pytest.mark.slow
def test_self_similarity_falls_with_depth_on_minilm(minilm):
    from probing.analyses.contextuality import encode_corpus, sample_corpus

    corpus = encode_corpus(minilm, sample_corpus("ud-ewt", "train", 150, seed=0))
    table = contextuality_table(corpus, seed=0).set_index("layer")
    selfsim = table["self_similarity"]
    adjusted = table["self_similarity_adjusted"]
    assert selfsim[-1] == pytest.approx(1.0, abs=1e-6)  # static vectors
    # Measured (docs/results_contextual.md): falls from the input layer to the top, except
    # for a small rise at layer 5 (raw, and adjusted on this 150-sentence sample).
    for values in (selfsim, adjusted):
        assert values[0] > values[1] > values[2] > values[3] > values[6]
        assert values[6] == values.loc[0:6].min()
        assert np.corrcoef(np.arange(7), values.loc[0:6].to_numpy())[0, 1] < -0.85
    # Context makes the words of one sentence more alike as depth grows.
    assert table.loc[6, "intra_sentence"] > table.loc[0, "intra_sentence"]


def test_cli_writes_csv_json_html(minilm, tmp_path):
    import argparse
    import json

    import pandas as pd

    from probing.cli import contextuality as cli_contextuality

    parser = argparse.ArgumentParser()
    cli_contextuality.add_arguments(parser)
    args = parser.parse_args(
        [
            "--model",
            "minilm-l6",
            "--dataset",
            "ud-ewt",
            "--n-sentences",
            "40",
            "--min-count",
            "3",
            "--out",
            str(tmp_path),
        ]
    )
    assert cli_contextuality.run(args) == 0
    table = pd.read_csv(tmp_path / "contextuality.csv")
    assert table["layer_name"].tolist() == [
        "static",
        "embeddings",
        *(f"layer {k}" for k in range(1, 7)),
    ]
    saved = json.loads((tmp_path / "contextuality.json").read_text())
    assert saved["settings"]["n_sentences"] == 40 and len(saved["rows"]) == 8
    assert "plotly" in (tmp_path / "contextuality.html").read_text()[:20000].lower()
