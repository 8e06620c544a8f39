"""Run a report's parts in order, each written to ``OUT/parts/<part>.json`` (+ ``.csv``)
atomically as soon as it ends, then the page and ``report.json``.

Resuming: ``OUT/plan.json`` holds the plan and what it was made for (the model's weights,
the budget, the parts asked for). A re-run with the same request reuses that plan (so that
calibration noise cannot change the sizes) and skips every part whose file holds the same
settings, weights and data fingerprints; a part file made otherwise is recomputed and
replaced (said on stderr). A different request makes a new plan.

Where the parts run: in this process, one after the other (``executor=None``, the CLI's
``--executor local``), or as tasks of a Ray executor (:mod:`probing.report.remote`: one
task per group of parts that share features, run in parallel); either way the driver writes
each part's files as it ends, so the files, the page and resuming are the same. Parts that
run in parallel are not shrunk while the report runs (:func:`shrink_rest` is for one part
after another).
"""

from __future__ import annotations

import contextlib
import json
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from probing.errors import ReportBudgetError, ResultFileError
from probing.io import atomic_write_json, atomic_write_text
from probing.report import identity, parts
from probing.report.plan import (
    HEADROOM,
    LADDERS,
    PARTS,
    REPORT_OVERHEAD_S,
    Calibration,
    Plan,
    PlannedPart,
    estimate,
    format_seconds,
    make_plan,
    part_data,
    part_settings,
)

if TYPE_CHECKING:
    from probing.encoders.base import Encoder
    from probing.sweep.executors import RayExecutor

PLAN_FILE, REPORT_JSON, REPORT_HTML, PARTS_DIR = "plan.json", "report.json", "report.html", "parts"


def request_of(model_id: dict[str, Any], budget_s: float, names: tuple[str, ...]) -> dict:
    """What a plan is made for: a re-run with an equal request reuses it."""
    return {
        "model": model_id["model"],
        "weights": model_id["weights_combined_sha256"],
        "layers": model_id["layers"],
        "dim": model_id["dim"],
        "budget_s": budget_s,
        "parts": list(names),
    }


def plan_from_dict(d: dict[str, Any]) -> Plan:
    cal = Calibration(**d["calibration"])
    planned = [
        PlannedPart(
            p["name"], p["size"], p["full_size"], p["settings"], p["estimate_s"], p["skipped"]
        )
        for p in d["parts"]
    ]
    return Plan(d["budget_s"], cal, planned)


def load_or_make_plan(
    out: Path, encoder: Encoder, request: dict, budget_s: float, names: tuple[str, ...]
) -> tuple[Plan, bool]:
    """(the plan, whether it was reused from ``OUT/plan.json``)."""
    try:
        stored = json.loads((out / PLAN_FILE).read_text(encoding="utf-8"))
        if stored.get("request") == request:
            return plan_from_dict(stored["plan"]), True
    except (OSError, ValueError, KeyError, TypeError):
        pass
    return make_plan(encoder, budget_s, names), False


def part_key(part: PlannedPart, model_id: dict[str, Any]) -> dict[str, Any]:
    """What a stored part must match to be reused: its settings, the weights and the data
    it reads (each split's fingerprint, so that another data folder recomputes it)."""
    from probing.features import dataset_fingerprint

    return {
        "settings": part.settings,
        "weights": model_id["weights_combined_sha256"],
        "data": {
            f"{dataset}/{s}": dataset_fingerprint(dataset, s)
            for dataset, s in part_data(part.name, part.settings)
        },
    }


def read_part(path: Path) -> dict[str, Any] | None:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def kept_part(
    out: Path, name: str, key: dict[str, Any], say: Callable[[str], None]
) -> dict[str, Any] | None:
    """Part ``name``'s stored record when it was made with ``key`` (said); ``None`` when the
    part must run (a record made otherwise is said to be recomputed)."""
    stored = read_part(out / PARTS_DIR / f"{name}.json")
    if stored is not None and stored.get("key") == key:
        say(f"{name}: done before ({stored['seconds']:.1f} s), kept")
        return stored
    if stored is not None:
        say(f"{name}: stored with other settings; recomputing")
    return None


