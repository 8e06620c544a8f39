"""A sweep's time before it starts (issue 48, item 4): a grid estimated over the limit is
refused unless confirmed, with the estimate in the message; nothing is written first."""

from __future__ import annotations

import pytest

from probing.errors import SweepTooLongError
from probing.probes.cost import RunCost
from probing.sweep import estimate as estimate_module
from probing.sweep import runner
from probing.sweep.estimate import check_sweep_time, duration, estimate_sweep
from probing.sweep.resolve import Resolved
from probing.sweep.spec import parse_spec

MINILM = {"minilm-l6": 6}  # what resolve() finds: 6 contextual layers, 7 in all


def _spec(tmp_path, seeds):
    return parse_spec(
        {
            "out": str(tmp_path / "sweep"),
            "models": ["minilm-l6"],
            "seeds": list(seeds),
            "tasks": [{"task": "pos"}],
            # capped splits: the estimate reads no data set
            "training": {"max_dev_sentences": 200, "max_test_sentences": 300},
        }
    )


def test_ten_thousand_seeds_refused_with_the_estimate(tmp_path):
    spec = _spec(tmp_path, range(10_000))
    with pytest.raises(SweepTooLongError) as err:
        check_sweep_time(spec, Resolved(MINILM, 70_000), workers=2)
    text = str(err.value)
    assert "70,000 cells" in text and "10,000 seed(s)" in text and "--yes" in text
    assert "days" in text or " h " in text
    est = check_sweep_time(spec, Resolved(MINILM, 70_000), workers=2, confirm=True)
    assert est.cells == 70_000 and est.seconds > estimate_module.CONFIRM_ABOVE_S


def test_small_sweep_passes(tmp_path):
    est = check_sweep_time(_spec(tmp_path, [0, 1]), Resolved(MINILM, 14), workers=2)
    assert est.cells == 14 and est.seconds < 600


def test_run_sweep_refuses_before_writing(tmp_path, monkeypatch):
    spec = _spec(tmp_path, range(10_000))
    monkeypatch.setattr(runner, "resolve", lambda s: Resolved(MINILM, 70_000))
    with pytest.raises(SweepTooLongError):
        runner.run_sweep(spec, workers=2)
    assert not spec.out.exists()


def test_unmeasured_model_uses_the_median_cell(tmp_path):
    spec = parse_spec(
        {
            "out": str(tmp_path / "s"),
            "models": ["some/model"],
            "seeds": [0],
            "layers": [0, 1],
            "tasks": [{"task": "pos"}],
            "training": {"max_dev_sentences": 10, "max_test_sentences": 10},
        }
    )
    cost = RunCost(1.0, 0.01, 7.0, 0.0, 7, 10.0)  # 1 s per cell
    est = estimate_sweep(spec, Resolved({"some/model": 6}, 2), 1, {("minilm-l6", "pos"): cost})
    assert not est.measured and est.cells == 2 and est.cpu_seconds == pytest.approx(2.0)


def test_duration_words():
    assert duration(40) == "40 s" and duration(600) == "10 min" and duration(7200) == "2.0 h"
    assert duration(3 * 86400) == "3.0 days"
