"""The Report page: the committed layer reports, and a report of the sidebar's model within a
time budget (``python -m probing report``), planned before it runs, run as a background job
and shown here (and downloadable) when it ends.

The library does the work (:mod:`probing.report`); the heavy steps (calibrating the model,
the parts) run in a worker process through :mod:`ui.tasks`. A run writes into a cache folder
per model and budget, part by part, so a run that was stopped resumes from its finished
parts when started again.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st
import streamlit.components.v1 as components

from probing import config
from probing.errors import InvalidArgumentError, ResultFileError
from probing.report.plan import PARTS, format_seconds, parse_budget
from probing.report.run import rebuild_page
from ui import background, tasks
from ui.common import friendly_errors, get_encoder, model_picker, page_header
from ui.jobs import heavy_job, offload
from ui.state import all_of, as_strs, one_of, persist

REPORTS_DIR = config.REPO_ROOT / "results" / "reports"
DEFAULT_BUDGET = "2m"
DEMO_MAX_BUDGET_S = 240.0  # the demo stops a job after 300 s; loading and calibrating too
PAGE_HEIGHT = 900


def render() -> None:
    """Draw the page (all of it but the page config)."""
    page_header(
        "Report",
        "What each layer of a model knows, in one page: probes, word senses, layer "
        "similarity, contextuality, attention and (with a language-model head) cloze "
        "accuracy, the tuned lens and agreement, sized to a time budget.",
    )
    committed_view()
    st.divider()
    run_view()


# -- committed reports ------------------------------------------------------------------


def committed_reports(folder: Path | None = None) -> dict[str, Path]:
    """{name: report.html} of the reports committed under ``results/reports/<name>/``. Only
    ``report.json`` and the part records are committed (the page embeds plotly, ~5 MB): a
    missing page is written once into the cache from them."""
    folder = REPORTS_DIR if folder is None else folder
    if not folder.is_dir():
        return {}
    out = {}
    for d in sorted(folder.iterdir()):
        if (d / "report.html").is_file():
            out[d.name] = d / "report.html"
        elif (d / "report.json").is_file():
            page = config.cache_dir() / "reports" / d.name / "report.html"
            if not page.is_file() or page.stat().st_mtime < (d / "report.json").stat().st_mtime:
                try:
                    page.parent.mkdir(parents=True, exist_ok=True)
                    rebuild_page(d, page)
                except (ResultFileError, OSError):
                    continue  # an unfinished or unreadable report is not offered
            out[d.name] = page
    return out


def committed_view() -> None:
    st.subheader("Committed reports")
    reports = committed_reports()
    if not reports:
        st.info(
            "No committed reports yet: `python -m probing report --model minilm-l6 --budget "
            "10m --out results/reports/minilm-l6 --overwrite` makes one."
        )
        return
    names = list(reports)
    picked = st.radio(
        "Report",
        names,
        horizontal=True,
        key=persist("report_shipped", names[0], "report", valid=one_of(names)),
    )
    show_report(reports[picked], picked, "shipped")


def show_report(path: Path, name: str, key: str) -> None:
    """The report's page inline (it is self-contained) and a download button."""
    page = path.read_text(encoding="utf-8")
    st.download_button(
        "Download the report (one HTML file, opens offline)",
        page,
        file_name=f"report-{safe_name(name)}.html",
        mime="text/html",
        key=f"report_download_{key}",
    )
    components.html(page, height=PAGE_HEIGHT, scrolling=True)


# -- a report of the sidebar's model ---------------------------------------------------------


