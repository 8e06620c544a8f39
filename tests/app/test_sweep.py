"""Sweeps on a tiny real grid: minilm-l6 × (UPOS on UD-EWT, supersense on SemCor) × 2 seeds ×
2 layers, through the local process pool (crashed mid-grid, then resumed) and a local Ray
instance; the numbers must agree exactly, and a sweep folder must open on the Probing page.
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest

from probing.errors import ContextLensError, OptionalDependencyError, SweepError
from probing.sweep import load_spec, load_sweep, parse_spec, run_sweep
from probing.sweep.store import CRASH_ENV, InjectedCrash, SweepStore

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "docs" / "examples" / "sweep.toml"

TINY = {
    "out": "unused",
    "models": ["minilm-l6"],
    "seeds": [0, 1],
    "layers": [2, 4],
    "tasks": [{"task": "pos", "dataset": "ud-ewt"}, {"task": "supersense"}],
    "training": {
        "max_train_sentences": 40,
        "max_train_words": 600,
        "max_dev_sentences": 20,
        "max_test_sentences": 30,
        "Cs": [0.1],
        "n_boot": 50,
    },
}
N_CELLS = 2 * 2 * 2
CRASH_AFTER = 3


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """The tiny spec with its own feature cache (shared by every run here)."""
    root = tmp_path_factory.mktemp("sweep")
    spec = parse_spec({**TINY, "extraction": {"cache_dir": str(root / "cache")}})
    return spec, root


@pytest.fixture(scope="module")
def local_runs(tiny):
    """Local pool: a run that crashes writing its 4th cell, the state it left, then a resume
    through the command line (``python -m probing sweep``)."""
    from probing.cli.main import main

    spec, root = tiny
    spec = replace(spec, out=root / "local")
    mp = pytest.MonkeyPatch()
    mp.setenv(CRASH_ENV, str(CRASH_AFTER))
    with pytest.raises(InjectedCrash):
        run_sweep(spec, "local", workers=2)
    mp.undo()
    store = SweepStore(spec.out)
    after_crash = {
        "done": sorted(store.done()),
        "tmp": sorted(p.name for p in store.cells_dir.glob(".tmp-*")),
        "records": [json.loads((store.cells_dir / f"{c}.json").read_text()) for c in store.done()],
        "tmp_text": [p.read_text() for p in store.cells_dir.glob(".tmp-*")],
    }
    path = root / "tiny.toml"
    path.write_text(_toml({**TINY, "out": str(spec.out)}, spec.cache_dir))
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        code = main(["sweep", str(path), "--workers", "2", "--quiet", "--plotlyjs", "cdn"])
    assert code == 0
    return spec, after_crash, printed.getvalue()


@pytest.fixture(scope="module")
def ray_run(tiny):
    pytest.importorskip("ray")
    spec, root = tiny
    spec = replace(spec, out=root / "ray")
    return spec, run_sweep(spec, "ray", workers=2)


def test_a_crash_mid_grid_keeps_every_finished_cell_and_nothing_half_written(local_runs):
    spec, after, _ = local_runs
    assert len(after["done"]) == CRASH_AFTER  # the cells written before the crash survive
    assert len(after["tmp"]) == 1  # the half-written one stays a temporary, never a cell
    with pytest.raises(json.JSONDecodeError):
        json.loads(after["tmp_text"][0])
    for rec in after["records"]:  # each finished file is complete and names its cell
        assert rec["id"] in after["done"] and rec["results"]["results"]
    with pytest.raises(SweepError):  # a folder that is no sweep says so
        load_sweep(spec.out / "cells")


def test_the_resumed_run_fits_only_the_missing_cells(local_runs):
    spec, after, printed = local_runs
    skipped = f"{N_CELLS} cells: {N_CELLS - CRASH_AFTER} fitted now, {CRASH_AFTER} done before"
    assert skipped in printed
    assert "0 splits encoded" in printed  # features came from the cache
    store = SweepStore(spec.out)
    assert len(store.done()) == N_CELLS and not list(store.cells_dir.glob(".tmp-*"))
    # the cells that survived the crash are untouched (same bytes of results)
    for rec in after["records"]:
        again = json.loads((store.cells_dir / f"{rec['id']}.json").read_text())
        assert again["results"] == rec["results"]


def test_the_merged_table_is_tidy_and_real(local_runs):
    spec, _, _ = local_runs
    table = pd.read_csv(spec.out / "results.csv")
    assert list(table.columns[:6]) == ["model", "task", "dataset", "seed", "layer", "probe"]
    layers = table[table["layer"].notna()]
    acc = layers[(layers["metric"] == "accuracy") & (layers["probe"] == "linear")]
    assert len(acc) == N_CELLS
    assert set(map(tuple, acc[["task", "seed", "layer"]].values)) == {
        (t, s, float(x)) for t in ("pos", "supersense") for s in (0, 1) for x in (2, 4)
    }
    assert ((acc["ci_low"] <= acc["value"]) & (acc["value"] <= acc["ci_high"])).all()
    # baselines once per (task, seed), and the probes beat the majority label on real data
    base = table[table["layer"].isna() & (table["probe"] == "majority")]
    base = base[base["metric"] == "accuracy"]
    assert len(base) == 4
    for _, row in acc.iterrows():
        maj = base[(base["task"] == row["task"]) & (base["seed"] == row["seed"])]["value"].item()
        assert row["value"] > maj + 0.2
    assert acc["selectivity"].notna().all()  # control task ran
    timing = pd.read_csv(spec.out / "timing.csv")
    assert (timing["kind"] == "extract").sum() == 6 and (timing["kind"] == "fit").sum() == N_CELLS
    html = (spec.out / "figures" / "minilm-l6.html").read_text().replace("\\u00b7", "·")
    assert "pos · ud-ewt" in html and "supersense · semcor" in html


def test_ray_and_the_resumed_local_run_agree_to_the_digit(local_runs, ray_run):
    local, _, _ = local_runs
    _, ray = ray_run
    assert ray.fitted == N_CELLS and ray.skipped == 0 and ray.extracted == 0
    a, b = pd.read_csv(local.out / "results.csv"), pd.read_csv(ray.files["csv"])
    pd.testing.assert_frame_equal(a, b, check_exact=True)
    assert (local.out / "results.csv").read_bytes() == Path(ray.files["csv"]).read_bytes()


def test_load_sweep_gives_probe_results_per_model_task_and_seed(local_runs):
    spec, _, _ = local_runs
    runs = load_sweep(spec.out)
    assert [(r.task, r.meta["seed"]) for r in runs] == [
        ("pos", 0),
        ("pos", 1),
        ("supersense", 0),
        ("supersense", 1),
    ]
    table = pd.read_csv(spec.out / "results.csv")
    for r in runs:
        scores = r.layer_scores()
        assert list(scores["layer"]) == [2, 4]
        rows = table[(table["task"] == r.task) & (table["seed"] == r.meta["seed"])]
        rows = rows[(rows["probe"] == "linear") & (rows["metric"] == "accuracy")]
        assert list(rows.sort_values("layer")["value"]) == pytest.approx(
            list(scores["value"]), abs=1e-6
        )
        assert not r.baselines().empty


def test_the_probing_page_opens_a_sweep_folder(local_runs, monkeypatch, tmp_path):
    from streamlit.testing.v1 import AppTest

    spec, _, _ = local_runs
    monkeypatch.setenv("CONTEXTLENS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("CONTEXTLENS_DEMO", raising=False)
    at = AppTest.from_file(str(REPO / "pages" / "4_Probing.py"), default_timeout=300)
    at.session_state["models"] = ["minilm-l6"]
    at.run()
    at.text_input(key="sweep_folder").set_value(str(spec.out)).run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    at.selectbox(key="sweep_task").set_value(("supersense", "semcor")).run()
    at.selectbox(key="sweep_seed").set_value(1).run()
    charts = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    titles = [c["layout"].get("title", {}).get("text", "") for c in charts]
    assert any("minilm-l6 · semcor · supersense" in t for t in titles), titles
    shown = at.dataframe[-1].value
    expect = [r for r in load_sweep(spec.out) if r.task == "supersense" and r.meta["seed"] == 1][0]
    assert list(shown["layer"]) == [2, 4]
    assert list(shown["accuracy"]) == pytest.approx(list(expect.layer_scores()["value"]))

    at.text_input(key="sweep_folder").set_value(str(tmp_path)).run()  # not a sweep: a message
    assert not at.exception
    assert any("not a sweep folder" in e.value for e in at.error)


def test_the_demo_offers_only_sweeps_under_results(monkeypatch, tmp_path):
    from streamlit.testing.v1 import AppTest

    committed = REPO / "results" / "sweep-example"  # the example spec's output
    assert (committed / "spec.json").is_file()
    monkeypatch.setenv("CONTEXTLENS_DEMO", "1")
    monkeypatch.setenv("CONTEXTLENS_CACHE_DIR", str(tmp_path / "cache"))
    at = AppTest.from_file(str(REPO / "pages" / "4_Probing.py"), default_timeout=300)
    at.session_state["models"] = ["minilm-l6"]
    at.run()
    assert not at.exception
    assert not [t for t in at.text_input if t.key == "sweep_folder"]  # no typed server paths
    pick = at.selectbox(key="sweep_pick")
    assert pick.options == ["sweep-example"]
    pick.set_value("sweep-example").run()  # in the address as its name (issue 46)
    assert not at.exception and not at.error
    charts = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    titles = [c["layout"].get("title", {}).get("text", "") for c in charts]
    assert any("minilm-l6 · ud-ewt · pos" in t for t in titles), titles
    assert list(at.dataframe[-1].value["layer"]) == list(range(7))


def test_the_example_spec_parses():
    spec = load_spec(EXAMPLE)
    assert spec.models and spec.tasks and len(spec.seeds) >= 2


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"models": []}, "`models` is empty"),
        ({"tasks": [{"task": "parsing"}]}, "tasks[0].task"),
        ({"tasks": [{}]}, "tasks[0] needs `task`"),
        ({"tasks": [{"task": "genre"}]}, "not a word-level task"),
        ({"tasks": [{"task": "wsd", "dataset": "ud-ewt"}]}, "runs on semcor, not 'ud-ewt'"),
        ({"seeds": [0, 0]}, "distinct"),
        ({"layers": []}, "`layers` is empty"),
        ({"layers": "top"}, "`layers` must be a list"),
        ({"training": {"n_boot": 0}}, "at least 1"),
        ({"training": {"max_train_words": "many"}}, "takes integers"),
        ({"training": {"Cs": [0]}}, "positive"),
        ({"extraction": {"dtype": "int8"}}, "extraction.dtype"),
        # "auto" resolves per machine: nodes of one cluster could key features differently.
        ({"extraction": {"dtype": "auto"}}, "extraction.dtype"),
        ({"extraction": {"pooling": "max"}}, "extraction.pooling"),
        ({"modles": ["x"]}, "unknown key(s) modles"),
    ],
)
def test_bad_specs_raise_a_typed_error_naming_the_key(change, message):
    with pytest.raises(SweepError) as err:
        parse_spec({**TINY, **change})
    assert message in str(err.value)


def test_bf16_extraction_is_a_spec_choice_and_part_of_the_extraction_key():
    from probing.sweep.grid import extraction_jobs

    fp32 = parse_spec(TINY)
    bf16 = parse_spec({**TINY, "extraction": {"dtype": "bfloat16"}})
    assert bf16.dtype == "bfloat16"
    ids32 = {j.id for j in extraction_jobs(fp32)}
    ids16 = {j.id for j in extraction_jobs(bf16)}
    assert ids32 and not ids32 & ids16


def test_spec_file_errors(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("models = [\n")
    with pytest.raises(SweepError, match="not valid TOML"):
        load_spec(bad)
    with pytest.raises(SweepError, match="cannot read"):
        load_spec(tmp_path / "missing.toml")


def test_without_ray_the_error_says_how_to_install_it(monkeypatch):
    from probing.sweep.executors import make_executor

    monkeypatch.setitem(sys.modules, "ray", None)  # import ray -> ImportError
    with pytest.raises(OptionalDependencyError, match="pip install"):
        make_executor("ray")
    with pytest.raises(ContextLensError, match="--address is for --executor ray"):
        make_executor("local", address="auto")


def _toml(d: dict, cache: Path | None) -> str:
    t = d["training"]
    tasks = "".join(
        f'[[tasks]]\ntask = "{x["task"]}"\n'
        + (f'dataset = "{x["dataset"]}"\n' if "dataset" in x else "")
        for x in d["tasks"]
    )
    training = "".join(f"{k} = {json.dumps(v)}\n" for k, v in t.items())
    return (
        f'out = "{d["out"]}"\nmodels = {json.dumps(d["models"])}\nseeds = {d["seeds"]}\n'
        f"layers = {d['layers']}\n{tasks}[training]\n{training}"
        f'[extraction]\ncache_dir = "{cache}"\n'
    )
