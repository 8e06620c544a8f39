"""The faithfulness study's summary (probing.attribution.study): which method it names most
faithful comes from the comparison engine's called differences, on synthetic per-case AOPCs
(one method made better than the rest, or none)."""

from __future__ import annotations

import numpy as np

from probing.attribution.methods import METHODS
from probing.attribution.study import StudyRows, summarise


def _rows(boost: dict[str, float], n_cases: int = 24, seed: int = 0) -> StudyRows:
    rng = np.random.default_rng(seed)
    rows = StudyRows()
    for c in range(n_cases):
        for m in [*METHODS, "random"]:
            rows.curves.append(
                {
                    "case": c,
                    "sent_id": f"s{c}",
                    "method": m,
                    "aopc_deletion": boost.get(m, 0.0) + rng.normal(0, 0.01),
                    "aopc_insertion": rng.normal(0, 0.01),
                }
            )
    return rows


def test_a_clearly_better_method_is_named_and_only_then():
    s = summarise(_rows({"alti": 0.1, "integrated_gradients": 0.05}), n_boot=500)
    assert s["most_faithful"] == {"aopc_deletion": "alti", "aopc_insertion": None}
    assert s["statements"]["aopc_deletion"].startswith("alti: higher deletion AOPC")
    assert "above the random order: none" in s["statements"]["aopc_insertion"]
    rows = s["comparisons"]["aopc_deletion"]["rows"]
    assert len(rows) == 15  # every pair of 5 methods and the random order: one Holm family
    assert all(r["p_holm"] >= r["p"] for r in rows)


def test_two_tied_leaders_name_no_one():
    s = summarise(_rows({"alti": 0.1, "value_zeroing": 0.1}), n_boot=500)
    assert s["most_faithful"]["aopc_deletion"] is None
    assert "above the random order: alti, value_zeroing" in s["statements"]["aopc_deletion"]
