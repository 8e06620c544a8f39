"""ProbeSettings (issue 26): the CLI's options, the recorded command, the sweep's
``[training]`` table and the app's stored-run key all come from one dataclass; the task
registry answers what the seven tables did; the Probing page's questions have library
answers (find_stored, the cost model)."""

from __future__ import annotations

import argparse
import json
import shlex
import shutil

import pytest

from probing import config
from probing.cli import bounds
from probing.cli.probe import add_arguments, command
from probing.errors import (
    ContextLensError,
    TaskLabelsMissingError,
    UnknownSplitError,
    UnknownTaskError,
)
from probing.probes.settings import ProbeSettings, numeric_fields
from probing.probes.tasks import TASKS, get_task, task_names

RESULTS = config.REPO_ROOT / "results"


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser()
    add_arguments(p)
    bounds.apply("probe", p)
    return p


def committed_commands() -> list[tuple[str, str]]:
    """(file, command) of committed word-level runs recorded in the current form."""
    out = []
    for path in sorted(RESULTS.glob("*.json")):
        doc = json.loads(path.read_text(encoding="utf-8"))
        meta = doc.get("meta") if isinstance(doc, dict) else None
        cmd = meta.get("command", "") if isinstance(meta, dict) else ""
        if cmd.startswith("python -m probing probe") and "--seeds" in cmd:
            out.append((path.name, cmd))
    return out


def test_every_numeric_setting_has_a_range_in_the_bounds_table() -> None:
    assert numeric_fields(), "the settings have numeric fields"
    assert set(numeric_fields()) <= set(bounds.BOUNDS["probe"])
    assert bounds.unbounded(parser()) == []


@pytest.mark.parametrize(
    "settings",
    [
        ProbeSettings(),
        ProbeSettings(
            model="elmo-mini",
            task="wsd",
            dataset="semcor",
            max_train_sentences=None,
            max_train_words=None,
            seeds=3,
            mdl=True,
            mdl_seeds=2,
        ),
        ProbeSettings(
            task="deprel",
            layers=(0, 3, 6),
            cs=(0.01, 1.0),
            pooling="mean",
            scalar_mix=False,
            control=False,
            cumulative_mix=False,
            per_layer_c=True,
            n_boot=200,
            max_dev_sentences=50,
            max_test_sentences=70,
            seed=4,
        ),
        ProbeSettings(
            task="genre", dataset="brown", sentence_pooling="mean,cls", per_doc="5,10,50"
        ),
    ],
)
def test_argv_parses_back_to_the_same_settings(settings: ProbeSettings) -> None:
    args = parser().parse_args(settings.to_argv())
    assert ProbeSettings.from_args(args) == settings


@pytest.mark.parametrize("name_command", committed_commands(), ids=lambda x: x[0])
def test_committed_commands_are_written_again_character_for_character(name_command) -> None:
    _, cmd = name_command
    args = parser().parse_args(shlex.split(cmd)[4:])
    assert command(ProbeSettings.from_args(args), args) == cmd


def test_flags_that_switch_off_parts_of_a_run() -> None:
    s = ProbeSettings.from_args(parser().parse_args(["--no-control", "--no-scalar-mix"]))
    assert (s.control, s.scalar_mix, s.cumulative_mix) == (False, False, True)
    assert s.to_argv()[-2:] == ["--no-scalar-mix", "--no-control"]
    assert "--mdl-seeds" not in ProbeSettings(mdl_seeds=3).to_argv()  # only with --mdl
    assert ProbeSettings.of("pos", Cs=[0.1]).cs == (0.1,)


def test_the_stored_key_is_the_one_the_app_always_hashed() -> None:
    s = ProbeSettings(
        model="minilm-l6",
        task="pos",
        layers=(0, 2),
        max_train_sentences=60,
        max_dev_sentences=30,
        max_test_sentences=30,
    )
    assert s.stored_key() == {
        "model": "minilm-l6",
        "task": "pos",
        "dataset": "ud-ewt",
        "layers": (0, 2),
        "max_train_sentences": 60,
        "max_eval_sentences": 30,
    }


def test_the_sweep_training_table_is_unchanged() -> None:
    from probing.sweep.spec import parse_spec, training_dict

    spec = parse_spec(
        {
            "out": "x",
            "models": ["minilm-l6"],
            "tasks": [{"task": "pos"}],
            "training": {"Cs": [0.1, 1], "max_dev_sentences": 200},
        }
    )
    assert training_dict(spec.training) == {
        "max_train_sentences": 2000,
        "max_train_words": 20000,
        "max_dev_sentences": 200,
        "max_test_sentences": None,
        "Cs": [0.1, 1.0],
        "n_boot": 1000,
        "control": True,
    }


def test_task_registry_errors_are_typed() -> None:
    with pytest.raises(UnknownTaskError) as exc:
        get_task("postag")
    assert isinstance(exc.value, ValueError) and isinstance(exc.value, ContextLensError)
    assert "choose one of: pos" in str(exc.value)
    with pytest.raises(TaskLabelsMissingError):
        get_task("wsd").field_for("ud-ewt")
    from probing.datasets import read_sentences

    with pytest.raises(UnknownSplitError, match="choose one of: train, dev, test"):
        read_sentences("semcor", "validation")
    with pytest.raises(UnknownSplitError):
        read_sentences("ud-ewt", "validation")


