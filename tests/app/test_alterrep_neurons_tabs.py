"""The Interventions page's "AlterRep" and "Neurons" tabs through streamlit's AppTest: the
committed runs draw with intervals and the comparison engine's calls, and bad input (a
subject that is not in the sentence, k above the layer's dimension) gets one clear message
before any work."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from ui.common import md_text

REPO = Path(__file__).resolve().parents[2]
PAGE = str(REPO / "pages" / "8_Interventions.py")


@pytest.fixture(autouse=True)
def local_mode(monkeypatch):
    monkeypatch.delenv("CONTEXTLENS_DEMO", raising=False)
    monkeypatch.setenv("CONTEXTLENS_JOB_WORKERS", "0")  # heavy jobs in this process


def _charts(at: AppTest) -> dict[str, dict]:
    charts = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    return {c["layout"]["title"]["text"]: c for c in charts}


def _open(model: str = "minilm-l6-mlm") -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=300)
    at.session_state["models"] = [model]
    at.run()
    assert not at.exception, at.exception
    return at


def _committed(folder: str, name: str) -> dict:
    return json.loads((REPO / "results" / folder / name).read_text())


def test_both_tabs_draw_the_committed_runs_with_intervals_and_the_engines_calls():
    at = _open()
    charts = _charts(at)
    # AlterRep: the flip curve per layer, each point with its interval.
    stored = _committed("alterrep", "minilm-l6-mlm__alterrep.json")
    flips = next(c for t, c in charts.items() if "agreement choices flipped" in t)
    cf = flips["data"][0]
    assert cf["x"] == [r["layer"] for r in stored["rows"]]
    assert cf["y"] == pytest.approx([r["flip_counterfactual"] for r in stored["rows"]])
    assert len(cf["error_y"]["array"]) == len(stored["rows"])
    markdown = "\n".join(m.value for m in at.markdown)
    # One line per layer, written from the stored engine table (Holm over the layers).
    for row in stored["comparisons"]["rows"]:
        layer = row["a"].rsplit("L", 1)[-1]
        assert md_text(f"Layer {layer}: ") in markdown  # (the page escapes Markdown)
    # Neurons: top k and random k per k with intervals, for the probe and the ablation.
    run = _committed("neurons", "minilm-l6-mlm__ud-ewt__neurons-pos-L3.json")
    probe = next(c for t, c in charts.items() if "probe on k neurons" in t)
    ks = [str(r["k"]) for r in run["probes"]["rows"]]
    assert [t["x"] for t in probe["data"]] == [ks] * 3
    random = probe["data"][2]
    assert random["y"] == pytest.approx([r["random_accuracy"] for r in run["probes"]["rows"]])
    assert all(v >= 0 for v in random["error_y"]["arrayminus"])
    assert any("masked-LM loss with k neurons" in t for t in charts)
    n_calls = len(run["probes"]["comparisons"]["rows"]) + len(
        run["ablation"]["comparisons"]["rows"]
    )
    assert markdown.count(" vs random ") == n_calls
    assert not at.error, [e.value for e in at.error]


def test_alterrep_sentence_with_a_missing_subject_is_one_message():
    at = _open()
    at.text_input(key="ar_subject").input("cats").run()
    at.button(key="ar_push").click().run()
    assert not at.exception, at.exception
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and "'cats' is not a word before [MASK]" in errors[0], errors


def test_neurons_k_above_the_dimension_is_one_message():
    at = _open()
    at.text_input(key="nu_ks").input("1, 500").run()
    at.button(key="nu_go").click().run()
    assert not at.exception, at.exception
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and "k = 500" in errors[0] and "384" in errors[0], errors


def test_alterrep_tab_on_elmo_says_why_not():
    """ELMo has no masked-LM head: no committed run, no controls, and a reason."""
    at = _open("elmo-mini")
    infos = " ".join(i.value for i in at.info)
    assert "No committed AlterRep run for elmo-mini" in infos
    assert "no masked-LM head" in infos
    assert not at.error, [e.value for e in at.error]


def test_small_runs_on_request_draw_their_figures():
    """Both tabs' buttons: a one-layer AlterRep (the registry's entry) and a small neurons
    run draw their figures with the engine's calls, keyed to the settings asked for."""
    at = _open()
    at.number_input(key="ar_fit").set_value(200).run()
    at.number_input(key="ar_eval").set_value(100).run()
    at.slider(key="ar_layer").set_value(3).run()
    at.button(key="ar_run").click().run()
    assert not at.exception and not at.error, (at.exception, [e.value for e in at.error])
    flips = [c for t, c in _charts(at).items() if "agreement choices flipped" in t]
    assert any(c["data"][0]["x"] == [3] for c in flips), [c["data"][0]["x"] for c in flips]
    at.number_input(key="nu_train").set_value(40).run()
    at.number_input(key="nu_draws").set_value(2).run()
    at.text_input(key="nu_ks").input("2, 20").run()
    at.button(key="nu_go").click().run()
    assert not at.exception and not at.error, (at.exception, [e.value for e in at.error])
    probes = [c for t, c in _charts(at).items() if "probe on k neurons" in t]
    assert any(c["data"][0]["x"] == ["2", "20"] for c in probes)
    assert "probeless top 20 vs random 20" in "\n".join(m.value for m in at.markdown)


def test_the_shared_demo_caps_the_on_request_sizes(monkeypatch):
    """In the demo the boxes stop at the demo's caps (AlterRepParams' demo_max; the Neurons
    tab's own), and a link asking for more opens at the default instead."""
    monkeypatch.setenv("CONTEXTLENS_DEMO", "1")
    at = AppTest.from_file(PAGE, default_timeout=300)
    at.session_state["models"] = ["minilm-l6-mlm"]
    at.query_params["ar_fit"] = "1500"  # the page's cap outside the demo
    at.run()
    assert not at.exception, at.exception
    caps = {k: at.number_input(key=k).max for k in ("ar_fit", "ar_eval", "nu_train", "nu_draws")}
    assert caps == {"ar_fit": 500, "ar_eval": 300, "nu_train": 150, "nu_draws": 5}
    assert at.number_input(key="ar_fit").value == 500


def test_alterrep_pushes_the_typed_sentence():
    """The user's sentence before and after: three rows (no push, counterfactual, random),
    each with the margin and the form it prefers."""
    at = _open()
    at.number_input(key="ar_fit").set_value(200).run()
    at.button(key="ar_push").click().run()
    assert not at.exception and not at.error, (at.exception, [e.value for e in at.error])
    frame = next(d.value for d in at.dataframe if "prefers" in d.value.columns)
    assert list(frame[""]) == [
        "no push",
        "counterfactual push at layer 2",
        "random push, same length",
    ]
    assert set(frame["prefers"]) <= {"is", "are"} and frame["prefers"].iloc[0] == "are"
