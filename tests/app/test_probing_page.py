"""The Probing page, driven by streamlit's AppTest (no browser, offline), and its figures.

Every page test gets an empty feature/results cache, so "precomputed" means the committed
``results/`` files and a run really extracts and fits.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from probing.probes.run import COLUMNS, ProbeResults

if TYPE_CHECKING:
    from ui.background import Run

REPO = Path(__file__).resolve().parents[2]
PAGE = str(REPO / "pages" / "4_Probing.py")
PRECOMPUTED = REPO / "results" / "minilm-l6__ud-ewt__pos.json"
CUSTOM = "Other (hub id or local folder)…"


@pytest.fixture(autouse=True)
def empty_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CONTEXTLENS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("CONTEXTLENS_DEMO", raising=False)


@pytest.fixture
def no_computation(monkeypatch):
    """Any feature extraction or probe run fails the test."""
    import probing.features
    import probing.probes.run
    import probing.probes.upload

    def refuse(*args, **kwargs):
        raise AssertionError("the page computed something")

    monkeypatch.setattr(probing.features, "extract_features", refuse)
    monkeypatch.setattr(probing.probes.run, "extract_features", refuse)
    monkeypatch.setattr(probing.probes.run, "probe_layers", refuse)
    monkeypatch.setattr(probing.probes.upload, "probe_upload", refuse)
    # Heavy jobs here, not in a worker process, so that the refusals above would see them.
    monkeypatch.setenv("CONTEXTLENS_JOB_WORKERS", "0")


def page(models: list[str] | None = None, custom: str | None = None) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=300)
    if models is not None:
        at.session_state["models"] = models
    if custom is not None:
        at.session_state["models_custom"] = custom
    return at


def charts(at: AppTest) -> list[dict]:
    return [json.loads(c.proto.spec) for c in at.get("plotly_chart")]


def text(at: AppTest) -> str:
    return " ".join(m.value for m in [*at.markdown, *at.caption, *at.info, *at.code])


def run_button(at: AppTest):
    return at.button(key="probe_run")


def finish(at: AppTest) -> AppTest:
    """Wait for the page's background probe runs to end, then redraw the page."""
    from ui import background

    for run in list(background._runs().values()):
        run.thread.join(600)
    return at.run()


def test_first_visit_shows_the_precomputed_curve_without_computing(minilm, no_computation):
    assert PRECOMPUTED.is_file()
    at = page().run()  # the model is loaded already (fixture), as after the home page
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    curve = charts(at)[0]
    assert "minilm-l6 · ud-ewt · pos" in curve["layout"]["title"]["text"]
    names = [t.get("name", "") for t in curve["data"]]
    assert any("linear probe" in n for n in names) and any("control" in n for n in names)
    assert any("selectivity" in n for n in names)
    notes = text(at)
    assert "precomputed results" in notes and "python -m probing probe --model minilm-l6" in notes
    assert run_button(at).label == "Run again"
    # the cost is said before the button is pressed (from the costs measured for this model
    # and task: the shipped run was made by the CLI with other settings, so its time is not it)
    estimate = next(c.value for c in at.caption if c.value.startswith("**Run again** takes about"))
    assert "fitting" in estimate and "measured on 2 CPU cores" in estimate, estimate
    # The curve (with the paired selectivity band), the scalar-mix weights, the MDL panel,
    # and selectivity by probe capacity (the committed results/capacity/ run).
    assert len(charts(at)) == 4 and any("selectivity 95 %" in n for n in names)
    assert "MDL" in charts(at)[2]["layout"]["title"]["text"]
    capacity = charts(at)[3]
    assert "Selectivity by probe capacity" in capacity["layout"]["title"]["text"]
    assert [t["name"] for t in capacity["data"]] == ["linear probe", "MLP-1 (1,000 hidden units)"]
    # issue 40: the committed capacity claim, with its correction (Holm over the 7 layers)
    assert "Holm over 7" in notes and "results/capacity.py --model minilm-l6" in notes
    assert at.multiselect(key="probe_layers").value == list(range(7))
    table = at.dataframe[0].value
    assert list(table["layer"]) == list(range(7))


