"""The tuned pair-head run's schedule and guard: every pair in one batch per epoch, the
course note's warm-up then decay, and no export into the shipped models without --overwrite."""

from __future__ import annotations

import sys
import types

import numpy as np
import pytest

from probing.cli.main import main
from probing.training.pair_heads_tuned import _lr_factor, epoch_batches, tuned_name


def test_epoch_batches_cover_every_pair_once():
    lengths = list(np.random.default_rng(0).integers(5, 90, size=203))
    batches = epoch_batches(lengths, 16, seed=3)
    assert sorted(i for b in batches for i in b) == list(range(203))
    assert epoch_batches(lengths, 16, seed=3) == batches  # the same epoch, the same batches
    assert epoch_batches(lengths, 16, seed=4) != batches
    # length-bucketed: a batch's lengths spread much less than the whole set's
    spread = np.median([np.ptp([lengths[i] for i in b]) for b in batches])
    assert spread < np.ptp(lengths) / 2


def test_warm_up_over_a_tenth_of_the_steps_then_linear_decay():
    factors = [_lr_factor(s, 100) for s in range(100)]
    assert factors[0] == pytest.approx(0.1) and factors[9] == pytest.approx(1.0)
    assert all(a >= b for a, b in zip(factors[9:], factors[10:], strict=False))
    assert factors[-1] == pytest.approx(1 / 90)


def test_a_tuned_run_refuses_the_shipped_models_without_overwrite(monkeypatch, capsys):
    calls: list[str] = []
    fake = types.ModuleType("probing.training.pair_heads")
    fake.run = lambda args: calls.append(args.tune_top_layers) or 0
    monkeypatch.setitem(sys.modules, "probing.training.pair_heads", fake)
    assert main(["train-pair-heads", "--tasks", "sop", "--tune-top-layers", "2"]) == 2
    assert "models/" in capsys.readouterr().err and calls == []
    assert (
        main(["train-pair-heads", "--tasks", "sop", "--tune-top-layers", "2", "--overwrite"]) == 0
    )
    assert calls == [2] and tuned_name("sop", 2) == "minilm-l6-sop-top2"
