"""The ``probe`` and ``data`` CLI commands, run in-process on a tiny real configuration."""

from __future__ import annotations

import argparse
import json

import pandas as pd
import pytest

from probing.cli.probe import main
from probing.probes import COLUMNS, ProbeResults
from probing.probes.store import output_stem


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CONTEXTLENS_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_probe_cli_writes_csv_json_and_html(minilm, cache, tmp_path, capsys):
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
            "0,2",
            "--out",
            str(out),
            "--max-train-sentences",
            "60",
            "--max-dev-sentences",
            "20",
            "--max-test-sentences",
            "30",
            "--cs",
            "0.1",
            "--n-boot",
            "100",
            "--seed",
            "0",
            "--quiet",
        ]
    )
    assert code == 0
    stem = out / "minilm-l6__ud-ewt__pos"
    for ext in ("csv", "json", "html"):
        assert stem.with_suffix(f".{ext}").is_file()

    table = pd.read_csv(stem.with_suffix(".csv"))
    assert list(table.columns) == COLUMNS
    assert {
        "model",
        "task",
        "dataset",
        "layer",
        "metric",
        "value",
        "ci_low",
        "ci_high",
        "control",
        "selectivity",
    } <= set(table.columns)
    linear = table[(table.probe == "linear") & (table.metric == "accuracy")]
    assert sorted(linear.layer) == [0, 2]
    assert (linear.selectivity - (linear.value - linear.control)).abs().max() < 1e-5

    doc = json.loads(stem.with_suffix(".json").read_text())
    assert doc["model"] == "minilm-l6" and doc["metric"] == "accuracy"
    assert doc["scalar_mix"]["layers"] == [0, 2]
    assert abs(sum(doc["scalar_mix"]["weights"]) - 1) < 1e-6
    assert doc["meta"]["command"].startswith("python -m probing probe --model minilm-l6")
    back = ProbeResults.from_json(stem.with_suffix(".json"))
    assert back.best_layer() in (0, 2) and len(back.table) == len(table)

    html = stem.with_suffix(".html").read_text()
    assert "plotly" in html and "centre of gravity" in html and "control task" in html
    printed = capsys.readouterr().out
    assert "centre of gravity" in printed and "wrote" in printed


def test_probe_cli_rejects_a_task_on_the_wrong_data_set(capsys):
    assert main(["--task", "wsd", "--dataset", "ud-ewt", "--quiet"]) == 2
    assert "runs on semcor" in capsys.readouterr().err


def test_output_names_are_file_safe():
    assert output_stem("minilm-l6", "ud-ewt", "pos") == "minilm-l6__ud-ewt__pos"
    assert output_stem("google-bert/bert-base-cased", "semcor", "wsd") == (
        "bert-base-cased__semcor__wsd"
    )


def test_data_list_and_download_arguments(data_dir, capsys):
    from probing.cli import data as cli_data

    parser = argparse.ArgumentParser()
    cli_data.add_arguments(parser)
    assert cli_data.run(parser.parse_args(["list"])) == 0
    out = capsys.readouterr().out
    for name in ("ud-ewt", "semcor", "brown", "wordnet"):
        assert name in out
    assert "CC BY-SA 4.0" in out and str(data_dir) in out
    rows = {r["name"]: r for r in cli_data.dataset_status()}
    assert rows["ud-ewt"]["present"] is True
    args = parser.parse_args(["download", "semcor", "--base-url", "http://127.0.0.1:9"])
    assert (args.name, args.base_url, args.force) == ("semcor", "http://127.0.0.1:9", False)
    assert cli_data.run(parser.parse_args(["download", "nope"])) == 2
    with pytest.raises(SystemExit):
        parser.parse_args([])  # a sub-command is required
