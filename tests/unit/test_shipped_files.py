"""Nothing that ships in the repository is written without ``--overwrite`` (issue 48): every
command that writes (train-*, --write-card, sweep, the results writers, models fetch, data
download) is refused, exit status 2, before any work, when it would write into ``results/``,
``models/`` or elsewhere in the checkout, and ``git status`` stays as it was; an empty
``--out ""`` is refused rather than taken for the current directory. Pointed elsewhere, the
same command passes the guard (the work itself is replaced by a stub here: nothing trains)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import types
from pathlib import Path

import pytest

import probing.shipped as shipped
from probing import config
from probing.cli.main import main
from probing.errors import ContextLensError, ShippedFilesError

REPO = config.REPO_ROOT
HAS_GIT = (REPO / ".git").exists() and shutil.which("git") is not None
# Folders that other work edits while these tests run; the commands here never write there.
SOURCE = ("probing/", "ui/", "pages/", "tests/", "docs/", "bench/", "deploy/")


def _status() -> set[str]:
    """``git status --porcelain`` lines outside the source folders (untracked files one by
    one), or an empty set without git."""
    if not HAS_GIT:
        return set()
    out = subprocess.run(
        ["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=all"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return {line for line in out.splitlines() if not line[3:].startswith(SOURCE)}


@pytest.fixture
def unchanged_checkout():
    """Fails the test when it leaves a new or changed file in the checkout."""
    before = _status()
    yield
    assert _status() - before == set()


class WorkStarted(ContextLensError):
    """Raised by the stubs that stand for the work: the guard let the command through."""


def _no_work(*_args, **_kwargs):
    raise WorkStarted("work started")


@pytest.fixture
def stub_training(monkeypatch):
    """The training modules replaced by stubs whose ``run`` records its call."""
    calls: list[str] = []
    for module in ("elmo_lm", "elmo_softmax", "mlm_head", "pair_heads"):
        fake = types.ModuleType(f"probing.training.{module}")
        fake.run = lambda args, _m=module: calls.append(_m) or 0
        monkeypatch.setitem(sys.modules, f"probing.training.{module}", fake)
    return calls


@pytest.fixture
def no_model_loads(monkeypatch):
    """Loading a model (the first work of every results writer) raises :class:`WorkStarted`."""
    import probing.models.registry as registry

    monkeypatch.setattr(registry, "load_encoder", _no_work)


# -- the training commands and --write-card --------------------------------------------------

TRAIN = {
    "train-elmo": ("elmo_lm", "models/elmo-mini/"),
    "train-elmo-softmax": ("elmo_softmax", "models/elmo-mini/"),
    "train-mlm-head": ("mlm_head", "models/minilm-l6-mlm/"),
    "train-pair-heads": ("pair_heads", "models/"),
}


@pytest.mark.parametrize("command", list(TRAIN))
def test_training_refuses_the_shipped_model_folder(
    command, stub_training, unchanged_checkout, capsys
):
    # the issue: `train-elmo-softmax --epochs 1` replaced models/elmo-mini/softmax.safetensors
    assert main([command]) == 2
    err = capsys.readouterr().err
    assert TRAIN[command][1] in err and "--overwrite" in err and "--export-dir" in err
    assert stub_training == []  # refused before the training module was even imported


@pytest.mark.parametrize("command", list(TRAIN))
def test_training_into_a_folder_of_ones_own_passes_the_guard(command, stub_training, tmp_path):
    extra = {"train-elmo-softmax": "--work-dir", "train-pair-heads": "--work-dir"}.get(
        command, "--checkpoint-dir"
    )
    args = [command, "--export-dir", str(tmp_path / "export"), extra, str(tmp_path / "work")]
    assert main(args) == 0
    assert stub_training == [TRAIN[command][0]]


@pytest.mark.parametrize("command", list(TRAIN))
def test_overwrite_lets_training_write_the_shipped_model(command, stub_training):
    assert main([command, "--overwrite"]) == 0
    assert stub_training == [TRAIN[command][0]]


@pytest.mark.parametrize(
    "command, flag, folder",
    [
        ("train-elmo", "--checkpoint-dir", "models/elmo-mini-checkpoints"),
        ("train-mlm-head", "--checkpoint-dir", "results/checkpoints"),
        ("train-elmo-softmax", "--work-dir", "softmax-work"),  # the repository root
    ],
)
def test_training_checkpoints_stay_out_of_the_checkout(
    command, flag, folder, stub_training, tmp_path, unchanged_checkout, capsys
):
    args = [command, "--export-dir", str(tmp_path), flag, str(REPO / folder)]
    assert main(args) == 2
    assert f"{folder}/" in capsys.readouterr().err
    assert stub_training == []


@pytest.mark.parametrize(
    "command, folder",
    [("train-elmo", "models/elmo-mini"), ("train-mlm-head", "models/minilm-l6-mlm")],
)
def test_write_card_refuses_a_shipped_card(
    command, folder, stub_training, tmp_path, unchanged_checkout, capsys
):
    assert main([command, "--write-card", str(REPO / folder)]) == 2
    assert f"{folder}/README.md" in capsys.readouterr().err
    assert stub_training == []
    assert main([command, "--write-card", str(tmp_path)]) == 0  # a folder of one's own
    assert stub_training == [TRAIN[command][0]]


# -- --out: empty, the repository root, results/ ---------------------------------------------

WRITERS = {  # command -> arguments that make it write into --out
    "probe": ["--model", "minilm-l6", "--task", "pos"],
    "cka": [],
    "contextuality": [],
    "attention-stats": ["--model", "minilm-l6"],
    "attention-norms": [],
    "erase": ["--model", "elmo-mini"],
    "agreement": [],
    "ablate-heads": [],
    "train-tuned-lens": [],
    "attribute": ["--study", "3"],
    "alterrep": [],
    "minimal-pairs": ["--model", "minilm-l6-mlm"],
    "neurons": [],
    "report": ["--model", "minilm-l6"],
    "sweep": [str(REPO / "docs" / "examples" / "sweep.toml")],
}


@pytest.mark.parametrize("command", list(WRITERS))
def test_an_empty_out_is_refused_not_the_current_directory(
    command, no_model_loads, unchanged_checkout, capsys, monkeypatch
):
    monkeypatch.chdir(REPO)  # where `--out ""` used to write (`cka --out ""`)
    with pytest.raises(SystemExit) as stop:
        main([command, *WRITERS[command], "--out", ""])
    assert stop.value.code == 2
    assert "empty path" in capsys.readouterr().err


@pytest.mark.parametrize("command", [c for c in WRITERS if c != "sweep"])
@pytest.mark.parametrize("where", [".", "results", "models/new"])
def test_results_writers_refuse_the_checkout(
    command, where, no_model_loads, unchanged_checkout, capsys, monkeypatch
):
    # `--out .` from the checkout: files in the repository root; `--out results`: new files
    # beside the shipped ones (only replacing one was refused before)
    monkeypatch.chdir(REPO)
    assert main([command, *WRITERS[command], "--out", where]) == 2
    err = capsys.readouterr().err
    assert "--overwrite" in err and "work started" not in err


@pytest.mark.parametrize("command", [c for c in WRITERS if c != "sweep"])
def test_results_writers_pass_the_guard_elsewhere(command, no_model_loads, tmp_path, capsys):
    assert main([command, *WRITERS[command], "--out", str(tmp_path / "out")]) == 2
    assert "work started" in capsys.readouterr().err  # the guard let it through to the model


def test_default_outputs_from_the_checkout_are_refused(
    no_model_loads, unchanged_checkout, capsys, monkeypatch
):
    # probe writes into ./results and contextuality into ./contextuality by default
    monkeypatch.chdir(REPO)
    assert main(["contextuality"]) == 2
    assert "contextuality/contextuality.csv" in capsys.readouterr().err
    assert main(["probe", "--model", "minilm-l6", "--task", "pos"]) == 2
    assert "results/minilm-l6__ud-ewt__pos.csv" in capsys.readouterr().err


# -- sweep specs -----------------------------------------------------------------------------


def _spec(folder: Path, out: str) -> Path:
    path = folder / "spec.toml"
    path.write_text(
        f'out = "{out}"\nmodels = ["minilm-l6"]\n[[tasks]]\ntask = "pos"\ndataset = "ud-ewt"\n',
        encoding="utf-8",
    )
    return path


@pytest.fixture
def no_sweep_work(monkeypatch):
    import probing.sweep.resolve as resolve

    monkeypatch.setattr(resolve, "resolve", _no_work)


@pytest.mark.parametrize("out", ["results", "models/x", "."])
def test_a_sweep_into_the_checkout_is_refused(
    out, no_sweep_work, tmp_path, unchanged_checkout, capsys, monkeypatch
):
    monkeypatch.chdir(REPO)  # the spec's `out` is relative to the current directory
    assert main(["sweep", str(_spec(tmp_path, out)), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "--overwrite" in err and "work started" not in err


def test_a_sweep_with_an_empty_out_is_refused(no_sweep_work, tmp_path, capsys):
    assert main(["sweep", str(_spec(tmp_path, "")), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "`out`" in err and "work started" not in err


def test_a_sweep_elsewhere_or_ignored_passes_the_guard(
    no_sweep_work, tmp_path, capsys, monkeypatch
):
    assert main(["sweep", str(_spec(tmp_path, str(tmp_path / "sweep"))), "--quiet"]) == 2
    assert "work started" in capsys.readouterr().err
    monkeypatch.chdir(REPO)  # the README example's folder (sweeps/) is git-ignored
    assert main(["sweep", str(REPO / "docs" / "examples" / "sweep.toml"), "--quiet"]) == 2
    assert "work started" in capsys.readouterr().err


# -- models fetch, data download -------------------------------------------------------------


def test_models_fetch_refuses_a_fetched_models_folder_in_the_checkout(
    unchanged_checkout, capsys, monkeypatch
):
    import probing.models.registry as registry

    monkeypatch.setenv("CONTEXTLENS_FETCHED_MODELS_DIR", str(REPO / "models" / "fetched"))
    monkeypatch.setattr(registry, "fetch_model", _no_work)
    assert main(["models", "fetch", "mpnet-base"]) == 2
    err = capsys.readouterr().err
    assert "models/fetched/" in err and "CONTEXTLENS_FETCHED_MODELS_DIR" in err
    assert not (REPO / "models" / "fetched").exists()


def test_data_download_refuses_a_data_folder_in_the_checkout(unchanged_checkout, capsys):
    assert main(["data", "download", "ud-ewt", "--data-dir", str(REPO / "data")]) == 2
    assert "--data-dir" in capsys.readouterr().err
    assert not (REPO / "data").exists()


# -- the rule itself -------------------------------------------------------------------------


def test_what_counts_as_shipped(tmp_path):
    assert shipped.is_shipped(REPO / "results" / "new-run.csv")  # new files too
    assert shipped.is_shipped(REPO / "models" / "elmo-mini" / "softmax.safetensors")
    assert shipped.is_shipped(REPO / "new.csv")  # the root
    assert not shipped.is_shipped(tmp_path / "results" / "x.csv")
    link = tmp_path / "link"
    link.symlink_to(REPO / "results")
    assert shipped.is_shipped(link / "x.csv")  # a link into the checkout is the checkout
    if HAS_GIT:  # git-ignored scratch folders are not the repository's
        assert not shipped.is_shipped(REPO / "sweeps" / "example" / "results.csv")
        assert shipped.is_shipped(REPO / "probing" / "new.py")


def test_without_git_the_shipped_folders_and_the_root_are_still_guarded(tmp_path, monkeypatch):
    monkeypatch.setattr(shipped, "_git_ignored", lambda _paths: None)
    assert shipped.is_shipped(REPO / "results" / "new.csv")
    assert shipped.is_shipped(REPO / "models" / "x" / "y.json")
    assert shipped.is_shipped(REPO / "new.csv")
    with pytest.raises(ShippedFilesError, match="--overwrite"):
        shipped.refuse_shipped(folders=[REPO / "models" / "elmo-mini"])
    shipped.refuse_shipped(folders=[REPO / "models" / "elmo-mini"], overwrite=True)
    shipped.refuse_shipped([tmp_path / "x.csv"])


def test_an_overridden_results_folder_keeps_its_existing_files(tmp_path, monkeypatch):
    results = tmp_path / "my-results"
    results.mkdir()
    (results / "run.json").write_text("{}")
    monkeypatch.setattr(shipped, "SHIPPED_DIR", results)
    with pytest.raises(ShippedFilesError, match="run.json"):
        shipped.refuse_shipped([results / "run.json"])
    shipped.refuse_shipped([results / "new.json"])  # adding beside them is fine out there