@dataclass
class Prepared:
    """What a report run needs before its first file: the model's identity, the request
    and the plan (``reused``: from ``OUT/plan.json``)."""

    model_id: dict[str, Any]
    request: dict[str, Any]
    plan: Plan
    reused: bool


def prepare(
    model: str, encoder: Encoder, out: Path, budget_s: float, names: tuple[str, ...] = PARTS
) -> Prepared:
    """The identity and the plan (calibrating the model unless a stored plan fits).

    Raises:
        ReportBudgetError: the budget is too small for the smallest plan.
    """
    model_id = identity.model_identity(model, encoder)
    request = request_of(model_id, budget_s, names)
    plan, reused = load_or_make_plan(out, encoder, request, budget_s, names)
    return Prepared(model_id, request, plan, reused)


def run_report(
    model: str,
    encoder: Encoder,
    out: Path,
    budget_s: float,
    names: tuple[str, ...] = PARTS,
    *,
    prepared: Prepared | None = None,
    started: float | None = None,
    log: TextIO | None = sys.stderr,
    progress: Callable[[float, str], None] | None = None,
    executor: RayExecutor | None = None,
) -> dict[str, Any]:
    """Plan (or reuse the plan), run every part not already done, write the page and
    ``report.json``; returns the report's record. ``started``: ``time.perf_counter()`` when
    the command began (the total then counts loading and calibrating). ``progress``: called
    with (fraction of the plan's estimated seconds done, what runs now), e.g. by the app.
    ``executor``: run the parts as its tasks (:mod:`probing.report.remote`; the caller
    closes it); None runs them here, in order."""
    from probing.report.html import write_page

    start = time.perf_counter() if started is None else started
    say = (lambda text: print(text, file=log, flush=True)) if log else (lambda text: None)
    prepared = prepared or prepare(model, encoder, out, budget_s, names)
    model_id, plan = prepared.model_id, prepared.plan
    (out / PARTS_DIR).mkdir(parents=True, exist_ok=True)
    atomic_write_json(out / PLAN_FILE, {"request": prepared.request, "plan": plan.to_dict()})
    reused = f" (plan reused from {PLAN_FILE})" if prepared.reused else ""
    say(
        f"report of {encoder.info.name}: budget {format_seconds(budget_s)}, estimate "
        f"{plan.estimate_s:.0f} s{reused}"
    )
    for p in plan.parts:
        if p.skipped:
            say(f"  {p.name}: not run — {p.skipped}")
        else:
            shrunk = f" (shrunk from {p.full_size})" if p.shrunk else ""
            say(f"  {p.name}: size {p.size}{shrunk}, estimate {p.estimate_s:.0f} s")
    records: dict[str, dict[str, Any]] = {}
    runnable = plan.runnable
    tell = progress or (lambda fraction, text: None)
    whole = max(sum(p.estimate_s for p in runnable), 1e-9)
    before = 0.0  # estimated seconds of the parts before this one
    spent = {"measured": 0.0, "estimated": 0.0}  # parts computed in this run
    in_process = runnable if executor is None else []  # else: run_as_tasks, below
    for i, p in enumerate(in_process):
        key = part_key(p, model_id)
        stored = kept_part(out, p.name, key, say)
        if stored is not None:
            records[p.name] = stored
            before += p.estimate_s
            tell(before / whole, f"{p.name}: done before, kept")
            continue
        say(f"{p.name}: running (estimate {p.estimate_s:.0f} s)")

        share, head = p.estimate_s / whole, f"part {i + 1} of {len(runnable)}, {p.name}"
        tell(before / whole, f"{head}: starting (estimate {p.estimate_s:.0f} s)")

        def part_progress(
            stage: str,
            done: int,
            total: int,
            name: str = p.name,
            at: float = before / whole,
            share: float = share,
            head: str = head,
        ) -> None:
            if log:
                end = "\n" if done >= total else ""
                print(f"\r  {name}: {stage} {done}/{total}", end=end, file=log, flush=True)
            tell(at + share * min(1.0, done / max(total, 1)), f"{head}: {stage} {done}/{total}")

        t = time.perf_counter()
        payload, csv = parts.run_part(p.name, encoder, p.settings, part_progress)
        seconds = time.perf_counter() - t
        records[p.name] = write_part(out, p, key, payload, csv, seconds)
        say(f"{p.name}: {seconds:.1f} s (estimate {p.estimate_s:.0f} s)")
        spent["measured"] += seconds
        spent["estimated"] += p.estimate_s
        before += p.estimate_s
        left = budget_s - (time.perf_counter() - start)
        if shrink_rest(encoder, plan, in_process[i + 1 :], spent, left, say):
            atomic_write_json(
                out / PLAN_FILE, {"request": prepared.request, "plan": plan.to_dict()}
            )
    if executor is not None:
        run_as_tasks(executor, model, model_id, out, runnable, records, say, tell)
    records = {p.name: records[p.name] for p in runnable if p.name in records}  # plan order
    by_part = {p.name: p.settings for p in runnable}
    datasets = sorted(
        {"ud-ewt"} | {d for n in records for d, _ in part_data(n, by_part.get(n, {}))}
    )
    report = {
        "model": model_id,
        "data": identity.data_identity(datasets),
        "software": identity.software(),
        # attention-stats has none: its documents are spread evenly over the split
        "seeds": {p.name: p.settings["seed"] for p in runnable if "seed" in p.settings},
        "plan": plan.to_dict(),
        "timings": {
            n: {"estimate_s": r["estimate_s"], "seconds": r["seconds"]} for n, r in records.items()
        },
        "claims": {n: parts.claims(n, r["result"]) for n, r in records.items()},
        "skipped": {p.name: p.skipped for p in plan.parts if p.skipped},
        "executor": (
            {"name": "local", "workers": 1, "gpu": False}
            if executor is None
            else {"name": executor.name, "workers": executor.workers, "gpu": executor.gpu}
        ),
    }
    tell(1.0, "writing the page")
    write_page(out / REPORT_HTML, report, records, plan)
    # This run's wall time (a resumed run: only what it did), loading and calibration included
    # when ``started`` was given.
    report["total_s_this_run"] = round(time.perf_counter() - start, 1)
    report["plan_reused"] = prepared.reused
    atomic_write_json(out / REPORT_JSON, report)
    say(f"wrote {out / REPORT_HTML} and {REPORT_JSON} ({report['total_s_this_run']:.0f} s)")
    return report