def test_every_task_names_a_runner_and_what_the_app_shows() -> None:
    for t in TASKS.values():
        assert callable(t.runner()) and t.label and t.baselines
    assert [t for t, *_ in __import__("probing.figures.layering").figures.layering.TASKS] == [
        "pos",
        "deprel",
        "dep-distance",
        "supersense",
        "wsd",
    ]
    from probing.analyses.probe_lens import LENS_TASKS
    from probing.probes.upload import UPLOAD_TASKS

    assert set(LENS_TASKS) == {
        "pos",
        "xpos",
        "deprel",
        "supersense",
        "wsd",
        "dep-distance",
        "dep-depth",
    }
    assert UPLOAD_TASKS == {
        "pos": "upos",
        "xpos": "xpos",
        "deprel": "deprel",
        "dep-distance": "head",
        "dep-depth": "head",
    }
    assert task_names(kind="structural") == ["dep-distance", "dep-depth"]


def test_find_stored_prefers_the_apps_run_then_the_committed_one(minilm, tmp_path, monkeypatch):
    from probing.probes.results import ProbeResults
    from probing.probes.store import find_stored, save_results, stored_path_of

    monkeypatch.setenv("CONTEXTLENS_CACHE_DIR", str(tmp_path / "cache"))
    results = tmp_path / "results"
    results.mkdir()
    shutil.copy(RESULTS / "minilm-l6__ud-ewt__pos.json", results)
    committed = ProbeSettings(model="minilm-l6", task="pos", max_train_sentences=None)
    found = find_stored(committed, minilm, results_dir=results)
    assert found is not None and not found.made_in_app and found.current
    assert found.results.meta.command.startswith("python -m probing probe")
    mine = committed.replace(layers=(0, 2), max_train_sentences=60)
    found = find_stored(mine, minilm, results_dir=results)
    assert found is not None and not found.current  # other settings: shown, not current
    save_results(
        ProbeResults.from_json(results / "minilm-l6__ud-ewt__pos.json"),
        stored_path_of(mine, minilm),
    )
    found = find_stored(mine, minilm, results_dir=results)
    assert found.made_in_app and found.current
    assert find_stored(mine.replace(task="xpos"), minilm, results_dir=results) is None


def test_cost_model_counts_seeds_and_mdl(minilm, tmp_path, monkeypatch):
    from probing.probes.cost import estimate_run, estimate_seconds

    monkeypatch.setenv("CONTEXTLENS_CACHE_DIR", str(tmp_path))
    one = ProbeSettings(
        layers=(0, 3), max_train_sentences=20, max_dev_sentences=15, max_test_sentences=15
    )
    # the probes: once per seed and ~10 times per MDL seed; the scalar mixes once per seed
    with_mixes = estimate_seconds(minilm, one)
    one = one.replace(scalar_mix=False)
    base = estimate_seconds(minilm, one)
    assert base is not None and with_mixes is not None
    mixes = with_mixes[1] - base[1]
    assert mixes > 0
    more = estimate_seconds(minilm, one.replace(seeds=3, mdl=True, mdl_seeds=2))
    assert more == (base[0], pytest.approx(base[1] * (3 + 10 * 2)))
    every = estimate_seconds(minilm, one.replace(seeds=3, mdl=True))  # MDL on every seed
    assert every == (base[0], pytest.approx(base[1] * (3 + 10 * 3)))
    mixed = estimate_seconds(minilm, one.replace(seeds=3, mdl=True, scalar_mix=True))
    assert mixed == (base[0], pytest.approx(base[1] * (3 + 10 * 3) + 3 * mixes))
    est = estimate_run(minilm, one)
    assert not est.from_last_run and est.to_encode == {"train": 20, "dev": 15, "test": 15}
    assert isinstance(estimate_run(minilm, one.replace(model="unmeasured")), str)


def test_top_level_load_encoder_honours_the_documented_dtype(minilm) -> None:
    import probing
    from probing.models import registry

    typed = probing.load_encoder("minilm-l6", dtype="bfloat16")
    assert typed.dtype == "bfloat16" and minilm.dtype == "float32"
    # float32: the one cached encoder (compared with the registry's, not the fixture's: a
    # test elsewhere in the suite may have cleared the cache since the fixture loaded it)
    plain = probing.load_encoder("minilm-l6")
    assert plain.dtype == "float32" and plain is registry.load_encoder("minilm-l6")
    with pytest.raises(ContextLensError):
        probing.load_encoder("minilm-l6", dtype="float8")


def test_a_fitted_probe_crosses_the_worker_pipe_as_arrays():
    """The app's worker sends results through multiprocessing's pickler, where torch shares a
    tensor's storage by file descriptor (a spawned worker's server cannot open it: the
    Interventions page's eraser fit failed so). A probe travels as arrays and predicts alike."""
    import pickle
    from multiprocessing.reduction import ForkingPickler

    import numpy as np
    import torch  # noqa: F401 - registers torch's reductions with ForkingPickler

    from probing.probes.linear import LinearProbe

    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 8)).astype(np.float32)
    y = (X[:, 0] > 0).astype(int)
    probe = LinearProbe(C=1.0, device="cpu").fit(X, y)
    data = bytes(ForkingPickler.dumps(probe))
    assert b"rebuild_storage" not in data
    back = pickle.loads(data)
    assert np.array_equal(back.predict(X), probe.predict(X))
    assert np.array_equal(back.predict_proba(X), probe.predict_proba(X))
