"""The best layer's text says where the layer was chosen, and the layer is the one the rule
picks (issue 46: the structural results said "chosen on test" a paragraph before "chosen on
dev")."""

from __future__ import annotations

import json
import types
from pathlib import Path

import pytest

from probing.figures.probing_page import headline
from probing.probes.results import ProbeResults

RESULTS = Path(__file__).resolve().parents[2] / "results"
STRUCTURAL = sorted(RESULTS.glob("*__ud-ewt__dep-d*.json"))


def _tables() -> types.ModuleType:  # results/tables.py, the generator of the docs' tables
    import importlib.util

    spec = importlib.util.spec_from_file_location("results_tables", RESULTS / "tables.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


structural = _tables().structural


def _dev_argmax(meta: dict, metric: str) -> int:
    """The selection rule: the layer of the highest dev score (seed mean)."""
    dev = meta["dev_scores"]
    return int(max(dev, key=lambda k: dev[k][metric]))


@pytest.mark.parametrize("path", STRUCTURAL, ids=lambda p: p.stem)
def test_structural_headline_names_the_dev_choice(path):
    r = ProbeResults.from_json(path)
    best = _dev_argmax(json.loads(path.read_text(encoding="utf-8"))["meta"], r.metric)
    assert r.meta.get("best_layer_dev") == best  # the stored choice follows the rule
    text = headline(r)
    assert f"best layer {best} (chosen on dev;" in text, text
    assert "chosen on test" not in text


def test_headline_follows_dev_even_where_test_disagrees(tmp_path):
    """A structural run whose dev choice is not its best test layer: the text names the
    dev layer (the old text took the best test score and called it chosen on test)."""
    path = RESULTS / "minilm-l6__ud-ewt__dep-distance.json"
    doc = json.loads(path.read_text(encoding="utf-8"))
    r = ProbeResults.from_json(path)
    scores = r.layer_scores()
    test_best = int(scores.loc[scores["value"].idxmax(), "layer"])
    other = next(int(la) for la in scores["layer"] if int(la) != test_best)
    doc["meta"]["best_layer_dev"] = other
    (tmp_path / "moved.json").write_text(json.dumps(doc), encoding="utf-8")
    moved = ProbeResults.from_json(tmp_path / "moved.json")
    assert moved.best_layer_choice() == (other, "dev")
    assert f"best layer {other} (chosen on dev;" in headline(moved)
    assert f"best layer chosen on dev (seed mean): **{other}**" in structural(moved)
    # Without a recorded dev choice the texts say that it is the best test score.
    del doc["meta"]["best_layer_dev"]
    (tmp_path / "bare.json").write_text(json.dumps(doc), encoding="utf-8")
    bare = ProbeResults.from_json(tmp_path / "bare.json")
    assert bare.best_layer_choice() == (test_best, "test")
    assert "chosen on dev" not in headline(bare) and "the run chose none on dev" in headline(bare)
    assert "chosen on dev" not in structural(bare)
