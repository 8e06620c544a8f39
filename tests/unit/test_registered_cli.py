"""The registry's commands (issue 47): an analysis registered in a temporary registry gets a
working ``python -m probing`` subcommand, with its settings' ranges checked while parsing,
the shipped-file guard and its recorded command line, without an edit to ``cli/main.py``."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from probing import config
from probing.analyses import registry
from probing.analyses.registry import Analysis
from probing.cli import bounds, registered
from probing.cli.main import COMMANDS, build_parser
from probing.cli.main import main as cli
from probing.params import Bound, count, param

REPO = config.REPO_ROOT


@dataclass(frozen=True)
class ToyParams:
    """A toy analysis's settings."""

    size: int = param(4, "how many numbers", bound=count(1, 10))
    scale: float = param(1.0, "each number times this", bound=Bound(0.5, 2.0, float))
    shape: str = param("flat", "the numbers' shape", choices=("flat", "rising"))
    loud: bool = param(False, "print the numbers too")


def toy_run(encoders: list, params: ToyParams, progress) -> dict:
    """The toy's work: ``size`` numbers, with progress per number."""
    values = []
    for i in range(params.size):
        values.append(params.scale * (i if params.shape == "rising" else 1))
        progress("numbers", i + 1, params.size)
    if params.loud:
        print(values)
    return {"values": values, "n_models": len(encoders)}


TOY = Analysis(
    "toy",
    "a toy analysis of no models",
    ToyParams,
    f"{__name__}:toy_run",
    n_models=(0, 0),
    models=(),
)


@pytest.fixture
def toy_registry(monkeypatch):
    """The registry with the toy added (restored afterwards)."""
    monkeypatch.setattr(registry, "ANALYSES", {**registry.ANALYSES, "toy": TOY})
    return registry.ANALYSES


def test_a_registered_analysis_is_a_command(toy_registry, tmp_path, capsys):
    assert "toy" not in COMMANDS  # the hand-written table is untouched
    main_py = (REPO / "probing" / "cli" / "main.py").read_text(encoding="utf-8")
    assert "toy" not in main_py
    code = cli(["toy", "--size", "3", "--scale", "2", "--shape", "rising", "--out", str(tmp_path)])
    assert code == 0
    saved = json.loads((tmp_path / "toy.json").read_text(encoding="utf-8"))
    assert saved["result"] == {"values": [0.0, 2.0, 4.0], "n_models": 0}
    assert saved["settings"] == {"size": 3, "scale": 2.0, "shape": "rising", "loud": False}
    assert saved["argv"] == ["toy", "--size", "3", "--scale", "2.0", "--shape", "rising"]
    err = capsys.readouterr().err
    assert "3/3 numbers" in err and "wrote toy.json" in err
    # the recorded command line reproduces the run
    again = tmp_path / "again"
    assert cli([*saved["argv"], "--out", str(again), "--quiet"]) == 0
    assert json.loads((again / "toy.json").read_text())["result"] == saved["result"]
    assert capsys.readouterr().err == ""  # --quiet: no progress, no summary


@pytest.mark.parametrize(
    ("option", "value", "says"),
    [
        ("--size", "0", "must be a whole number from 1 to 10, not '0'"),
        ("--size", "2.5", "must be a whole number from 1 to 10, not '2.5'"),
        ("--scale", "3", "must be a number from 0.5 to 2, not '3'"),
        ("--scale", "nan", "must be a number from 0.5 to 2, not 'nan'"),
        ("--shape", "round", "invalid choice: 'round'"),
    ],
)
def test_a_value_out_of_range_is_one_error_line_and_exit_2(
    toy_registry, option, value, says, tmp_path, capsys
):
    with pytest.raises(SystemExit) as stop:
        cli(["toy", option, value, "--out", str(tmp_path)])
    assert stop.value.code == 2
    errors = [line for line in capsys.readouterr().err.splitlines() if "error:" in line]
    assert len(errors) == 1 and f"argument {option}: {says}" in errors[0], errors
    assert not any(tmp_path.iterdir())  # nothing written


def test_the_library_refuses_what_the_parser_refuses(toy_registry):
    from probing.errors import InvalidArgumentError

    with pytest.raises(InvalidArgumentError, match="--size must be a whole number from 1 to 10"):
        registry.get("toy").run([], ToyParams(size=11))


def test_a_registered_command_refuses_the_checkout(toy_registry, capsys, monkeypatch):
    monkeypatch.chdir(REPO)
    assert cli(["toy", "--out", "results"]) == 2
    err = capsys.readouterr().err
    assert "results/toy.json" in err and "--overwrite" in err
    assert not (REPO / "results" / "toy.json").exists()


