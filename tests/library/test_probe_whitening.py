"""The linear probe's whitened coordinates and warm starts: the same objective's minimum, in
fewer evaluations (real minilm-l6 features of UD-EWT)."""

from __future__ import annotations

import numpy as np
import pytest

from probing.features import extract_features
from probing.probes import linear
from probing.probes.linear import LinearProbe


@pytest.fixture(scope="module")
def upos(minilm, tmp_path_factory):
    import os

    os.environ["CONTEXTLENS_CACHE_DIR"] = str(tmp_path_factory.mktemp("cache"))
    tr = extract_features(minilm, "ud-ewt", "train", "upos", max_sentences=250)
    dev = extract_features(minilm, "ud-ewt", "dev", "upos", max_sentences=100)
    return tr, dev


@pytest.mark.parametrize("C", [0.01, 1.0])
def test_whitened_fit_reaches_the_unwhitened_objective(upos, C):
    tr, _ = upos
    X, y = tr.layer(4), tr.labels
    tight = {"C": C, "tol": 1e-7, "max_iter": 5_000}
    plain = LinearProbe(whiten=False, **tight).fit(X, y)
    white = LinearProbe(whiten=True, **tight).fit(X, y)
    # Reaches it: no higher than 1e-6 relative (float32 lets the plain fit stall a little
    # above the minimum; whitened often gets lower), and the same minimum.
    assert white.objective_ <= plain.objective_ * (1 + 1e-6)
    assert abs(white.objective_ - plain.objective_) / plain.objective_ <= 1e-5
    np.testing.assert_array_equal(white.mean_, plain.mean_)
    # Same minimiser (the objective is strictly convex in W).
    assert np.abs(white.coef_ - plain.coef_).max() <= 1e-2 * np.abs(plain.coef_).max()
    assert white.n_evals_ < plain.n_evals_
    # At the default tolerance too: far fewer evaluations, no worse an objective.
    fast, slow = LinearProbe(C=C).fit(X, y), LinearProbe(C=C, whiten=False).fit(X, y)
    assert fast.n_evals_ < slow.n_evals_, (fast.n_evals_, slow.n_evals_)
    assert fast.objective_ <= slow.objective_ * (1 + 1e-4)


def test_the_whitened_stop_is_sklearns_test_on_w(upos):
    """The fit stops when W's own gradient (not V's) is below tol."""
    import torch

    tr, _ = upos
    X, y = tr.layer(2), tr.labels
    probe = LinearProbe(C=0.1, tol=1e-3).fit(X, y)
    W = torch.tensor(probe.coef_, requires_grad=True)
    b = torch.tensor(probe.intercept_, requires_grad=True)
    Z = torch.from_numpy(probe.standardise(X))
    yt = torch.from_numpy(np.searchsorted(probe.classes_, y))
    loss = torch.nn.functional.cross_entropy(Z @ W.T + b, yt)
    (loss + 0.5 / (0.1 * len(y)) * (W * W).sum()).backward()
    assert max(W.grad.abs().max(), b.grad.abs().max()) <= 1.5e-3  # float32 round-off


def test_warm_start_from_another_layer_reaches_the_same_minimum(upos):
    tr, dev = upos
    y = tr.labels
    prev = LinearProbe(Cs=(0.01, 0.1), tol=1e-7, max_iter=5_000)
    prev.fit(tr.layer(3), y, dev.layer(3), dev.labels)
    cold = LinearProbe(C=0.1, tol=1e-7, max_iter=5_000).fit(tr.layer(4), y)
    warm = LinearProbe(C=0.1, tol=1e-7, max_iter=5_000, init=prev).fit(tr.layer(4), y)
    assert abs(warm.objective_ - cold.objective_) / cold.objective_ <= 1e-5
    assert set(prev.path_) == {0.01, 0.1}
    # An init with other classes is ignored (the fit starts from zero).
    other = LinearProbe(C=0.1).fit(tr.layer(3)[:200], y[:200])
    assert not np.array_equal(other.classes_, cold.classes_)
    again = LinearProbe(C=0.1, tol=1e-7, max_iter=5_000, init=other).fit(tr.layer(4), y)
    assert again.n_evals_ == cold.n_evals_ and again.objective_ == cold.objective_


def test_evaluations_are_counted_process_wide(upos):
    tr, _ = upos
    before = linear.evaluation_count()
    probe = LinearProbe(C=0.1).fit(tr.layer(1), tr.labels)
    assert linear.evaluation_count() - before == probe.n_evals_ > 0


