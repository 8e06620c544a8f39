"""``python -m probing neurons`` on minilm-l6-mlm, small: the rankings, top-k vs random-k
probes and the ablation loss are written; k above the layer's dimension is refused."""

from __future__ import annotations

import json

from probing.cli.main import main


def test_neurons_cli_writes_rankings_probes_and_ablation(tmp_path, capsys):
    out = tmp_path / "out"
    args = ["neurons", "--model", "minilm-l6-mlm", "--layer", "3", "--train-sentences", "60",
            "--test-sentences", "30", "--heldout-sentences", "10", "--n-random", "2",
            "--quiet", "--out", str(out)]  # fmt: skip
    assert main([*args, "--ks", "385"]) == 2
    assert "k = 385" in capsys.readouterr().err and not out.exists()
    assert main([*args, "--ks", "1", "10"]) == 0
    result = json.loads((out / "minilm-l6-mlm__ud-ewt__neurons-pos-L3.json").read_text())
    assert len(set(result["rankings"]["probeless"])) == 100
    top10 = result["probes"]["probeless"][1]
    assert top10["k"] == 10 and top10["top_accuracy"] > top10["random_accuracy"]
    rows = result["ablation"]["rows"]
    assert [r["k"] for r in rows] == [1, 10]
    assert all(r["clean_loss"] > 0 for r in rows)
    assert rows[1]["probeless_loss"] != rows[1]["clean_loss"]
