"""The L-BFGS scalar mix (probing/probes/mix_solve.py) on small synthetic layers: fast checks
of the member start, the chunked gradient and the stop (the real-feature comparison with
Adam is tests/library/test_mix_solver.py)."""

from __future__ import annotations

import numpy as np
import pytest

from probing.probes.linear import LinearProbe
from probing.probes.mix import ScalarMixProbe, layer_stats
from probing.probes.mix_solve import member_start, mix_objective, solve_mix, start_scalars


def _layers(n: int = 900, dim: int = 12, k: int = 4) -> tuple[np.ndarray, np.ndarray]:
    """(4, n, dim) float16 layers, only layer 2 informative (noisy class centres), scaled
    unevenly per layer as real encoders' are."""
    rng = np.random.default_rng(0)
    y = rng.integers(0, k, size=n)
    centres = rng.normal(0, 1.5, size=(k, dim))
    signal = centres[y] + rng.normal(0, 1, size=(n, dim))
    layers = [rng.normal(0, 1, size=(n, dim)) for _ in range(4)]
    layers[2] = signal
    X = np.stack(
        [la * s + o for la, s, o in zip(layers, (1, 5, 0.2, 30), (0, 2, -1, 7), strict=True)]
    )
    return X.astype(np.float16), y.astype(str)


def test_member_start_maps_the_probe_onto_the_mix_coordinates():
    X, y = _layers()
    member = LinearProbe(C=0.1, max_train_words=None).fit(X[2], y)
    mean, std = layer_stats(X)
    W, b = member_start(member, mean[2, 0], std[2, 0])
    z = (X[2].astype(np.float32) - mean[2]) / std[2]
    np.testing.assert_allclose(z @ W.T + b, member.decision_function(X[2]), atol=1e-4)
    s = start_scalars(4, 2)
    w = np.exp(s) / np.exp(s).sum()
    assert w[2] == pytest.approx(0.9) and np.allclose(np.delete(w, 2), 0.1 / 3)
    assert not start_scalars(1, 0).any() and not start_scalars(3, None).any()


def test_chunked_solve_is_the_whole_batch_solve_and_its_gradient_is_small():
    """Chunks only split the sum: 100-row chunks reach the objective of one chunk; the
    answer passes the stop (re-solving from it takes one evaluation); the mix finds the
    informative layer from a uniform start."""
    X, y = _layers()
    classes, y_idx = np.unique(y, return_inverse=True)
    mean, std = layer_stats(X)
    k, d = len(classes), X.shape[2]
    start = (start_scalars(4, None), np.zeros((k, d), np.float32), np.zeros(k, np.float32))
    one = solve_mix(X, y_idx, mean, std, 0.1, start, chunk_rows=len(y))
    many = solve_mix(X, y_idx, mean, std, 0.1, start, chunk_rows=100)
    assert many.objective == pytest.approx(one.objective, rel=1e-4)
    assert 1 < one.n_evals <= 250 and int(np.argmax(one.scalars)) == 2
    value = mix_objective(X, y_idx, one.scalars, one.coef, one.intercept, mean, std, 0.1)
    assert value == pytest.approx(one.objective, rel=1e-6)
    again = solve_mix(X, y_idx, mean, std, 0.1, (one.scalars, one.coef, one.intercept))
    assert again.n_evals == 1
    capped = solve_mix(X, y_idx, mean, std, 0.1, start, max_iter=3)
    assert capped.n_iter <= 3 and capped.n_evals <= 4 and capped.objective > one.objective


def test_lbfgs_probe_from_the_member_is_a_softmax_mix_at_or_below_the_member():
    X, y = _layers()
    member = LinearProbe(C=0.1, max_train_words=None).fit(X[2], y)
    probe = ScalarMixProbe(max_train_words=None, C=0.1, solver="lbfgs")
    probe.fit(X, y, layers=[0, 3, 6, 9], member=(2, member))
    assert probe.start_layer_ == 6 and probe.gamma_ == 1.0
    assert probe.weights_.sum() == pytest.approx(1.0, abs=1e-6) and (probe.weights_ >= 0).all()
    assert probe.objective_ <= member.objective_ * (1 + 1e-3)
    assert probe.score(X, y) >= member.score(X[2], y) - 0.01
