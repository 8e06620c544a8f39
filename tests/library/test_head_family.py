"""Head ablation as one family of tests (issue 40): the committed per-sentence sums re-make
the committed corrected table, and the survivor count is the engine's."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
import pytest

from probing import config
from probing.interventions.head_family import (
    MEASURES,
    HeadSums,
    family_columns,
    family_sentence,
    head_family,
)

if TYPE_CHECKING:
    from pathlib import Path

RUN = config.REPO_ROOT / "results" / "interventions" / "minilm-l6-mlm__ud-ewt__ablate-heads"


def _toy_sums(rng: np.random.Generator, hurt: dict[int, float]) -> HeadSums:
    """2 layers × 3 heads over 300 sentences of 3 words; masking head ``i`` adds
    ``hurt[i]`` nats to every word's loss (others add noise only)."""
    n_sent, per, n = 300, 3, 6
    sentence = np.repeat(np.arange(n_sent), per)
    clean = rng.gamma(2.0, 2.0, len(sentence))
    loss = [clean] + [
        clean + hurt.get(i, 0.0) + rng.normal(0, 0.3, len(sentence)) for i in range(n)
    ]
    correct = [(rng.random(len(sentence)) < 0.3).astype(float) for _ in range(n + 1)]
    groups = [f"s{i // 2}" for i in range(200)]
    agree = [(rng.random(200) < 0.85).astype(float) for _ in range(n + 1)]
    return HeadSums.from_items(2, 3, sentence, loss, correct, groups, agree)


def test_survivors_are_the_heads_called_after_holm(tmp_path: Path) -> None:
    """One head with a real loss increase survives Holm over the 6 heads; a head whose
    per-head interval barely clears 0 does not; the sums round-trip through the file."""
    rng = np.random.default_rng(0)
    sums = _toy_sums(rng, {4: 0.5, 1: 0.022})
    family = head_family(sums, n_boot=1000)
    loss = family["measures"]["lm_loss_increase"]
    assert loss["survivors"] == [[2, 1]]  # head index 4 = layer 2 (1-based), head 1
    by = {(h["layer"], h["head"]): h for h in loss["heads"]}
    assert by[2, 1]["p_holm"] < 1e-6 and by[2, 1]["called"]
    assert by[1, 1]["ci_low"] > 0  # clears 0 on its own ...
    assert by[1, 1]["p"] < 0.05 < by[1, 1]["p_holm"] and not by[1, 1]["called"]  # not in 6
    assert family_sentence(family).count("1 of 6 heads raise the masked-LM loss") == 1
    back = HeadSums.load(sums.save(tmp_path / "sums.safetensors"))
    assert head_family(back, n_boot=1000) == family


def test_the_committed_head_family_is_remade_from_the_committed_sums() -> None:
    """Load the committed per-sentence sums, re-run the family correction and compare with
    the committed table (CSV columns and JSON family) and finding: a stale file fails."""
    run = json.loads(RUN.with_suffix(".json").read_text(encoding="utf-8"))
    table = pd.read_csv(RUN.with_suffix(".csv"))
    sums = HeadSums.load(RUN.parent / run["sentence_sums"])
    assert sums.lm_words.sum() == run["n_heldout_words"]
    assert sums.agree_cases.sum() == run["n_agreement_cases"]
    n_boot = int(run["argv"][run["argv"].index("--n-boot") + 1])
    family = head_family(sums, n_boot=n_boot)
    assert json.loads(json.dumps(family)) == run["family"]
    assert run["finding"] == family_sentence(family)
    # The per-head point values and intervals are the run's own table's.
    loss = family["measures"]["lm_loss_increase"]["heads"]
    np.testing.assert_allclose([h["diff"] for h in loss], table["lm_loss_increase"])
    np.testing.assert_allclose([h["ci_low"] for h in loss], table["lm_loss_increase_lo"])
    for i, cols in enumerate(family_columns(family)):
        for key, value in cols.items():
            assert table[key].iloc[i] == pytest.approx(value), (i, key)
    for measure in MEASURES:
        got = family["measures"][measure]
        called = [
            [int(r.layer), int(r.head)]
            for r in table.itertuples()
            if getattr(r, f"{measure}_called")
            and np.sign(getattr(r, measure)) == MEASURES[measure][2]
        ]
        assert sorted(got["survivors"]) == sorted(called), measure