def test_the_help_lists_the_command_and_its_ranges(toy_registry, capsys):
    with pytest.raises(SystemExit):
        cli(["toy", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "a toy analysis of no models" in text
    assert "how many numbers (a whole number from 1 to 10; default 4)" in text
    assert "--loud" in text and "--overwrite" in text


def _subparser(command: str):
    return build_parser(command)._subparsers._group_actions[0].choices[command]


@pytest.mark.parametrize("name", list(registry.ANALYSES))
def test_every_registered_command_has_every_number_bounded(name):
    sub = _subparser(name)
    assert bounds.unbounded(sub) == []
    assert name not in bounds.BOUNDS  # its ranges live on its settings classes
    options = {o for a in sub._actions for o in a.option_strings}
    for m in registry.get(name).models:
        assert "--" + m.name.replace("_", "-") in options
    assert {"--out", "--quiet", "--overwrite"} <= options


@pytest.mark.parametrize("name", list(registry.ANALYSES))
def test_the_writer_names_its_files_before_the_run(name, tmp_path):
    """Every entry's writer says what it will write from the parsed line alone (the guard)."""
    base = ["--model-a", "x"] if name == "cka" else []
    args = build_parser(name).parse_args([name, *base, "--out", str(tmp_path)])
    job = registered.job_of(args)
    files = registered.writer_of(job.analysis).files(job)
    assert files and all(isinstance(p, Path) and p.parent == tmp_path for p in files)
    assert job.argv[0] == name and job.models  # every model named, default ones too


def test_extras_parse_with_their_ranges(capsys):
    args = build_parser("attention-stats").parse_args(
        ["attention-stats", "--parsers", "--parsers-sentences", "all", "--out", "x"]
    )
    job = registered.job_of(args)
    assert job.extras.parsers and job.extras.parsers_sentences is None
    assert [p.name for p in registered.writer_of(job.analysis).files(job)][-2:] == [
        "attention_parsers.csv",
        "attention_parsers.json",
    ]
    with pytest.raises(SystemExit):
        build_parser("attention-stats").parse_args(
            ["attention-stats", "--parsers-sentences", "0", "--out", "x"]
        )
    assert "must be a whole number from 1 to 100,000, or 'all', not '0'" in (
        capsys.readouterr().err
    )


def test_too_many_models_are_refused_before_any_is_loaded(monkeypatch, tmp_path, capsys):
    import probing.models.registry as models

    def touched(*args: object, **kwargs: object):
        raise AssertionError("a model was loaded before the count was checked")

    monkeypatch.setattr(models, "load_encoder", touched)
    argv = ["contextuality", *("--model", "minilm-l6") * 9, "--out", str(tmp_path / "o")]
    assert cli(argv) == 2
    assert "contextuality takes 1 to 8 models, not 9." in capsys.readouterr().err


def _bounded_fields() -> list[tuple[str, str, Bound]]:
    import dataclasses

    out = []
    for name, analysis in registry.ANALYSES.items():
        for cls in (analysis.params, analysis.extras):
            for f in dataclasses.fields(cls) if cls is not None else ():
                if f.metadata["spec"].bound is not None:
                    out.append((name, f.name, f.metadata["spec"].bound))
    return out


@pytest.mark.parametrize(("name", "field", "bound"), _bounded_fields())
def test_every_registered_range_is_checked_while_parsing(name, field, bound, tmp_path, capsys):
    """Just past each end of each registered setting's range: exit 2, the range in words."""
    option = "--" + field.replace("_", "-")
    past = (bound.lo - 1, bound.hi + 1) if bound.kind is int else (bound.lo - 0.5, bound.hi * 2 + 1)
    for value in past:
        text = str(int(value)) if bound.kind is int else repr(value)
        with pytest.raises(SystemExit) as stop:
            cli([name, f"{option}={text}", "--out", str(tmp_path / "o")])
        err = capsys.readouterr().err
        assert stop.value.code == 2 and f"argument {option}: must be {bound.describe()}" in err
    assert not (tmp_path / "o").exists()


@pytest.mark.slow
def test_attention_stats_parsers_write_their_tables(tmp_path, capsys):
    """The writer's own options (``extras``) reach it: ``--parsers`` scores heads as parsers
    (its progress once took the statistics' three arguments and failed)."""
    argv = ["attention-stats", "--n-sentences", "2", "--parsers", "--parsers-sentences", "4"]
    assert cli([*argv, "--out", str(tmp_path)]) == 0, capsys.readouterr().err
    meta = json.loads((tmp_path / "attention_parsers.json").read_text(encoding="utf-8"))
    assert meta["n_sentences"] + meta["skipped"] == 4 and meta["split"] == "dev"
    stats = json.loads((tmp_path / "head_statistics.json").read_text(encoding="utf-8"))
    assert stats["argv"] == ["attention-stats", "--model", "minilm-l6", *argv[1:]]
    assert "4/4 heads as parsers" in capsys.readouterr().err
