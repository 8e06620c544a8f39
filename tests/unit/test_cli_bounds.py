"""Every CLI argument's bounds, table-driven: a value outside its range is refused while
parsing, with a message naming the argument and its valid range, exit status 2, in under a
second and before any model or data is touched; a valid value that means hours of work says
the cost model's estimate before it starts."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import pytest

from probing.cli import bounds
from probing.cli.main import COMMANDS, build_parser
from probing.cli.main import main as cli

if TYPE_CHECKING:
    import argparse

# Positional arguments and required options each command needs to get as far as parsing.
REQUIRED: dict[str, list[str]] = {
    "fill-mask": ["The [MASK] sat."],
    "sweep": ["spec.toml"],
    "attention-stats": ["--out", "/nonexistent/contextlens-out"],
}


def _flag(command: str, dest: str) -> str:
    sub = _subparser(command)
    return next(a.option_strings[0] for a in sub._actions if a.dest == dest)


def _subparser(command: str) -> argparse.ArgumentParser:
    parser = build_parser(command)
    return parser._subparsers._group_actions[0].choices[command]


def _bad_values(b: bounds.Bound) -> list[str]:
    if b.choices:
        return ["", "pooled", f"{b.choices[0]},nope"]
    if b.items is not None:
        lo, hi = b.items
        good = "1"
        values = ["", "a,b", ",".join([good] * (hi + 1))]
        if lo > 1:
            values.append(",".join([good] * (lo - 1)))
        values.append(",".join([good] * (lo - 1) + [str(b.hi * 10 + 1)]))
        return values
    below = b.lo - 1 if b.kind is int else b.lo - max(abs(b.lo), 1e-9) * 0.5 - 1e-12
    above = b.hi + 1 if b.kind is int else b.hi * 2 + 1
    values = [str(int(below)) if b.kind is int else repr(below), str(above), "x", "1e999999"]
    if b.kind is float:
        values += ["nan", "inf"]
    if not b.all_ok:
        values.append("all")
    return values


CASES = [
    (command, dest, value)
    for command, table in bounds.BOUNDS.items()
    for dest, b in table.items()
    for value in _bad_values(b)
]


@pytest.fixture
def nothing_heavy(monkeypatch):
    """Reading data or loading a model during these checks is a failure."""
    import probing.datasets
    import probing.models.registry

    def touched(*args: object, **kwargs: object) -> NoReturn:
        raise AssertionError("data or a model was touched before the arguments were checked")

    monkeypatch.setattr(probing.datasets, "read_sentences", touched)
    monkeypatch.setattr(probing.models.registry, "load_encoder", touched)


_warm: set[str] = set()


@pytest.mark.parametrize(("command", "dest", "value"), CASES)
def test_out_of_range_values_are_refused_while_parsing(command, dest, value, nothing_heavy, capsys):
    flag = _flag(command, dest)
    argv = [command, *REQUIRED.get(command, []), f"{flag}={value}"]
    if command not in _warm:  # the command's module imported once, outside the timing
        _warm.add(command)
        with pytest.raises(SystemExit):
            cli(argv)
        capsys.readouterr()
    # CPU seconds, not wall: the check is that refusing does no heavy work, and wall time on
    # a shared 2-core machine measures the other jobs (2.1 s at load 9 for a 0.05 s check).
    start = time.process_time()
    with pytest.raises(SystemExit) as exit_:
        cli(argv)
    took = time.process_time() - start
    err = capsys.readouterr().err
    assert exit_.value.code == 2
    assert f"argument {flag}: must be " in err, err
    b = bounds.BOUNDS[command][dest]
    assert b.describe() in err  # the valid range, in words
    assert "Traceback" not in err and "unexpected" not in err
    assert took < 1.0


# The commands whose ranges this table declares; commands added later get the fallback
# range (finite, |x| <= 1e12) until their own entry is written.
DECLARED = [*bounds.BOUNDS, "models", "encode", "data"]


@pytest.mark.parametrize("command", DECLARED)
def test_every_numeric_option_declares_its_range(command):
    assert command in COMMANDS
    assert bounds.unbounded(_subparser(command)) == []


def test_an_undeclared_number_still_gets_a_typed_range(capsys):
    import argparse

    p = argparse.ArgumentParser(prog="x")
    p.add_argument("--steps", type=int)
    bounds.apply("no-such-command", p)
    assert bounds.unbounded(p) == ["--steps"]
    with pytest.raises(SystemExit) as exit_:
        p.parse_args(["--steps", "9" * 30])
    assert exit_.value.code == 2
    assert "argument --steps: must be a whole number from -1e+12 to 1e+12, not" in (
        capsys.readouterr().err
    )


@pytest.mark.parametrize(
    ("argv", "parsed"),
    [
        (["--max-train-sentences", "all"], {"max_train_sentences": None}),
        (["--max-train-sentences", "250"], {"max_train_sentences": 250}),
        (["--layers", "0, 3,-1"], {"layers": [0, 3, -1]}),
        (["--cs", "0.1,1"], {"cs": [0.1, 1.0]}),
        (["--per-doc", "20,all,50"], {"per_doc": "20,all,50"}),
        (["--sentence-pooling", "cls,mean"], {"sentence_pooling": "cls,mean"}),
        (["--seeds", "100"], {"seeds": 100}),
    ],
)
def test_valid_values_parse_to_what_the_command_uses(argv, parsed):
    args = build_parser("probe").parse_args(["probe", *argv])
    for key, value in parsed.items():
        assert getattr(args, key) == value


# -- checks after parsing, still before any data ---------------------------------------------


@pytest.fixture
def allow_models(monkeypatch, minilm):
    """Loading a model is allowed (the layer check may need its depth): the embedded one."""
    import probing.models.registry

    monkeypatch.setattr(probing.models.registry, "load_encoder", lambda name, *a, **k: minilm)


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--layers", "99"], "--layers: minilm-l6 has layers 0 to 6 (or -7 to -1"),
        (["--layers", "0,-8"], "not -8"),
        (["--model", "elmo-mini", "--layers", "3"], "--layers: elmo-mini has layers 0 to 2"),
        (
            ["--seeds", "2", "--mdl", "--mdl-seeds", "3"],
            "--mdl-seeds must be from 1 to --seeds (2)",
        ),
        (["--task", "supersense", "--dataset", "ud-ewt"], "runs on semcor, not 'ud-ewt'"),
    ],
)
def test_probe_refuses_before_reading_data(
    argv, says, nothing_heavy, allow_models, tmp_path, capsys
):
    cli(["probe", *argv, "--out", str(tmp_path)])  # the modules imported outside the timing
    capsys.readouterr()
    start = time.process_time()
    code = cli(["probe", *argv, "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 2 and says in err, err
    assert time.process_time() - start < 1.0
    assert not any(tmp_path.iterdir())


def test_a_valid_but_huge_run_says_its_estimate_before_starting(
    allow_models, tmp_path, monkeypatch, capsys
):
    import probing.probes.run

    class Started(Exception):
        pass

    def start(*args: object, **kwargs: object) -> NoReturn:
        raise Started

    monkeypatch.setattr(probing.probes.run, "probe_layers", start)
    argv = [
        "probe",
        "--task",
        "pos",
        "--max-train-sentences",
        "all",
        "--seeds",
        "100",
        "--mdl",
        "--mdl-seeds",
        "100",
        "--out",
        str(tmp_path),
    ]
    monkeypatch.setenv("CONTEXTLENS_DEBUG", "1")  # the sentinel is re-raised, not reported
    with pytest.raises(Started):
        cli(argv)
    err = capsys.readouterr().err
    assert "note: this run takes about " in err and " h on 2 CPU cores" in err, err


def test_a_sweep_resolves_every_model_before_the_first_cell(tmp_path, capsys):
    out = tmp_path / "sweep-out"
    spec = tmp_path / "spec.toml"
    spec.write_text(
        f'out = "{out}"\nmodels = ["../../etc"]\nseeds = [0, 1, 2]\n[[tasks]]\ntask = "pos"\n',
        encoding="utf-8",
    )
    cli(["sweep", str(spec)])  # the modules imported outside the timing
    capsys.readouterr()
    start = time.process_time()
    code = cli(["sweep", str(spec)])
    err = capsys.readouterr().err
    assert code == 2 and "`models`: '../../etc' cannot be used" in err, err
    assert not out.exists()  # nothing written, nothing extracted
    assert time.process_time() - start < 5.0


def test_a_sweep_spec_that_is_not_utf8_is_named(tmp_path, capsys):
    spec = tmp_path / "spec.toml"
    spec.write_bytes(b'out = "x"\nmodels = ["\xff\xfe"]\n')
    assert cli(["sweep", str(spec)]) == 2
    assert "is not UTF-8 text" in capsys.readouterr().err


def test_cases_cover_every_bound():
    assert {(c, d) for c, d, _ in CASES} == {(c, d) for c, t in bounds.BOUNDS.items() for d in t}
    assert Path(bounds.__file__).read_text().count("import torch") == 0


class _Gadget:
    """Unpickling this would call a function of the pickle's choosing."""

    def __reduce__(self) -> tuple[Callable[[str], str], tuple[str]]:
        return (str.upper, ("ran",))


def test_a_pickled_checkpoint_is_refused_with_a_typed_message(tmp_path, capsys):
    import json
    import pickle

    folder = tmp_path / "evil"
    folder.mkdir()
    (folder / "pytorch_model.bin").write_bytes(pickle.dumps({"weight": _Gadget()}))
    (folder / "config.json").write_text(
        json.dumps(
            {
                "model_type": "bert",
                "hidden_size": 32,
                "num_hidden_layers": 2,
                "num_attention_heads": 2,
                "intermediate_size": 64,
                "vocab_size": 100,
            }
        )
    )
    (folder / "vocab.txt").write_text(
        "\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a"])
    )
    assert cli(["encode", "hi", "--model", str(folder)]) == 2
    err = capsys.readouterr().err
    assert "evil/pytorch_model.bin holds pickled objects other than tensors" in err, err
    assert "unexpected" not in err and "Unsupported operand" not in err