@pytest.mark.parametrize("task", ["supersense", "wsd"])
def test_semcor_precomputed_runs_match_the_settings_they_open_with(minilm, no_computation, task):
    # Choosing the task starts the slider at the shipped run's training size, so the shipped
    # run counts as current (a cap above the split's 15,947 sentences would count as "all").
    shipped = json.loads((REPO / "results" / f"minilm-l6__semcor__{task}.json").read_text())
    cap = shipped["meta"]["max_train_sentences"]
    at = page().run()
    at.selectbox(key="probe_task").set_value(task).run()
    assert not at.exception, at.exception
    notes = text(at)
    assert "other settings" not in notes, notes
    assert f"minilm-l6__semcor__{task}.json`), made with" in notes
    assert at.number_input(key="probe_train").value == (cap or shipped["meta"]["n_train_sentences"])
    assert run_button(at).label == "Run again"
    at.number_input(key="probe_train").set_value(1000 if cap != 1000 else 2000).run()
    assert "other settings" in text(at) and run_button(at).label == "Run"


def linked(query: dict[str, str], models: list[str] | None = None) -> AppTest:
    """The page opened at an address with ``query``."""
    at = page(models)
    for name, value in query.items():
        at.query_params[name] = value
    at.run()
    assert not at.exception, at.exception
    return at


@pytest.mark.parametrize(
    ("query", "train"),
    [
        ({"train": "110"}, 110),
        ({"task": "supersense", "train": "110"}, 110),  # not the shipped SemCor run's size
        ({"model": "mpnet-base", "train": "4000"}, 4000),
        ({"train": "5"}, None),  # below the box's minimum
    ],
)
def test_a_links_training_size_is_the_one_it_reopens_with(minilm, no_computation, query, train):
    # Issue 46: train=110 reopened at the precomputed run's size and rewrote the address.
    if query.get("model") == "mpnet-base":
        from probing.models.registry import needs_fetch

        if needs_fetch("mpnet-base"):
            pytest.skip("mpnet-base is not fetched here")
    at = linked(query)
    if train is None:  # an unusable value: what the page opens with when there is no link
        train = page().run().session_state["probe_train"]
    assert at.session_state["probe_train"] == train  # (the widget's value, whatever its kind)
    assert at.query_params["train"] == str(train)
    assert "other settings" in text(at) if train in (110, 4000) else True


def test_the_training_size_is_a_number_box_within_bounds(minilm, no_computation):
    # Issue 46: a slider over 20 … 20,000 in steps of 10 could not be set to a given size.
    at = page().run()
    box = at.number_input(key="probe_train")
    assert (box.min, box.max) == (20, 20_000)
    box.set_value(1234).run()
    assert not at.exception, at.exception
    assert at.number_input(key="probe_train").value == 1234
    assert at.query_params["train"] == "1234"
    assert "other settings" in text(at)  # the shipped run used the whole split


def test_a_model_switch_gives_the_new_models_layers_in_the_view_and_the_address(minilm):
    # Issue 46: minilm-l6 -> mpnet-base kept layers=0…6 in the address, and a return to the
    # page (or the link) showed only those: Run would have probed half the model.
    from probing.models.registry import needs_fetch

    if needs_fetch("mpnet-base"):
        pytest.skip("mpnet-base is not fetched here")
    mpnet = list(range(13))
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=300).run()
    at.switch_page("pages/4_Probing.py").run()
    assert at.multiselect(key="probe_layers").value == list(range(7))
    at.multiselect(key="models").set_value(["mpnet-base"]).run()
    assert not at.exception, at.exception
    assert at.multiselect(key="probe_layers").value == mpnet
    address = {k: at.query_params[k] for k in at.query_params}
    assert "layers" not in address, address  # all layers: all of whichever models a link has
    at.switch_page("pages/2_Fill_Mask.py").run()
    at.switch_page("pages/4_Probing.py").run()
    assert at.multiselect(key="probe_layers").value == mpnet
    assert linked(address).multiselect(key="probe_layers").value == mpnet
    # A subset the user chose is kept, in the address too, while the models have it.
    at.multiselect(key="probe_layers").set_value([0, 3, 12]).run()
    assert at.query_params["layers"] == "0,3,12"
    assert linked({"model": "mpnet-base", "layers": "0,3,12"}).multiselect(
        key="probe_layers"
    ).value == [0, 3, 12]
    # …and one the models lack falls back to all their layers.
    at.multiselect(key="models").set_value(["minilm-l6"]).run()
    assert at.multiselect(key="probe_layers").value == list(range(7))
    assert "layers" not in at.query_params
    assert linked({"layers": "0,9"}).multiselect(key="probe_layers").value == list(range(7))


