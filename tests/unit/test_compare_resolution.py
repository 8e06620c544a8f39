"""The comparison engine's resolution, seed level and depth claims (issue 40)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from probing.probes.compare import (
    MIN_TAIL,
    SEEDS_IDENTICAL,
    TWO_LEVEL,
    Engine,
    Replicates,
    SentenceCounts,
    bootstrap_p,
    compare,
    depth_differences,
    difference_p,
    layer_table,
)

if TYPE_CHECKING:
    import pytest


def _layers(n_layers: int, gap: float, seeds: int = 1, n_sent: int = 400, per: int = 12):
    """Per layer, per-seed right/wrong counts whose accuracy rises by ``gap`` per layer
    (every layer clearly apart from every other) on sentences of varied difficulty."""
    rng = np.random.default_rng(2)
    sentence = np.repeat(np.arange(n_sent), per)
    difficulty = rng.uniform(0.1, 0.3, n_sent)
    y = np.ones(len(sentence), dtype=int)
    out = {}
    for la in range(n_layers):
        preds = []
        for s in range(seeds):
            r = np.random.default_rng(1000 * la + s)
            preds.append((r.random(len(sentence)) < difficulty[sentence] + gap * la).astype(int))
        out[la] = SentenceCounts.from_predictions("accuracy", y, preds, sentence, n_sent)
    return out


def test_a_25_row_table_can_reach_holm_p_well_below_001(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """14 layers give 13 adjacent + 13 best-vs-each - 1 shared = 25 rows. Every row is a
    clear difference (z ≥ 4), so no bootstrap replicate crosses 0: the bootstrap p alone is
    2/1001 and Holm's floor 25 · 2/1001 = 0.04995: every call on the edge of 0.05. With the
    normal-approximation p where the tail is that thin, the largest Holm-adjusted p of the
    table is far below 0.01 and every row is called."""
    import probing.probes.compare as engine_module

    engine = Engine(n_boot=1000, seed=0)
    layers = _layers(14, gap=0.045)
    reps = {la: engine.replicates(f"layer {la}", c, "toy") for la, c in layers.items()}
    table = layer_table(reps, best=13)
    assert len(table) == 25
    assert max(d.p_holm for d in table) < 0.01
    assert all(d.called for d in table)
    monkeypatch.setattr(engine_module, "difference_p", lambda _value, d: bootstrap_p(d))
    old = layer_table(reps, best=13)
    assert min(d.p_holm for d in old) >= 0.0499  # the floor: every call on its edge


def test_a_resolved_tail_keeps_the_bootstrap_p() -> None:
    """Where MIN_TAIL or more replicates cross 0 the p is the bootstrap's, unchanged."""
    rng = np.random.default_rng(0)
    draws = rng.normal(0.3, 1.0, 1000)
    assert min((draws <= 0).sum(), (draws >= 0).sum()) >= MIN_TAIL
    assert difference_p(0.3, draws) == bootstrap_p(draws)
    thin = rng.normal(4.0, 1.0, 1000)  # about 0 replicates past 0: normal p ≈ 6e-5
    assert difference_p(4.0, thin) < 2 / 1001


def test_seed_level_is_reported_as_identical_where_no_seed_varies() -> None:
    engine = Engine(n_boot=300, seed=0)
    varied = _layers(2, gap=0.05, seeds=3)
    same = {
        la: SentenceCounts("accuracy", np.repeat(c.counts[:1], 3, 0), (0, 1, 2))
        for la, c in varied.items()
    }
    rep = lambda counts, la: engine.replicates(f"layer {la}", counts[la], "toy")  # noqa: E731
    assert compare(rep(varied, 1), rep(varied, 0)).seed_level == TWO_LEVEL
    assert compare(rep(same, 1), rep(same, 0)).seed_level == SEEDS_IDENTICAL
    one = {la: SentenceCounts("accuracy", c.counts[:1], (0,)) for la, c in varied.items()}
    assert compare(rep(one, 1), rep(one, 0)).seed_level == SEEDS_IDENTICAL


def _cog(name: str, centre: float, spread: float, unit: str, seed: int) -> Replicates:
    rng = np.random.default_rng(seed)
    return Replicates(name, [centre], centre + rng.normal(0, spread, (1, 2000)), unit)


def test_the_relative_depth_claim_is_not_called_where_layers_contradict_it() -> None:
    """A 12-layer model whose centre is 2.4 layers against a 6-layer model's 2.0: in
    relative depth 0.20 vs 0.33 (called lower), in layers higher — the relative ordering
    is the divisor's doing and is not called. Where both agree it is."""
    contradicted, agreeing = depth_differences(
        [
            (_cog("deep a", 2.4, 0.05, "t1", 1), 12, _cog("shallow a", 2.0, 0.05, "t1", 2), 6),
            (_cog("deep b", 1.5, 0.05, "t2", 3), 12, _cog("shallow b", 2.0, 0.05, "t2", 4), 6),
        ]
    )
    assert contradicted.relative.called and contradicted.relative.value < 0
    assert contradicted.absolute.value > 0 and contradicted.contradicted
    assert not contradicted.relative_called
    assert agreeing.relative.value < 0 and agreeing.absolute.value < 0
    assert agreeing.relative_called and not agreeing.contradicted
    row = contradicted.as_dict()
    assert row["absolute"]["diff"] > 0 > row["relative"]["diff"] and not row["relative_called"]