def write_part(
    out: Path,
    p: PlannedPart,
    key: dict[str, Any],
    payload: dict[str, Any],
    csv: str,
    seconds: float,
) -> dict[str, Any]:
    """Write part ``p``'s CSV, then its record (whose presence means the part is done)."""
    record = {
        "part": p.name,
        "key": key,
        "settings": p.settings,
        "estimate_s": round(p.estimate_s, 2),
        "seconds": round(seconds, 2),
        "finished": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "result": payload,
    }
    atomic_write_text(out / PARTS_DIR / f"{p.name}.csv", csv)
    atomic_write_json(out / PARTS_DIR / f"{p.name}.json", record)
    return record


def run_as_tasks(
    executor: RayExecutor,
    model: str,
    model_id: dict[str, Any],
    out: Path,
    runnable: list[PlannedPart],
    records: dict[str, dict[str, Any]],
    say: Callable[[str], None],
    tell: Callable[[float, str], None],
) -> None:
    """Keep the parts done before, run the others as the executor's tasks and write each
    one's files as it arrives (into ``records``)."""
    from probing.report import remote

    whole = max(sum(p.estimate_s for p in runnable), 1e-9)
    done_s, todo, keys = 0.0, [], {}
    for p in runnable:
        keys[p.name] = key = part_key(p, model_id)
        stored = kept_part(out, p.name, key, say)
        if stored is not None:
            records[p.name] = stored
            done_s += p.estimate_s
            tell(done_s / whole, f"{p.name}: done before, kept")
            continue
        todo.append(p)
    if not todo:
        return
    gpu = ", a GPU each" if executor.gpu else ""
    say(
        f"{len(todo)} part(s) as {len(remote.groups(todo))} {executor.name} task(s) on "
        f"{executor.workers} CPU(s){gpu}: " + ", ".join(p.name for p in todo)
    )
    tell(done_s / whole, f"{len(todo)} part(s) submitted")
    by_name = {p.name: p for p in todo}
    arriving = remote.run_parts(executor, model, model_id["weights_combined_sha256"], todo)
    with contextlib.closing(arriving):  # stopped here: the tasks still out are cancelled now
        for r in arriving:
            p = by_name[r["part"]]
            records[p.name] = write_part(out, p, keys[p.name], r["payload"], r["csv"], r["seconds"])
            done_s += p.estimate_s
            say(f"{p.name}: {r['seconds']:.1f} s on {r['worker']} (estimate {p.estimate_s:.0f} s)")
            tell(done_s / whole, f"{p.name}: done ({len(records)} of {len(runnable)})")