def test_the_committed_capacity_panel_shows_only_under_the_committed_run(minilm, no_computation):
    # Issue 46: after a user's own run the page still showed the committed capacity figure.
    from probing.probes.settings import ProbeSettings
    from probing.probes.store import save_results, stored_path_of

    def capacity_charts(at: AppTest) -> list[dict]:
        return [c for c in charts(at) if "by probe capacity" in str(c["layout"].get("title", ""))]

    at = page().run()
    assert capacity_charts(at)  # the committed run is shown: its capacity run too
    # issue 40: under the committed run, the claims docs/results.md states, word for word
    claims = json.loads((REPO / "results" / "claims.json").read_text(encoding="utf-8"))
    said = {c["id"]: c["text"] for c in claims}
    for kind in ("peak", "baselines", "capacity"):
        assert said[f"{kind}:minilm-l6__ud-ewt__pos"] in text(at), kind
    at.session_state["probe_train"] = 60
    at.multiselect(key="probe_layers").set_value([0, 2])
    at.run()
    # A run made in the app with these settings (a copy of the committed one, relabelled).
    mine = ProbeResults.from_json(PRECOMPUTED)
    mine.meta.command = "Probing page: test"
    cfg = ProbeSettings(
        model="minilm-l6", task="pos", dataset="ud-ewt", layers=(0, 2), max_train_sentences=60
    )
    save_results(mine, stored_path_of(cfg, minilm))
    at.run()
    assert not at.exception, at.exception
    assert "run in this app with these settings" in text(at)
    assert charts(at) and not capacity_charts(at)
    assert said["peak:minilm-l6__ud-ewt__pos"] not in text(at)  # not the user's run's claim
    assert "Paired comparisons:" in text(at)  # the user's run: its own table's sentence


def test_wsd_shows_f1_with_the_first_sense_baseline(minilm, no_computation):
    assert (REPO / "results" / "minilm-l6__semcor__wsd.json").is_file()  # committed
    at = page().run()
    at.selectbox(key="probe_task").set_value("wsd").run()
    assert not at.exception and not at.error
    (curve,) = charts(at)  # no scalar mix for WSD
    assert curve["layout"]["yaxis"]["title"]["text"] == "F1"
    # baselines are named in the legend (a label on the line sat on the curves)
    assert any("WordNet first sense" in t.get("name", "") for t in curve["data"])
    assert "control" not in at.dataframe[0].value.columns


SMALL_RUN_CHILD = "CONTEXTLENS_SMALL_RUN_CHILD"


def test_a_small_run_in_a_process_of_its_own():
    """The small run below, in a fresh process: after other tests of one long process (CI
    order), its "Run again" estimate read the run's features as not cached; the estimate
    and the cache are what it checks, so it runs where no earlier test set them."""
    from tests.isolated import run_case_alone

    run_case_alone(
        __file__, "test_a_small_run_completes_and_is_then_shown_from_the_store", SMALL_RUN_CHILD
    )


