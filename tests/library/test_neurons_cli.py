"""``python -m probing neurons`` on minilm-l6-mlm, small: the rankings, top-k vs random-k
probes and the ablation loss are written; k above the layer's dimension is refused."""

from __future__ import annotations

import json

from probing.cli.main import main


def test_neurons_cli_writes_rankings_probes_and_ablation(tmp_path, capsys):
    out = tmp_path / "out"
    args = ["neurons", "--model", "minilm-l6-mlm", "--layer", "3", "--train-sentences", "60",
            "--test-sentences", "30", "--heldout-sentences", "10", "--n-random", "3",
            "--quiet", "--out", str(out)]  # fmt: skip
    assert main([*args, "--ks", "385"]) == 2
    assert "k = 385" in capsys.readouterr().err and not out.exists()
    doc = tmp_path / "doc.md"
    doc.write_text("# t\n")  # no generated block: refused before any work
    assert main([*args, "--ks", "1", "10", "--doc", str(doc)]) == 2
    assert "generated:neurons:begin" in capsys.readouterr().err and not out.exists()
    doc.write_text(
        "# t\n\n<!-- generated:neurons:begin -->\nold\n<!-- generated:neurons:end -->\nend\n"
    )
    assert main([*args, "--ks", "1", "10", "--n-boot", "200", "--doc", str(doc)]) == 0
    result = json.loads((out / "minilm-l6-mlm__ud-ewt__neurons-pos-L3.json").read_text())
    assert len(set(result["rankings"]["probeless"])) == 100
    top10 = result["probes"]["rows"][1]
    assert top10["k"] == 10 and top10["probeless_accuracy"] > top10["random_accuracy"]
    comps = result["probes"]["comparisons"]["rows"]
    assert {(c["a"], c["b"]) for c in comps} == {
        (f"{r} top {k}", f"random {k}") for r in ("probeless", "elastic_net") for k in (1, 10)
    }
    assert all(c["ci_low"] <= c["diff"] <= c["ci_high"] for c in comps)
    rows = result["ablation"]["rows"]
    assert [r["k"] for r in rows] == [1, 10]
    assert all(r["clean_loss"] > 0 for r in rows)
    assert rows[1]["probeless_loss"] != rows[1]["clean_loss"]
    assert len(result["ablation"]["comparisons"]["rows"]) == 4
    text = doc.read_text()
    assert "old" not in text and text.endswith("<!-- generated:neurons:end -->\nend\n")
    assert "probeless top 10 vs random 10" in text  # the engine's lines, in the block