def test_a_fit_at_a_grid_c_from_the_grid_is_its_solution_at_once(upos):
    """The sweep's probe at the one C chosen for every layer starts from that layer's grid
    solution at C (same words): already the answer, confirmed in one or two evaluations
    (a from-zero refit took ~70 at full data)."""
    tr, dev = upos
    X, y = tr.layer(3), tr.labels
    grid = LinearProbe(Cs=(0.01, 0.1, 1.0)).fit(X, y, dev.layer(3), dev.labels)
    for C in (0.01, 0.1, 1.0):
        again = LinearProbe(C=C, init=grid).fit(X, y)
        assert again.n_evals_ <= 2, (C, again.n_evals_)
        W = grid.path_[C][0]  # the same point, up to W -> W S P in float32
        assert np.abs(again.coef_ - W).max() <= 1e-4 * np.abs(W).max()
    assert LinearProbe(C=0.1).fit(X, y).n_evals_ > 10  # from zero it is a real fit


def test_class_side_whitening_same_minimum_in_fewer_evaluations(upos, monkeypatch):
    """W = M V P: the class-curvature factor M (at the start point) changes the path only;
    warm-started from the previous layer it needs fewer evaluations than P alone."""
    import torch

    tr, dev = upos
    y = tr.labels
    prev = LinearProbe(Cs=(0.01, 0.1)).fit(tr.layer(3), y, dev.layer(3), dev.labels)
    tight = {"C": 0.1, "tol": 1e-7, "max_iter": 5_000, "init": prev}
    both = LinearProbe(C=0.1, init=prev).fit(tr.layer(4), y)
    both_tight = LinearProbe(**tight).fit(tr.layer(4), y)

    def features_only(
        X: torch.Tensor,
        W: torch.Tensor,
        b: torch.Tensor,
        mean: torch.Tensor,
        scale: torch.Tensor,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        eye = torch.eye(W.shape[0], device=W.device)
        return eye, eye

    monkeypatch.setattr(linear, "_class_whitening", features_only)
    plain = LinearProbe(C=0.1, init=prev).fit(tr.layer(4), y)
    plain_tight = LinearProbe(**tight).fit(tr.layer(4), y)
    assert abs(both_tight.objective_ - plain_tight.objective_) <= 1e-5 * plain_tight.objective_
    assert both.n_evals_ < plain.n_evals_, (both.n_evals_, plain.n_evals_)
    assert both.objective_ <= plain.objective_ * (1 + 1e-3)


def test_a_fit_from_zero_starts_at_the_log_class_frequencies(upos):
    """From zero weights the intercept starts at its optimum for them (centred log
    frequencies); the plain fit keeps the old start at zero."""
    tr, _ = upos
    y = tr.labels
    probe = LinearProbe(C=0.1, max_iter=0).fit(tr.layer(2), y)
    _, counts = np.unique(y, return_counts=True)
    log_p = np.log(counts / counts.sum())
    np.testing.assert_allclose(probe.intercept_, log_p - log_p.mean(), atol=1e-5)
    assert not LinearProbe(C=0.1, max_iter=0, whiten=False).fit(tr.layer(2), y).intercept_.any()


def test_a_grid_carries_lbfgs_memory_from_c_to_c(upos, monkeypatch):
    """Each C of a grid starts with the previous C's curvature pairs (the penalty's part
    corrected exactly): the same path of minimisers, in fewer evaluations."""
    tr, dev = upos
    X, y, Xd, yd = tr.layer(3), tr.labels, dev.layer(3), dev.labels
    Cs = (0.001, 0.003, 0.01, 0.03, 0.1)
    tight = {"Cs": Cs, "tol": 1e-7, "max_iter": 5_000}
    carried = LinearProbe(Cs=Cs).fit(X, y, Xd, yd)
    carried_tight = LinearProbe(**tight).fit(X, y, Xd, yd)
    monkeypatch.setattr(linear, "_CARRY_MEMORY", False)
    fresh = LinearProbe(Cs=Cs).fit(X, y, Xd, yd)
    fresh_tight = LinearProbe(**tight).fit(X, y, Xd, yd)
    assert carried.n_evals_ < fresh.n_evals_, (carried.n_evals_, fresh.n_evals_)
    for C in Cs:  # the same minimiser at every C
        a, b = carried_tight.path_[C][0], fresh_tight.path_[C][0]
        assert np.abs(a - b).max() <= 1e-2 * np.abs(b).max(), C