@pytest.mark.skipif(
    not __import__("os").environ.get(SMALL_RUN_CHILD),
    reason="run by test_a_small_run_in_a_process_of_its_own",
)
def test_a_small_run_completes_and_is_then_shown_from_the_store(minilm, monkeypatch):
    from ui.background import Run

    texts: list[str] = []
    real_report = Run.report

    def spy(self: Run, value: float, text: str = "") -> None:  # records the bar's text
        texts.append(text or "")
        return real_report(self, value, text)

    monkeypatch.setattr(Run, "report", spy)
    at = page().run()
    at.number_input(key="probe_train").set_value(60)
    at.multiselect(key="probe_layers").set_value([0, 2])
    at.number_input(key="probe_eval").set_value(30)
    at.run()
    assert run_button(at).label == "Run"  # the precomputed run had other settings
    first = next(c.value for c in at.caption if c.value.startswith("**Run** takes about"))
    assert "fitting" in first, first
    # Nothing cached yet: every split the run reads is named with its sentences (dev and test
    # capped at 30 here), not only the training sample.
    assert "extracting (train 60, dev 30, test 30 sentences) +" in first, first
    run_button(at).click().run()
    bar = at.get("progress")[0].proto.text  # the time so far, redrawn every second
    assert bar.endswith(" s so far"), bar
    finish(at)
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    # Run again: as long as this run's fitting took (its features are cached now).
    from probing.probes.settings import ProbeSettings
    from probing.probes.store import stored_path_of

    cfg = ProbeSettings(
        model="minilm-l6",
        task="pos",
        dataset="ud-ewt",
        layers=(0, 2),
        max_train_sentences=60,
        max_dev_sentences=30,
        max_test_sentences=30,
    )
    stored = json.loads(stored_path_of(cfg, minilm).read_text())
    fit = stored["meta"]["timing_s"]["fit"]
    again = next(c.value for c in at.caption if c.value.startswith("**Run again** takes about"))
    assert f"minilm-l6: ~{fit:.0f} s, as its last run of these settings fitted" in again, again
    assert again.startswith(f"**Run again** takes about {fit:.0f} s "), again
    # …plus extraction when the cache has lost the features since.
    import probing.features

    with monkeypatch.context() as m:
        m.setattr(probing.features, "features_cached", lambda *a, **k: False)
        at.run()
        evicted = next(c.value for c in at.caption if c.value.startswith("**Run again**"))
    assert "extracting again (features no longer cached)" in evicted, evicted
    at.run()
    # one bar: reading, extraction (train, dev, test), then fitting
    stages = [t.split(": ", 1)[1].rsplit(",", 1)[0] for t in texts if t.startswith("minilm-l6")]
    seen = list(dict.fromkeys(stages))
    assert seen == [
        "reading the data and the feature cache…",
        "extracting features: training sentences",
        "extracting features: dev sentences",
        "extracting features: test sentences",
        "fitting probes",
    ], seen
    assert "run in this app with these settings (60 training sentences" in text(at)
    curve = charts(at)[0]
    probe = next(t for t in curve["data"] if "linear probe" in t.get("name", ""))
    assert probe["x"] == [0, 2]
    assert list(at.dataframe[0].value["layer"]) == [0, 2]
    mix = charts(at)[1]
    assert [str(x) for x in mix["data"][0]["x"]] == ["0", "2"]
    labels = [b.label for b in at.get("download_button")]
    assert {"CSV", "JSON"} <= set(labels) and ({"PNG"} & set(labels) or {"HTML"} & set(labels))

    # A new session with the same settings: shown at once from the stored run.
    import probing.probes.run

    monkeypatch.setattr(probing.probes.run, "probe_layers", lambda *a, **k: 1 / 0)
    again = page()
    again.session_state["probe_train"] = 60
    again.session_state["probe_layers"] = [0, 2]
    again.session_state["probe_eval"] = 30
    again.run()
    assert not again.exception and not again.error
    assert "run in this app" in text(again) and run_button(again).label == "Run again"


def test_demo_mode_caps_the_training_size(minilm, monkeypatch, no_computation):
    monkeypatch.setenv("CONTEXTLENS_DEMO", "1")
    from probing import config

    at = page().run()
    assert not at.exception
    # The demo offers preset sizes only (each size would otherwise be a new cache entry).
    slider = at.select_slider(key="probe_train")
    assert max(map(int, slider.options)) == config.limits().max_probe_train_sentences == 2000
    assert int(slider.value) <= 2000
    monkeypatch.delenv("CONTEXTLENS_DEMO")
    full = page().run()
    assert full.number_input(key="probe_train").max == 20_000