def safe_name(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_") or "model"


def out_folder(model: str, budget_s: float) -> Path:
    """Where a report of ``model`` within ``budget_s`` is written (the cache, never the
    shipped results): one folder per model and budget, so a stopped run resumes."""
    return config.cache_dir() / "reports" / safe_name(model) / format_seconds(budget_s)


def budget_limit() -> float:
    """The longest budget this server runs: the demo's cap, else the job time limit."""
    if config.demo_mode():
        return DEMO_MAX_BUDGET_S
    return float(config.limits().job_seconds) * 0.9


def read_budget(text: str) -> float:
    """Seconds of the budget typed, within what this server runs.

    Raises:
        InvalidArgumentError: unreadable, out of range, or over this server's limit.
    """
    seconds = parse_budget(text)
    limit = budget_limit()
    if seconds > limit:
        where = "The shared demo" if config.demo_mode() else "This server"
        raise InvalidArgumentError(
            f"{where} runs reports of at most {format_seconds(limit)}; the budget "
            f"{text.strip()} is longer. Pick {format_seconds(limit)} or less, or run "
            "`python -m probing report` on your own machine."
        )
    return seconds


def run_view() -> None:
    st.subheader("Report of your model")
    models = model_picker()
    if not models:
        st.info("Pick a model in the sidebar.")
        return
    model = models[0]
    also = f" (the first of the sidebar's models; {models[1]} is left out)" if models[1:] else ""
    st.markdown(f"**Model:** {model}{also}.")
    text = st.text_input(
        "Time budget",
        key=persist("report_budget", DEFAULT_BUDGET, "budget"),
        max_chars=20,
        help="How long the report may take: 90s, 2m, 10m, 1h30m. The plan sizes every part "
        "to fit and says what it shrank.",
    )
    names = st.multiselect(
        "Parts",
        list(PARTS),
        # "all" is left out of the address (as the Probing page's layers are)
        key=persist(
            "report_parts",
            list(PARTS),
            "parts",
            as_strs,
            all_of(PARTS),
            show=lambda v: None if list(v) == list(PARTS) else v,
        ),
        help="All by default; a part the model cannot do is listed with the reason.",
    )
    try:
        budget_s = read_budget(text)
    except InvalidArgumentError as exc:
        st.error(str(exc))
        return
    if not names:
        st.info("Pick at least one part.")
        return
    names = [n for n in PARTS if n in names]  # the report's order
    out = out_folder(model, budget_s)
    key = background.session_key("report")
    show_ended(key)
    if background.get(key) is not None:
        background.show_progress(key, f"Report of {model} within {format_seconds(budget_s)}.")
        return
    plan = plan_view(model, budget_s, out, names)
    done = out / "report.html"
    if plan is not None and st.button(
        "Run the report (a background job)", key="report_run", type="primary"
    ):
        start_run(key, model, budget_s, out, names, plan)
        st.rerun()
    if done.is_file():
        made = "" if config.demo_mode() else f" (in `{out}`)"
        st.caption(f"The last report of {model} within {format_seconds(budget_s)}{made}:")
        show_report(done, f"{model}-{format_seconds(budget_s)}", "run")


def plan_view(model: str, budget_s: float, out: Path, names: list[str]) -> dict[str, Any] | None:
    """The plan for (model, budget), made on request (calibrating the model takes a few
    seconds), shown as a table; None until made."""
    plans: dict = st.session_state.setdefault("_report_plans", {})
    wanted = (model, budget_s, tuple(names))
    if st.button("Plan the report", key="report_plan"):
        if get_encoder(model) is None:  # a load failure is shown here
            return None
        with friendly_errors("Planning the report"), heavy_job("Report plan"):
            plans[wanted] = offload(tasks.report_plan, model, budget_s, str(out), names)
    plan = plans.get(wanted)
    if plan is None:
        st.caption(
            "Press **Plan the report** to see which parts this model can do, at what size, "
            "and how long each is estimated to take (the model is timed on a few sentences)."
        )
        return None
    st.markdown(
        f"**Plan:** estimated {plan['estimate_s']:.0f} s of a {format_seconds(budget_s)} "
        f"budget (planned at {plan['headroom']:.0%} of it); encoding "
        f"{plan['calibration']['seconds_per_sentence'] * 1000:.0f} ms per sentence here now."
    )
    st.dataframe(plan_table(plan), hide_index=True, key="report_plan_table")
    skipped = [p for p in plan["parts"] if p["skipped"]]
    if skipped:
        from probing.report.parts import TITLES

        st.markdown(
            "**Not run:**\n"
            + "\n".join(f"- {TITLES.get(p['name'], p['name'])}: {p['skipped']}" for p in skipped)
        )
    return plan


def plan_table(plan: dict[str, Any]) -> pd.DataFrame:
    """One row per part the plan runs: its size, its estimate, and whether it was shrunk
    (the parts not run are listed apart, with their reasons)."""
    from probing.report.parts import TITLES

    return pd.DataFrame(
        [
            {
                "part": TITLES.get(p["name"], p["name"]),
                "size": p["size"],
                "estimate (s)": p["estimate_s"],
                "note": f"shrunk from {p['full_size']}" if p["shrunk"] else "full size",
            }
            for p in plan["parts"]
            if not p["skipped"]
        ],
        columns=["part", "size", "estimate (s)", "note"],
    )


def start_run(
    key: str, model: str, budget_s: float, out: Path, names: list[str], plan: dict[str, Any]
) -> None:
    """The report as a background run in a worker process; its progress comes back here."""

    def work(sink: background.ProgressSink) -> str:
        offload(
            tasks.layer_report,
            model,
            budget_s,
            str(out),
            names,
            progress=lambda fraction, text: sink.progress(fraction, text),
        )
        return str(out / "report.html")

    background.start(key, f"Report of {model}", work, expected_s=plan["estimate_s"])


def show_ended(key: str) -> None:
    """Collect an ended run; its error shown as one message (its page is in its folder)."""
    ended = background.collect(key)
    if ended is not None and ended.error is not None:
        with friendly_errors("The report"):
            raise ended.error
