"""The Report page: committed reports listed and opened, the plan of a report of the
sidebar's model shown before it runs, a bad budget as one message, and a run in the
background that ends with the report shown."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "10_Report.py")


@pytest.fixture(autouse=True)
def local_mode(monkeypatch, tmp_path):
    monkeypatch.delenv("CONTEXTLENS_DEMO", raising=False)
    monkeypatch.setenv("CONTEXTLENS_JOB_WORKERS", "0")  # heavy jobs in this process
    monkeypatch.setenv("CONTEXTLENS_CACHE_DIR", str(tmp_path / "cache"))


def _open(**query: str) -> AppTest:
    at = AppTest.from_file(PAGE, default_timeout=300)
    for k, v in query.items():
        at.query_params[k] = v
    at.run()
    assert not at.exception, at.exception
    return at


@pytest.mark.parametrize(
    ("budget", "message"),
    [
        ("ten", "is not a duration"),
        ("5s", "--budget must be from 30s"),
        ("3h", "This server runs reports of at most"),
    ],
)
def test_a_bad_budget_is_one_clear_message(budget, message, minilm):
    at = _open()
    at.text_input(key="report_budget").input(budget).run()
    assert not at.exception
    assert len(at.error) == 1 and message in at.error[0].value, [e.value for e in at.error]
    assert not _has(at, "report_plan")  # nothing to plan until the budget reads


def _has(at: AppTest, key: str) -> bool:
    try:
        at.button(key=key)
    except KeyError:
        return False
    return True


def test_the_demo_caps_the_budget(monkeypatch, minilm):
    monkeypatch.setenv("CONTEXTLENS_DEMO", "1")
    at = _open(budget="10m")
    assert len(at.error) == 1 and "The shared demo runs reports of at most 4m" in at.error[0].value
    assert not _has(at, "report_plan")


def test_a_budget_too_small_for_the_plan_names_the_smallest(minilm):
    at = _open(budget="30s")
    at.button(key="report_plan").click().run()
    assert not at.exception
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and "smallest budget that works is --budget" in errors[0], errors


def test_the_plan_is_shown_then_the_report_runs_in_the_background(minilm):
    from ui import background

    at = _open(budget="5m", parts="contextuality,cloze")
    assert at.multiselect(key="report_parts").value == ["contextuality", "cloze"]
    assert not _has(at, "report_run")  # no run before its plan is seen
    at.button(key="report_plan").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    (table,) = [d for d in at.dataframe if "part" in d.value.columns]
    rows = table.value.set_index("part")
    # minilm-l6 has no MLM head: cloze is listed apart with its reason, not run
    assert list(rows.index) == ["Contextuality (Ethayarajh 2019)"]
    (not_run,) = [m.value for m in at.markdown if m.value.startswith("**Not run:**")]
    assert "Fill-mask cloze accuracy" in not_run and "cloze needs a masked-LM head" in not_run
    ctx = rows.loc["Contextuality (Ethayarajh 2019)"]
    assert ctx["size"] > 0 and ctx["estimate (s)"] > 0
    at.button(key="report_run").click().run()
    assert not at.exception
    runs = [r for k, r in background._runs().items() if k.endswith(":report")]
    assert runs, "no background run started"
    assert runs[-1].done.wait(240), "the report did not end"
    assert runs[-1].error is None, runs[-1].error
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert _has(at, "report_download_run") or at.get("download_button")
    page = Path(runs[-1].result).read_text()
    assert "Contextuality (Ethayarajh 2019)" in page and "not run" in page


def test_committed_reports_are_listed_and_opened(tmp_path, monkeypatch, minilm):
    import ui.views.report as view

    for name in ("elmo-mini", "minilm-l6"):
        (tmp_path / "reports" / name).mkdir(parents=True)
        (tmp_path / "reports" / name / "report.html").write_text(
            f"<html><body><h1>Layer report: {name}</h1></body></html>"
        )
    monkeypatch.setattr(view, "REPORTS_DIR", tmp_path / "reports")
    at = _open(report="minilm-l6")
    assert at.radio(key="report_shipped").value == "minilm-l6"
    assert at.radio(key="report_shipped").options == ["elmo-mini", "minilm-l6"]
    assert at.query_params["report"] == ["minilm-l6"] or at.query_params["report"] == "minilm-l6"


def test_a_committed_report_without_its_page_is_rebuilt_from_its_records(
    tmp_path, monkeypatch, minilm
):
    """Only report.json and the part records are committed (the page embeds plotly, ~5 MB,
    and results/**/*.html is ignored): the page is rebuilt into the cache, byte for byte the
    page the command wrote."""
    import shutil

    import ui.views.report as view
    from probing.report.run import rebuild_page

    shipped = Path(view.REPORTS_DIR) / "minilm-l6-mlm"
    assert (shipped / "report.json").is_file(), "the committed minilm-l6-mlm report is missing"
    copy = tmp_path / "reports" / "minilm-l6-mlm"
    shutil.copytree(shipped, copy, ignore=shutil.ignore_patterns("*.html"))
    monkeypatch.setattr(view, "REPORTS_DIR", tmp_path / "reports")
    monkeypatch.setenv("CONTEXTLENS_CACHE_DIR", str(tmp_path / "cache"))
    at = _open(report="minilm-l6-mlm")
    assert not at.exception, at.exception
    assert at.radio(key="report_shipped").options == ["minilm-l6-mlm"]
    page = tmp_path / "cache" / "reports" / "minilm-l6-mlm" / "report.html"
    assert page.is_file()
    again = rebuild_page(copy, tmp_path / "again.html")
    assert again.read_bytes() == page.read_bytes()
    html = page.read_text(encoding="utf-8")
    report = json.loads((copy / "report.json").read_text(encoding="utf-8"))
    assert "Layer report: minilm-l6-mlm" in html
    for name in report["timings"]:
        assert f"parts/{name}.csv" in html
    (copy / "parts" / "pos.json").unlink()  # a damaged report is not offered
    page.unlink()
    assert "minilm-l6-mlm" not in view.committed_reports(tmp_path / "reports")
