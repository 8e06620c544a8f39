"""The comparison engine: paired differences, seed variance, Holm (issue 27)."""

from __future__ import annotations

import numpy as np
import pytest

from probing.errors import InvalidArgumentError
from probing.probes.compare import (
    Engine,
    Replicates,
    SentenceCounts,
    bootstrap_p,
    compare,
    holm,
    layer_table,
    mix_vs_best_member,
)
from probing.probes.metrics import SentenceBootstrap


def _toy_sentences(rng: np.random.Generator, n_sent: int = 300, per: int = 12):
    """Sentences of very different difficulty: per-item correctness of a base layer."""
    sentence = np.repeat(np.arange(n_sent), per)
    difficulty = rng.uniform(0.2, 1.0, n_sent)  # wide spread: wide separate intervals
    base = rng.random(len(sentence)) < difficulty[sentence]
    return sentence, base


def _separate_ci(counts: SentenceCounts, engine: Engine, unit: str) -> tuple[float, float]:
    draws = counts.draws(engine.picks(unit, counts.counts.shape[1])).mean(axis=0)
    lo, hi = np.quantile(draws, [0.025, 0.975])
    return float(lo), float(hi)


def test_overlapping_intervals_but_clear_paired_difference() -> None:
    rng = np.random.default_rng(3)
    sentence, base = _toy_sentences(rng)
    better = base.copy()
    wrong = np.flatnonzero(~base)
    better[rng.choice(wrong, size=len(base) // 40, replace=False)] = True  # +2.5 points
    y = np.ones(len(base), dtype=int)
    engine = Engine(n_boot=1000, seed=0)
    counts = {
        name: SentenceCounts.from_predictions("accuracy", y, [ok.astype(int)], sentence, 300)
        for name, ok in (("lower", base), ("higher", better))
    }
    lo_a, hi_a = _separate_ci(counts["lower"], engine, "toy")
    lo_b, hi_b = _separate_ci(counts["higher"], engine, "toy")
    assert lo_b < hi_a, "the separate intervals were meant to overlap"
    diff = engine.compare(
        engine.replicates("higher", counts["higher"], "toy"),
        engine.replicates("lower", counts["lower"], "toy"),
    )
    assert diff.paired and diff.called
    assert 0 < diff.ci_low < diff.value < diff.ci_high
    assert diff.p < 0.01
    # Scored on different (independent) picks, the same two scores are not paired: the
    # interval widens to the sum of both spreads and includes 0.
    unpaired = engine.compare(
        engine.replicates("higher", counts["higher"], "toy-a"),
        engine.replicates("lower", counts["lower"], "toy-b"),
    )
    assert not unpaired.paired and unpaired.ci_low < 0 < unpaired.ci_high
    assert not unpaired.called


def test_disjoint_sentence_intervals_but_a_difference_that_flips_with_the_seed() -> None:
    """Seed-mean intervals that do not overlap, yet the difference is not called: one of
    three control seeds reverses it, and the two-level bootstrap widens the interval."""
    rng = np.random.default_rng(5)
    sentence, base = _toy_sentences(rng, n_sent=400, per=15)
    y = np.ones(len(base), dtype=int)
    # Task (one fit) vs control under three seeds whose accuracies differ a lot.
    shifts = (0.20, 0.16, -0.03)
    controls = []
    for s, shift in enumerate(shifts):
        r = np.random.default_rng(100 + s)
        ok = base.copy()
        flip = r.random(len(ok)) < abs(shift)
        ok = np.where(flip, shift < 0, ok)  # lowers (shift > 0) or raises accuracy
        controls.append(ok.astype(int))
    task = SentenceCounts.from_predictions("accuracy", y, [base.astype(int)] * 3, sentence, 400)
    ctrl = SentenceCounts.from_predictions("accuracy", y, controls, sentence, 400)
    engine = Engine(n_boot=1000, seed=0)
    lo_t, _ = _separate_ci(task, engine, "toy")
    _, hi_c = _separate_ci(ctrl, engine, "toy")
    assert hi_c < lo_t, "the seed-mean intervals were meant to be disjoint"
    a, b = engine.replicates("task", task, "toy"), engine.replicates("control", ctrl, "toy")
    diff = engine.compare(a, b)
    assert not diff.sign_stable and not diff.called
    one_level = compare(
        Replicates("task", a.points.mean(), a.draws.mean(0), "toy"),
        Replicates("control", b.points.mean(), b.draws.mean(0), "toy"),
    )
    assert one_level.called  # what reading the seed mean alone would claim
    assert (diff.ci_high - diff.ci_low) > 2 * (one_level.ci_high - one_level.ci_low)


def test_holm_step_down() -> None:
    # Holm 1979: sorted p_(i) times (m - i + 1), made monotone, capped at 1.
    np.testing.assert_allclose(holm([0.01, 0.04, 0.03]), [0.03, 0.06, 0.06])
    np.testing.assert_allclose(holm([0.5, 0.001]), [0.5, 0.002])
    np.testing.assert_allclose(holm([0.3, 0.4, 0.9]), [0.9, 0.9, 0.9])
    out = holm([np.nan, 0.02])
    assert np.isnan(out[0]) and out[1] == pytest.approx(0.02)


def test_holm_turns_a_marginal_table_row_uncalled() -> None:
    """A difference called alone (p < 0.05) is not called in a family of five whose
    other rows are null."""
    rng = np.random.default_rng(11)
    sentence, base = _toy_sentences(rng, n_sent=500, per=10)
    y = np.ones(len(base), dtype=int)
    engine = Engine(n_boot=2000, seed=1)
    layers = {0: base}
    for layer in range(1, 5):  # null layers: the same predictions as layer 0
        layers[layer] = base.copy()
    # Layer 5: 60 items gained, 35 lost: a small net gain, marginal on its own.
    gain = base.copy()
    gain[rng.choice(np.flatnonzero(~base), size=60, replace=False)] = True
    gain[rng.choice(np.flatnonzero(base), size=35, replace=False)] = False
    layers[5] = gain
    reps = {
        la: engine.replicates(
            f"layer {la}",
            SentenceCounts.from_predictions("accuracy", y, [ok.astype(int)], sentence, 500),
            "toy",
        )
        for la, ok in layers.items()
    }
    alone = engine.compare(reps[5], reps[4])
    table = layer_table(reps, best=5)
    row = next(d for d in table if d.a == "layer 5" and d.b == "layer 4")
    assert alone.p < 0.05 and alone.called
    assert row.p == alone.p and row.p_holm > 0.05 and not row.called


def test_bootstrap_p_and_input_checks() -> None:
    assert bootstrap_p(np.full(999, 1.0)) == pytest.approx(2 / 1000)
    assert bootstrap_p(np.r_[np.full(500, -1.0), np.full(500, 1.0)]) == 1.0
    with pytest.raises(InvalidArgumentError, match="unknown score kind"):
        SentenceCounts("bleu", np.zeros((1, 3, 2)))
    with pytest.raises(InvalidArgumentError, match="seeds"):
        SentenceCounts("accuracy", np.zeros((2, 3, 2)), seeds=(0,))


def test_counts_reproduce_the_runs_sentence_bootstrap() -> None:
    """Stored counts + the engine give the same replicates as the runs' own
    SentenceBootstrap when the picks are the same."""
    rng = np.random.default_rng(0)
    sentence, base = _toy_sentences(rng, n_sent=50, per=6)
    y = rng.integers(0, 3, len(base))
    pred = np.where(base, y, (y + 1) % 3)
    boot = SentenceBootstrap(sentence, n_boot=200, seed=4)
    point, draws = boot.draws(y, pred, "accuracy")
    counts = SentenceCounts.from_predictions("accuracy", y, [pred], sentence, 50)
    np.testing.assert_allclose(counts.points, [point])
    np.testing.assert_allclose(counts.draws(boot.picks)[0], draws)
    ys = y.astype(str)
    f1 = SentenceCounts.from_predictions("f1", ys, [np.where(base, ys, "")], sentence, 50)
    assert f1.points[0] == pytest.approx(2 * base.mean() / (1 + base.mean()))


def test_a_mix_below_its_best_member_is_flagged() -> None:
    """The mix is compared with its best single layer, paired: an under-trained mix that
    loses 2 points on some items is called below; one that only reshuffles errors is not."""
    rng = np.random.default_rng(7)
    sentence, base = _toy_sentences(rng, n_sent=400, per=10)
    y = np.ones(len(base), dtype=int)
    engine = Engine(n_boot=1000, seed=0)
    weak = base.copy()
    weak[rng.choice(np.flatnonzero(base), 150, replace=False)] = False
    layer0 = base.copy()
    layer0[rng.choice(np.flatnonzero(base), 400, replace=False)] = False
    shuffled = base.copy()
    shuffled[rng.choice(np.flatnonzero(base), 20, replace=False)] = False
    shuffled[rng.choice(np.flatnonzero(~base), 20, replace=False)] = True

    def rep(name: str, ok: np.ndarray) -> Replicates:
        c = SentenceCounts.from_predictions("accuracy", y, [ok.astype(int)], sentence, 400)
        return engine.replicates(name, c, "toy")

    members = {0: rep("layer 0", layer0), 1: rep("layer 1", base)}
    below = mix_vs_best_member(rep("mix", weak), members)
    assert below.b == "layer 1" and below.value < 0 and below.called
    level = mix_vs_best_member(rep("mix", shuffled), members)
    assert level.value == 0 and not level.called
