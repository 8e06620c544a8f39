"""Selectivity at two probe capacities (issue 27; results/capacity.py, committed under
results/capacity/): the committed tables are the engine's, and what the page says about
them names only the differences the engine calls."""

from __future__ import annotations

import json

import numpy as np
import pytest

from probing import config
from probing.figures.capacity import capacity_figure, capacity_sentence, load_capacity
from probing.probes.compare import Engine, Replicates, compare, with_holm
from probing.probes.reapply import load_counts

CAPACITY = config.REPO_ROOT / "results" / "capacity"
STEMS = ("minilm-l6__ud-ewt__pos", "elmo-mini__ud-ewt__pos")


@pytest.mark.parametrize("stem", STEMS)
def test_the_committed_table_is_the_engines(stem: str) -> None:
    """Recomputed from the stored per-seed, per-sentence right/wrong counts (3 seeds, each
    its own training words and control labels, the same for both probe families): every
    selectivity and every drop, with its interval and Holm-adjusted p."""
    counts = load_counts(CAPACITY / f"{stem}.safetensors")
    table = json.loads((CAPACITY / f"{stem}.json").read_text(encoding="utf-8"))
    assert table["settings"]["seeds"] == [0, 1, 2]
    engine = Engine(n_boot=1000, seed=0)
    # Named as results/capacity.py names them (the seed level's draws are keyed on names).
    reps = {
        name: engine.replicates(name.split(" ", 2)[2], c, counts.unit)
        for name, c in counts.cells.items()
    }
    assert all(len(r.points) == 3 for r in reps.values())
    drops = []
    for row in table["layers"]:
        sel = {}
        for family in ("linear", "mlp"):
            t, c = (reps[f"layer {row['layer']} {family} {k}"] for k in ("task", "control"))
            assert np.isclose(t.value, row[family]["accuracy"])
            assert np.isclose(c.value, row[family]["control"])
            d = compare(t, c, engine.seed)
            assert np.isclose(d.value, row[family]["selectivity"]["diff"])
            assert np.isclose(d.ci_low, row[family]["selectivity"]["ci_low"])
            sel[family] = Replicates(
                f"{family} selectivity",
                t.points - c.points,
                t.draws - c.draws,
                counts.unit,
                t.seeds,
            )
        drops.append(compare(sel["linear"], sel["mlp"], engine.seed))
    for row, d in zip(table["layers"], with_holm(drops), strict=True):
        got = row["selectivity_drop"]
        assert np.isclose(d.value, got["diff"]) and np.isclose(d.p_holm, got["p_holm"])
        assert d.called == got["called"]


@pytest.mark.parametrize("stem", STEMS)
def test_the_mlp_memorises_more_of_the_control_task(stem: str) -> None:
    """Hewitt & Liang's observation, held to the committed run: at the model's best linear
    layer the MLP's control accuracy is above the linear probe's at every seed."""
    counts = load_counts(CAPACITY / f"{stem}.safetensors")
    table = json.loads((CAPACITY / f"{stem}.json").read_text(encoding="utf-8"))
    best = max(table["layers"], key=lambda r: r["linear"]["accuracy"])["layer"]
    engine = Engine(n_boot=200, seed=0)
    mlp = engine.replicates("m", counts.cells[f"layer {best} mlp control"], counts.unit)
    lin = engine.replicates("l", counts.cells[f"layer {best} linear control"], counts.unit)
    assert np.all(mlp.points > lin.points), (mlp.points, lin.points)


def test_the_sentence_names_only_called_layers(tmp_path) -> None:
    """A layer whose drop the engine does not call is said to be not distinguishable, even
    where its point estimate is large."""

    def row(layer: int, diff: float, called: bool) -> dict:
        sel = {"diff": 0.3, "ci_low": 0.28, "ci_high": 0.32}
        fam = {"accuracy": 0.9, "control": 0.6, "selectivity": sel}
        drop = {"diff": diff, "ci_low": diff - 0.01, "ci_high": diff + 0.01, "called": called}
        return {"layer": layer, "linear": fam, "mlp": fam, "selectivity_drop": drop}

    table = {
        "model": "toy",
        "task": "pos",
        "settings": {"train_words": 100, "seeds": [0, 1, 2]},
        "layers": [row(0, 0.05, True), row(1, 0.20, False), row(2, -0.03, True)],
    }
    said = capacity_sentence(table)
    assert "lower than the linear probe's at layer(s) 0;" in said
    assert "higher at layer(s) 2" in said and "not distinguishable at layer(s) 1" in said
    assert len(capacity_figure(table).data) == 2
    (tmp_path / "capacity").mkdir()
    (tmp_path / "capacity" / "toy__ud-ewt__pos.json").write_text("{truncated")
    assert load_capacity(tmp_path, "toy", "ud-ewt", "pos") is None
    assert load_capacity(tmp_path, "other", "ud-ewt", "pos") is None


@pytest.mark.parametrize("stem", STEMS)
def test_what_docs_results_says_about_capacity_holds(stem: str) -> None:
    """The capacity claim of docs/results.md (results/claims.json): the linear probe's
    selectivity is above the MLP-1 probe's at every layer — held to the committed table."""
    table = json.loads((CAPACITY / f"{stem}.json").read_text(encoding="utf-8"))
    for row in table["layers"]:
        drop = row["selectivity_drop"]
        assert drop["called"] and drop["diff"] > 0 and min(drop["per_seed"]) > 0, row["layer"]
        assert row["mlp"]["control"] > row["linear"]["control"]
    claims = json.loads((config.REPO_ROOT / "results" / "claims.json").read_text(encoding="utf-8"))
    claim = next(c for c in claims if c["id"] == f"capacity:{stem}")
    assert [c["outcome"] for c in claim["comparisons"]] == ["above"] * len(table["layers"])
    assert "is above at layers" in claim["text"]
