"""The CLI never replaces shipped results in results/ unless asked (--overwrite); the rule
for every writing command and models/ is tested in tests/unit/test_shipped_files.py."""

from __future__ import annotations

import hashlib

import pytest

import probing.shipped as shipped
from probing import config
from probing.cli.contextuality import add_arguments as ctx_arguments
from probing.cli.probe import main

SHIPPED_WSD = config.REPO_ROOT / "results" / "minilm-l6__semcor__wsd.json"


def _digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_probe_refuses_to_replace_a_shipped_run_before_any_work(capsys, monkeypatch):
    # The README's old example: a 2,000-sentence WSD run into results/ replaced the full run.
    before = _digest(SHIPPED_WSD)
    import probing.probes.run as probe_run

    monkeypatch.setattr(
        probe_run,
        "probe_layers",
        lambda *a, **k: (_ for _ in ()).throw(AssertionError("no work may start")),
    )
    code = main(
        [
            "--model",
            "minilm-l6",
            "--task",
            "wsd",
            "--dataset",
            "semcor",
            "--out",
            str(config.REPO_ROOT / "results"),
            "--quiet",
        ]
    )
    assert code == 2
    err = capsys.readouterr().err
    assert "results/minilm-l6__semcor__wsd.json" in err and "--overwrite" in err
    assert _digest(SHIPPED_WSD) == before


def test_overwrite_replaces_and_other_folders_are_free(minilm, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("CONTEXTLENS_CACHE_DIR", str(tmp_path / "cache"))
    fake_results = tmp_path / "results"
    fake_results.mkdir()
    (fake_results / "minilm-l6__ud-ewt__pos.json").write_text("{}")
    monkeypatch.setattr(shipped, "SHIPPED_DIR", fake_results)
    args = [
        "--model",
        "minilm-l6",
        "--task",
        "pos",
        "--dataset",
        "ud-ewt",
        "--layers",
        "0",
        "--max-train-sentences",
        "40",
        "--max-dev-sentences",
        "10",
        "--max-test-sentences",
        "10",
        "--cs",
        "0.1",
        "--n-boot",
        "20",
        "--no-scalar-mix",
        "--no-control",
        "--quiet",
    ]
    assert main([*args, "--out", str(fake_results)]) == 2
    assert (fake_results / "minilm-l6__ud-ewt__pos.json").read_text() == "{}"
    assert main([*args, "--out", str(fake_results), "--overwrite"]) == 0
    assert (fake_results / "minilm-l6__ud-ewt__pos.json").read_text() != "{}"
    assert main([*args, "--out", str(tmp_path / "scratch")]) == 0


def test_contextuality_has_the_same_guard():
    import argparse

    p = argparse.ArgumentParser()
    ctx_arguments(p)
    assert p.parse_args(["--overwrite"]).overwrite


def test_the_genre_readme_example_is_refused_for_every_strategy_file(capsys, monkeypatch):
    # issue 33: the guard checked "…__genre.*", a name no run writes; the run writes genre-cls …
    import probing.probes.sentence as sentence

    monkeypatch.setattr(
        sentence,
        "probe_sentences",
        lambda *a, **k: (_ for _ in ()).throw(AssertionError("no work may start")),
    )
    before = _digest(config.REPO_ROOT / "results" / "minilm-l6__brown__genre-cls.json")
    code = main(
        [
            "--model",
            "minilm-l6",
            "--task",
            "genre",
            "--dataset",
            "brown",
            "--sentence-pooling",
            "cls,mean,attention",
            "--quiet",
        ]
    )
    assert code == 2
    err = capsys.readouterr().err
    for strategy in ("cls", "mean", "attention"):
        assert f"results/minilm-l6__brown__genre-{strategy}.json" in err
    assert "genre-max" not in err  # not asked for, not written
    assert _digest(config.REPO_ROOT / "results" / "minilm-l6__brown__genre-cls.json") == before


def _written(folder):
    return {p for p in folder.rglob("*") if p.is_file() and not p.name.startswith(".")}


def test_the_guard_lists_every_file_a_probe_run_writes(minilm, tmp_path, monkeypatch):
    import argparse

    from probing.cli.probe import add_arguments, output_files

    monkeypatch.setenv("CONTEXTLENS_CACHE_DIR", str(tmp_path / "cache"))
    out = tmp_path / "out"
    args = [
        "--model",
        "minilm-l6",
        "--task",
        "pos",
        "--dataset",
        "ud-ewt",
        "--layers",
        "0",
        "--max-train-sentences",
        "40",
        "--max-dev-sentences",
        "10",
        "--max-test-sentences",
        "10",
        "--cs",
        "0.1",
        "--n-boot",
        "20",
        "--no-scalar-mix",
        "--no-control",
        "--quiet",
        "--save-probes",
        "--out",
        str(out),
    ]
    assert main(args) == 0
    p = argparse.ArgumentParser()
    add_arguments(p)
    assert _written(out) == set(output_files(p.parse_args(args)))


def test_the_guard_lists_every_file_a_genre_run_writes(minilm, tmp_path, monkeypatch):
    import argparse

    from probing.cli.probe import add_arguments, output_files

    monkeypatch.setenv("CONTEXTLENS_CACHE_DIR", str(tmp_path / "cache"))
    out = tmp_path / "out"
    args = [
        "--model",
        "minilm-l6",
        "--task",
        "genre",
        "--dataset",
        "brown",
        "--per-doc",
        "1,1,1",
        "--sentence-pooling",
        "mean,cls",
        "--cs",
        "1",
        "--n-boot",
        "20",
        "--quiet",
        "--out",
        str(out),
    ]
    assert main(args) == 0
    p = argparse.ArgumentParser()
    add_arguments(p)
    assert _written(out) == set(output_files(p.parse_args(args)))


def test_other_writers_into_results_have_the_guard(capsys):
    from probing.analyses.elmo_directions import main as directions_main
    from probing.cli.main import main as cli_main
    from probing.errors import ShippedFilesError
    from probing.probes.sentence import main as paired_main

    results = config.REPO_ROOT / "results"
    code = cli_main(
        [
            "attention-stats",
            "--model",
            "minilm-l6",
            "--n-sentences",
            "5",
            "--out",
            str(results / "head-statistics"),
        ]
    )
    assert code == 2 and "head_statistics.csv" in capsys.readouterr().err
    with pytest.raises(ShippedFilesError, match="genre-paired.json"):
        paired_main(["--model", "minilm-l6", "--paired", "mean,cls"])
    with pytest.raises(ShippedFilesError, match="wsd-direction"):
        directions_main(["--model", "elmo-mini"])


def test_the_training_modules_own_entry_points_have_the_guard(monkeypatch):
    # python -m probing.training.elmo_lm … runs without the CLI's dispatcher (issue 48)
    from probing.errors import ShippedFilesError
    from probing.training import elmo_lm, elmo_softmax, mlm_head

    def no_training(*_a, **_k):
        raise AssertionError("no training may start")

    monkeypatch.setattr(elmo_lm, "run", no_training)
    monkeypatch.setattr(elmo_softmax, "run", no_training)
    monkeypatch.setattr(mlm_head, "train", no_training)
    for entry, folder in (
        (elmo_lm.main, "models/elmo-mini/"),
        (elmo_softmax.main, "models/elmo-mini/"),
        (mlm_head.main, "models/minilm-l6-mlm/"),
    ):
        with pytest.raises(ShippedFilesError, match=folder):
            entry([])
    with pytest.raises(ShippedFilesError, match="models/elmo-mini/README.md"):
        elmo_lm.main(["--write-card", str(config.REPO_ROOT / "models" / "elmo-mini")])
