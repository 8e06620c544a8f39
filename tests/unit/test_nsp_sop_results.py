"""The committed NSP-vs-SOP measurement is re-made from its per-pair file, and the engine's
calls follow the data (a real gap is called, no gap is not)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np

from probing.analyses.nsp_sop import cell_replicates, differences
from probing.probes.compare import Engine

REPO = Path(__file__).resolve().parents[2]
OUT = REPO / "results" / "nsp-sop"


def _script():
    spec = importlib.util.spec_from_file_location("nsp_sop", REPO / "results" / "nsp_sop.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_summary_and_doc_block_are_made_from_the_committed_items():
    script = _script()
    rows = script.read_items(OUT / "items.csv")
    summary = script.summarise(rows)
    assert summary == json.loads((OUT / "summary.json").read_text(encoding="utf-8"))
    doc = (REPO / "docs" / "course_objectives.md").read_text(encoding="utf-8")
    assert script.block(summary) in doc
    # the per-pair file is what the heads said: correctness agrees with the stored P
    for r in rows[:500]:
        for head in ("nsp", "sop", "sop-top2"):
            p = float(r[f"p_continue_{head}"])
            if abs(p - 0.5) > 1e-5:
                assert int(r[f"correct_{head}"]) == int((p < 0.5) == bool(int(r["label"])))
    # the card's held-out number is the same cell
    for head, own in (("nsp", "other_doc"), ("sop", "swapped"), ("sop-top2", "swapped")):
        card = json.loads((REPO / "models" / f"minilm-l6-{head}" / "head.json").read_text())
        cell = next(a for a in summary["accuracies"] if (a["head"], a["set"]) == (head, own))
        assert card["training"]["test"] == cell


def _toy(right_other: float, right_swapped: float, n_docs: int = 60, per_doc: int = 6):
    rng = np.random.default_rng(0)
    kinds, labels, docs, pred = [], [], [], []
    for d in range(n_docs):
        for _ in range(per_doc):
            for kind, label, p_right in (
                ("next", 0, 0.8),
                ("other_doc", 1, right_other),
                ("same_doc", 1, 0.5),
                ("swapped", 1, right_swapped),
            ):
                kinds.append(kind)
                labels.append(label)
                docs.append(d)
                pred.append(label if rng.random() < p_right else 1 - label)
    return kinds, np.array(labels), np.array(docs), np.array(pred)


def _row(diffs, a, b):
    return next(d for d in diffs if (d.a, d.b) == (a, b))


def test_the_engine_calls_a_gap_and_not_its_absence():
    kinds, labels, docs, pred = _toy(right_other=0.9, right_swapped=0.2)
    reps = cell_replicates(kinds, labels, docs, {"nsp": pred}, Engine(n_boot=500, seed=0))
    diffs = differences(reps)
    assert _row(diffs, "nsp other_doc", "nsp swapped").called
    assert _row(diffs, "nsp other_doc", "chance").called
    kinds, labels, docs, pred = _toy(right_other=0.2, right_swapped=0.2)
    reps = cell_replicates(kinds, labels, docs, {"nsp": pred}, Engine(n_boot=500, seed=0))
    diffs = differences(reps)
    assert not _row(diffs, "nsp other_doc", "nsp swapped").called
    assert all(not np.isnan(d.p_holm) for d in diffs)  # one Holm family
