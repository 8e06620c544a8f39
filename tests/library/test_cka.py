"""Linear CKA with the unbiased HSIC estimator: identities, invariances, the reference
formula, the bootstrap's counts, and a real two-model run."""

from __future__ import annotations

import numpy as np
import pytest

from probing.analyses.cka import (
    bootstrap_counts,
    cka_layers,
    gram,
    hsic_weighted,
    linear_cka,
)


def reference_cka(x: np.ndarray, y: np.ndarray) -> float:
    """Kornblith et al.'s ``cka(gram_x, gram_y, debiased=True)`` (google-research
    representation_similarity), written out: unbiased centring, then a cosine."""

    def center(g: np.ndarray) -> np.ndarray:
        g = g.copy()
        n = g.shape[0]
        np.fill_diagonal(g, 0)
        means = g.sum(0) / (n - 2)
        means -= means.sum() / (2 * (n - 1))
        g -= means[:, None]
        g -= means[None, :]
        np.fill_diagonal(g, 0)
        return g

    gx, gy = center(x @ x.T), center(y @ y.T)
    return float(gx.ravel() @ gy.ravel() / (np.linalg.norm(gx) * np.linalg.norm(gy)))


@pytest.fixture
def xy():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(60, 8))
    y = x @ rng.normal(size=(8, 5)) + 0.5 * rng.normal(size=(60, 5))
    return x, y


def test_cka_of_a_representation_with_itself_is_one(xy):
    x, _ = xy
    assert linear_cka(x, x) == pytest.approx(1.0, abs=1e-12)


def test_invariant_to_orthogonal_transforms_and_isotropic_scaling(xy):
    x, y = xy
    q, _ = np.linalg.qr(np.random.default_rng(1).normal(size=(8, 8)))
    base = linear_cka(x, y)
    assert linear_cka(x @ q, y) == pytest.approx(base, abs=1e-10)
    assert linear_cka(3.7 * x, 0.2 * y) == pytest.approx(base, abs=1e-10)
    # …but not to an anisotropic scaling (so the test can tell)
    assert abs(linear_cka(x * np.arange(1, 9), y) - base) > 1e-3


def test_matches_kornblith_reference_formula(xy):
    x, y = xy
    assert linear_cka(x, y) == pytest.approx(reference_cka(x, y), abs=1e-10)
    unrelated = np.random.default_rng(5).normal(size=(60, 5))
    assert abs(linear_cka(x, unrelated)) < 0.15  # near 0 for independent data (unbiased)


def test_counts_equal_explicit_duplicates_without_self_pairs(xy):
    x, y = xy
    counts = np.zeros(60)
    counts[:20] = [2, 1, 3, 1, 1, 2, 1, 1, 1, 1, 1, 2, 1, 1, 1, 1, 1, 1, 1, 1]
    rows = np.repeat(np.arange(60), counts.astype(int))
    # Duplicated rows, with every pair of copies of one word masked like the diagonal.
    same = rows[:, None] == rows[None, :]
    k, lm = x[rows] @ x[rows].T, y[rows] @ y[rows].T
    k[same], lm[same] = 0, 0
    want = hsic_weighted(k, lm, np.ones((1, len(rows))))
    got = hsic_weighted(gram(x), gram(y), counts[None])
    np.testing.assert_allclose(got, want, rtol=1e-10)


def test_bootstrap_counts_move_sentences_together():
    sentence_of_word = np.array([0, 0, 0, 1, 1, 2])
    c = bootstrap_counts(sentence_of_word, 50, seed=3)
    assert c.shape == (50, 6)
    assert (c[:, 0] == c[:, 1]).all() and (c[:, 3] == c[:, 4]).all()
    np.testing.assert_array_equal(c[:, [0, 3, 5]].sum(1), 3)  # three sentences a draw


def test_layer_grid_with_intervals(xy):
    x, y = xy
    sentence_of_word = np.repeat(np.arange(12), 5)
    value, low, high = cka_layers([x, y], [x, y], sentence_of_word, n_boot=100)
    np.testing.assert_allclose(np.diag(value), 1.0, atol=1e-12)
    assert value[0, 1] == pytest.approx(linear_cka(x, y))
    assert value[0, 1] == value[1, 0]
    assert low[0, 1] <= value[0, 1] <= high[0, 1] and high[0, 1] - low[0, 1] > 0


def test_too_few_words_or_mismatched_rows():
    with pytest.raises(ValueError, match="same words"):
        linear_cka(np.ones((5, 2)), np.ones((6, 2)))
    with pytest.raises(ValueError, match="at least 4"):
        linear_cka(np.ones((3, 2)), np.ones((3, 2)))


def test_real_models_on_ud_ewt(minilm, data_dir):
    import probing
    from probing.analyses.cka import compare_models

    elmo = probing.load_encoder("elmo-mini")
    res = compare_models(minilm, elmo, n_words=150, n_boot=50)
    assert res.value.shape == (
        minilm.info.n_contextual_layers + 1,
        elmo.info.n_contextual_layers + 1,
    )
    assert res.n_words >= 150
    assert (res.low <= res.value + 1e-12).all() and (res.value <= res.high + 1e-12).all()
    within = compare_models(minilm, None, n_words=150, n_boot=20)
    np.testing.assert_allclose(np.diag(within.value), 1.0, atol=1e-9)
    # neighbouring layers of one model are more alike than the first and last
    assert within.value[1, 2] > within.value[0, -1]