def test_malformed_upload_gives_one_error_naming_the_line(minilm, no_computation):
    at = page().run()
    bad = "1\tHello\thello\tINTJ\tUH\t_\t0\troot\t_\t_\n2\tworld\tworld\tNOUN\n"
    at.get("file_uploader")[0].set_value(("bad.conllu", bad.encode(), "text/plain"))
    at.run()
    assert not at.exception
    assert len(at.error) == 1, [e.value for e in at.error]
    assert at.error[0].value.startswith("Line 2:") and "found 4" in at.error[0].value
    assert "probe_upload_run" not in [b.key for b in at.button]  # no run offered


def test_a_small_upload_is_probed(minilm, data_dir):
    lines = (data_dir / "ud-english-ewt" / "en_ewt-ud-dev.conllu").read_text().split("\n\n")
    data = ("\n\n".join(lines[:30]) + "\n").encode()
    at = page().run()
    at.multiselect(key="probe_layers").set_value([0, 6])
    at.get("file_uploader")[0].set_value(("mine.conllu", data, "text/plain"))
    at.run()
    # The file name is user text, shown as text (markdown-escaped).
    assert "**mine\\.conllu**: 30 sentences" in text(at) and "24 to train" in text(at)
    at.button(key="probe_upload_run").click().run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    titles = [c["layout"]["title"]["text"] for c in charts(at) if "title" in c["layout"]]
    assert any("upload:mine.conllu" in t for t in titles)


def test_missing_data_folder_says_how_to_get_it(minilm, tmp_path, monkeypatch):
    monkeypatch.setenv("CONTEXTLENS_DATA_DIR", str(tmp_path / "no-data"))
    at = page().run()
    assert not at.error  # the precomputed results need no data
    assert any("its data could not be read" in c.value for c in at.caption)  # no estimate
    run_button(at).click().run()
    finish(at)
    assert not at.exception
    assert len(at.error) == 1
    message = at.error[0].value
    assert "Data set 'ud-ewt' not found" in message
    assert "python -m probing data download ud-ewt" in message


def test_a_model_that_fails_to_load_gets_the_pickers_message(minilm, tmp_path, no_computation):
    at = page(["minilm-l6", CUSTOM], custom=str(tmp_path / "no-such-model")).run()
    assert not at.exception
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and errors[0].startswith("Could not load")
    assert charts(at)  # the model that loaded is still shown


# -- figures ---------------------------------------------------------------------------------


def fake_results(model: str, depth: int, task: str = "pos", shift: float = 0.0) -> ProbeResults:
    metric = "f1" if task == "wsd" else "accuracy"
    rows = []
    for layer in range(depth + 1):
        v = 0.7 + 0.2 * layer / depth + shift
        rows.append(
            {
                "model": model,
                "task": task,
                "dataset": "d",
                "split": "test",
                "probe": "1nn" if task == "wsd" else "linear",
                "layer": layer,
                "metric": metric,
                "value": v,
                "ci_low": v - 0.01,
                "ci_high": v + 0.01,
                "control": float("nan") if task == "wsd" else 0.5,
                "selectivity": float("nan") if task == "wsd" else v - 0.5,
                "n": 100,
            }
        )
    base = ("first_sense", "static_1nn") if task == "wsd" else ("majority", "word_type", "static")
    for probe in base:
        v = 0.6 + (shift if probe.startswith("static") else 0.0)
        rows.append(
            {
                "model": model,
                "task": task,
                "dataset": "d",
                "split": "test",
                "probe": probe,
                "layer": None,
                "metric": metric,
                "value": v,
                "ci_low": v,
                "ci_high": v,
                "control": float("nan"),
                "selectivity": float("nan"),
                "n": 100,
            }
        )
    table = pd.DataFrame(rows, columns=COLUMNS)
    table["layer"] = table["layer"].astype("Int64")
    mix = (
        None
        if task == "wsd"
        else {
            "layers": list(range(depth + 1)),
            "weights": [1 / (depth + 1)] * (depth + 1),
            "gamma": 1.0,
            "expected_layer": depth / 2,
            "accuracy": 0.9,
        }
    )
    return ProbeResults(
        model,
        task,
        "d",
        table,
        mix,
        depth / 2,
        {"layer_names": [f"layer {i}" for i in range(depth + 1)]},
    )


