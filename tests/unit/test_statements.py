"""Sentences about the numbers are held to the comparison engine (issue 27)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from probing import config
from probing.probes.compare import SentenceCounts
from probing.probes.reapply import StoredCounts, save_counts
from probing.probes.statements import (
    Cells,
    Claim,
    Statement,
    check,
    table_sentence,
)

RESULTS = config.REPO_ROOT / "results"
UPOS = "minilm-l6__ud-ewt__pos"


def _toy_results(tmp_path, layers: dict[int, np.ndarray], seeds=(0,)):
    """A results folder with one run whose layers' per-item correctness is given
    ((S, n) bool per layer; items 10 to a sentence)."""
    n = next(iter(layers.values())).shape[-1]
    sentence = np.arange(n) // 10
    cells = {}
    for layer, ok in layers.items():
        ok = np.atleast_2d(ok)
        y = np.ones(n, dtype=int)
        cells[f"layer {layer}"] = SentenceCounts.from_predictions(
            "accuracy", y, [o.astype(int) for o in ok], sentence, n // 10, seeds
        )
    save_counts(
        StoredCounts("toy:test", n // 10, cells),
        tmp_path / "sentence-scores" / "toy__toy__pos.safetensors",
        "test",
    )
    meta = {"meta": {"best_layer": {"layer": max(layers)}}}
    (tmp_path / "toy__toy__pos.json").write_text(json.dumps(meta))
    return Cells(tmp_path)


def test_the_issues_overclaim_is_rejected_on_the_committed_probes() -> None:
    """docs/results.md said "UPOS layers 2–4 within noise" (minilm-l6): the paired table
    says layer 3 is above layer 4, so that sentence must fail; the corrected one holds."""
    cells = Cells(RESULTS)
    said = Statement(
        "UPOS: layers 2, 3 and 4 within noise",
        tuple(
            Claim("tie", f"{UPOS}:layer {a}", f"{UPOS}:layer {b}")
            for a, b in ((2, 3), (3, 4), (2, 4))
        ),
    )
    verdict = check(said, cells)
    assert not verdict.holds
    assert any("layer 3" in p and "layer 4" in p for p in verdict.problems)
    corrected = Statement(
        "UPOS: layer 3 above layer 4, not distinguishable from layer 2",
        (
            Claim("above", f"{UPOS}:layer 3", f"{UPOS}:layer 4"),
            Claim("tie", f"{UPOS}:layer 3", f"{UPOS}:layer 2"),
        ),
    )
    assert check(corrected, cells).holds


def test_an_above_claim_needs_holm_over_its_statement(tmp_path) -> None:
    rng = np.random.default_rng(11)
    n = 5000
    base = rng.random(n) < np.repeat(rng.uniform(0.2, 1.0, n // 10), 10)
    gain = base.copy()
    gain[rng.choice(np.flatnonzero(~base), 65, replace=False)] = True  # 65 gained, 40 lost:
    gain[rng.choice(np.flatnonzero(base), 40, replace=False)] = False  # p about 0.02 alone
    layers = {0: base, 1: base, 2: base, 3: base, 4: base, 5: gain}
    cells = _toy_results(tmp_path, layers)
    ref = "toy__toy__pos:"
    alone = Statement("5 above 4", (Claim("above", ref + "layer 5", ref + "layer 4"),))
    assert check(alone, cells).holds
    # The same claim in a statement resting on five comparisons: Holm takes it away.
    many = Statement(
        "5 above all",
        tuple(Claim("above", ref + "layer 5", ref + f"layer {la}") for la in range(5)),
    )
    verdict = check(many, cells)
    assert not verdict.holds and all("Holm p" in p for p in verdict.problems)
    assert check(Statement("best", (Claim("above", ref + "best", ref + "layer 4"),)), cells).holds


def test_a_difference_that_flips_with_the_seed_is_not_stated(tmp_path) -> None:
    rng = np.random.default_rng(2)
    n = 4000
    base = rng.random(n) < 0.7
    seeds = []
    for shift in (0.08, 0.06, -0.02):  # layer 1's gain per seed; the third reverses it
        ok = base.copy()
        flip = rng.random(n) < abs(shift)
        seeds.append(np.where(flip, shift > 0, ok))
    cells = _toy_results(tmp_path, {0: np.stack([base] * 3), 1: np.stack(seeds)}, (0, 1, 2))
    claim = Statement(
        "1 above 0", (Claim("above", "toy__toy__pos:layer 1", "toy__toy__pos:layer 0"),)
    )
    verdict = check(claim, cells)
    assert not verdict.holds and "sign flips over seeds" in verdict.problems[0]


def test_claim_kinds_are_checked() -> None:
    with pytest.raises(Exception, match="claim kind"):
        Claim("below", "a:layer 1", "a:layer 2")


def test_the_probing_caption_is_written_from_the_table() -> None:
    doc = json.loads((RESULTS / f"{UPOS}.json").read_text(encoding="utf-8"))
    said = table_sentence(doc["comparisons"])
    assert "layer 3 (chosen on dev) is above layers 0, 1, 4, 5, 6" in said
    assert "not distinguishable from layer 2" in said
    assert table_sentence(None) == ""


def test_the_layering_cog_interval_comes_from_the_stored_counts() -> None:
    from probing.figures.layering import load_curves

    curves = {c.task: c for c in load_curves(RESULTS, "minilm-l6")}
    pos = curves["pos"]
    assert pos.cog_exact and pos.cog_low <= pos.cog <= pos.cog_high
    # The committed UPOS run's own (paired) interval of the running-best CoG, 1.38-1.48.
    assert 1.3 / 6 < pos.cog_low < pos.cog_high < 1.55 / 6