def shrink_rest(
    encoder: Encoder,
    plan: Plan,
    rest: list[PlannedPart],
    spent: dict[str, float],
    left_s: float,
    say: Callable[[str], None],
) -> bool:
    """When the parts so far took longer than estimated (a machine busier than its
    calibration showed), re-plan the parts still to run for the time left, their estimates
    scaled by measured / estimated so far; parts only shrink. True when a size changed."""
    ratio = spent["measured"] / max(spent["estimated"], 1e-9)
    if not rest or ratio <= 1.0:
        return False
    if sum(p.estimate_s for p in rest) * ratio <= max(0.0, left_s - REPORT_OVERHEAD_S) * HEADROOM:
        return False
    names = tuple(p.name for p in rest)
    try:
        smaller = make_plan(
            encoder,
            max(left_s, 1.0) / ratio,
            names,
            calibration=replace(plan.calibration, seconds=0.0),
        )
        sizes = {q.name: q for q in smaller.runnable}
    except ReportBudgetError:  # even the smallest sizes overrun: run them at their smallest
        sizes = {}
    changed = False
    for p in rest:
        q = sizes.get(p.name)
        new_size = q.size if q is not None else LADDERS[p.name][0]
        if p.size is not None and new_size < p.size:
            layers = int(encoder.info.n_contextual_layers) + 1
            p.size = new_size
            p.settings = part_settings(p.name, new_size, encoder.info.name)
            p.estimate_s = (
                q.estimate_s
                if q is not None
                else estimate(p.name, p.settings, plan.calibration, layers, int(encoder.info.dim))
            )
            changed = True
    if changed:
        say(
            f"running {ratio:.1f}x slower than estimated: the rest shrunk to "
            + ", ".join(f"{p.name} {p.size}" for p in rest)
        )
    return changed


def rebuild_page(folder: str | Path, page: str | Path | None = None) -> Path:
    """Write a finished report's page again from its ``report.json`` and part records (the
    page is not committed: it embeds plotly, ~5 MB; the records are). ``page``: where to
    write it (default: the folder's ``report.html``).

    Raises:
        ResultFileError: the folder lacks ``report.json`` or a part's record.
    """
    from probing.report.html import write_page

    folder = Path(folder)
    try:
        report = json.loads((folder / REPORT_JSON).read_text(encoding="utf-8"))
        plan = plan_from_dict(report["plan"])
        records = {
            name: json.loads((folder / PARTS_DIR / f"{name}.json").read_text(encoding="utf-8"))
            for name in report["timings"]
        }
    except (OSError, ValueError, KeyError) as exc:
        raise ResultFileError(f"{folder} is not a finished report: {exc}") from exc
    return write_page(Path(page) if page else folder / REPORT_HTML, report, records, plan)