def test_overlay_uses_relative_depth_when_depths_differ():
    from probing.figures.probing_page import overlay_curves, probing_figure, uses_relative_depth

    elmo, bert = fake_results("elmo", 2), fake_results("bert", 6, shift=0.02)
    assert uses_relative_depth([elmo, bert]) and not uses_relative_depth([bert, bert])
    fig = probing_figure([elmo, bert]).to_plotly_json()
    lines = [t for t in fig["data"] if "linear probe (accuracy)" in t.get("name", "")]
    assert [list(t["x"]) for t in lines] == [
        [0, 0.5, 1.0],
        [0, 1 / 6, 2 / 6, 0.5, 4 / 6, 5 / 6, 1.0],
    ]
    assert "relative depth" in fig["layout"]["xaxis"]["title"]["text"]
    shapes = fig["layout"]["shapes"]
    # centre of gravity per model (relative), the shared baselines once, static per model
    assert sorted(s["x0"] for s in shapes if s["type"] == "line" and s["x0"] == s["x1"]) == [
        0.5,
        0.5,
    ]
    texts = [a["text"] for a in fig["layout"]["annotations"]]
    assert sum("centre of gravity" in t for t in texts) == 2
    names = [t.get("name", "") for t in fig["data"]]
    assert sum("majority label" in n for n in names) == 1  # the same for both: drawn once
    assert sum("static vectors" in n for n in names) == 2  # one per model
    same = overlay_curves([bert, fake_results("other", 6)]).to_plotly_json()
    assert same["layout"]["xaxis"]["title"]["text"].startswith("layer")


def test_wsd_figure_has_f1_and_first_sense_and_no_mix():
    from probing.figures.probing_page import mix_weights_figure, probing_figure

    wsd = fake_results("m", 6, task="wsd")
    fig = probing_figure([wsd]).to_plotly_json()
    assert fig["layout"]["yaxis"]["title"]["text"] == "F1"
    assert any("WordNet first sense" in t.get("name", "") for t in fig["data"])
    assert not any("WordNet" in a["text"] for a in fig["layout"].get("annotations", []))
    assert mix_weights_figure([wsd]) is None


def test_downloads_round_trip(tmp_path):
    from probing.figures.probing_page import results_csv, results_json

    one, two = fake_results("a", 2), fake_results("b", 6)
    # One run: the CLI's JSON format, which ProbeResults.from_json reads back.
    (tmp_path / "one.json").write_text(results_json([one]))
    back = ProbeResults.from_json(tmp_path / "one.json")
    assert back.model == "a" and len(back.table) == len(one.table)
    assert [d["model"] for d in json.loads(results_json([one, two]))] == ["a", "b"]
    csv = pd.read_csv(io.StringIO(results_csv([one, two])))
    assert list(csv.columns) == COLUMNS and set(csv["model"]) == {"a", "b"}


def test_a_started_run_goes_on_across_page_changes_with_its_progress(minilm, monkeypatch):
    import threading

    import ui.views.probing_page as view

    go = threading.Event()
    real = view.progress_callback

    def held(  # the real bar, once released
        *args: Any,
        **kwargs: Any,  # Any: passed on to progress_callback as given
    ) -> Callable[[str, int, int], None]:
        report = real(*args, **kwargs)

        def wait_then(stage: str, done: int, total: int) -> None:
            # The run's progress comes back from its worker process through this thread:
            # holding it here holds the run (its end cannot reach the page before).
            report(stage, done, total)
            assert go.wait(300)

        return wait_then

    monkeypatch.setattr(view, "progress_callback", held)
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=300).run()
    at.switch_page("pages/4_Probing.py").run()
    at.number_input(key="probe_train").set_value(60)
    at.multiselect(key="probe_layers").set_value([0, 1])
    at.number_input(key="probe_eval").set_value(20)
    at.run()
    run_button(at).click().run()
    assert at.get("progress"), "the run's progress is shown"
    at.switch_page("pages/2_Fill_Mask.py").run()  # used to cancel the run
    at.switch_page("pages/4_Probing.py").run()
    assert not at.exception, at.exception
    assert at.get("progress") and run_button(at).disabled
    assert any("still going" in c.value for c in at.caption)
    go.set()
    finish(at)
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert "run in this app with these settings (60 training sentences" in text(at)
    assert not at.get("progress") and not run_button(at).disabled
