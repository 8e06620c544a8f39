"""Every run carries its comparison table, and ``probe --compare`` prints it (issue 27)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from probing.cli.probe import main
from probing.probes import ProbeResults
from probing.probes.reapply import load_counts

if TYPE_CHECKING:
    from probing.features import Features


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CONTEXTLENS_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_probe_compare_prints_and_stores_the_table(minilm, cache, tmp_path, capsys):
    out = tmp_path / "results"
    code = main(
        [
            "--model",
            "minilm-l6",
            "--task",
            "pos",
            "--dataset",
            "ud-ewt",
            "--layers",
            "0,2,4",
            "--out",
            str(out),
            "--max-train-sentences",
            "60",
            "--max-train-words",
            "500",
            "--max-dev-sentences",
            "20",
            "--max-test-sentences",
            "40",
            "--cs",
            "0.1",
            "--n-boot",
            "200",
            "--seeds",
            "2",
            "--no-scalar-mix",
            "--quiet",
            "--compare",
            "--save-probes",
        ]
    )
    assert code == 0
    printed = capsys.readouterr().out
    assert "layer 2 − layer 0" in printed and "p Holm" in printed
    assert "task − control (selectivity)" in printed
    path = out / "minilm-l6__ud-ewt__pos.json"
    doc = json.loads(path.read_text())
    table = doc["comparisons"]
    assert table["metric"] == "accuracy" and "Holm" in table["method"]
    pairs = {(r["a"], r["b"]) for r in table["rows"]}
    best = doc["meta"]["best_layer"]["layer"]
    others = [la for la in (0, 2, 4) if la != best]
    # best vs each, and the adjacent pair not involving the best layer (if any)
    assert {(f"layer {best}", f"layer {la}") for la in others} <= pairs
    # best vs each other layer, plus the adjacent pair without the best (none if it is 2)
    assert len(table["rows"]) == (2 if best == 2 else 3)
    for r in table["rows"]:
        assert r["ci_low"] <= r["diff"] <= r["ci_high"]
        assert r["p"] <= r["p_holm"] <= 1
        assert len(r["per_seed"]) == 2  # two seeds, each seed's own difference
    # The row's difference is the difference of the two layers' seed-mean accuracies.
    rows = ProbeResults.from_json(path).layer_scores().set_index("layer")["value"]
    r = table["rows"][-1]
    la, lb = (int(x.split()[1]) for x in (r["a"], r["b"]))
    assert r["diff"] == pytest.approx(rows[la] - rows[lb], abs=1e-9)
    assert len(table["selectivity"]) == 3
    assert ProbeResults.from_json(path).comparisons == table
    # The per-sentence counts beside it give the same scores, per seed, task and control.
    stored = load_counts(out / "sentence-scores" / "minilm-l6__ud-ewt__pos.safetensors")
    assert stored.unit == "ud-ewt:test" and stored.n_sentences == 40
    assert {"layer 0", "layer 2", "layer 4", "control 0", "control 4"} <= set(stored.cells)
    assert stored.cells["layer 2"].seeds == (0, 1)
    assert stored.cells["layer 2"].points.mean() == pytest.approx(rows[2], abs=1e-12)


def test_structural_probes_run_several_seeds_and_fold_them_into_the_table(minilm):
    import itertools

    from probing.datasets import read_sentences
    from probing.features import features_of_sentences
    from probing.probes.runners.structural import structural_features

    def feats(split: str, n: int) -> Features:
        sents = list(itertools.islice(read_sentences("ud-ewt", split), n))
        return features_of_sentences(minilm, sents, "head", layers=[0, 3])

    res = structural_features(
        {"train": feats("train", 40), "dev": feats("dev", 10), "test": feats("test", 20)},
        "dep-distance",
        model="minilm-l6",
        dataset="ud-ewt",
        n_boot=100,
        seeds=2,
        rank=16,
    )
    assert res.meta["seeds"] == [0, 1]
    rows = res.layer_scores().set_index("layer")
    assert (rows["seeds"] == 2).all() and rows["sd"].notna().all()
    for layer in (0, 3):
        counts = res.sentence_counts[f"layer {layer}"]
        assert counts.seeds == (0, 1)
        # A row is the mean of its seeds' scores, each seed's own probe.
        assert rows.loc[layer, "value"] == pytest.approx(counts.points.mean())
    (row,) = res.comparisons["rows"]
    assert len(row["per_seed"]) == 2 and "2 seeds" in res.comparisons["note"]
