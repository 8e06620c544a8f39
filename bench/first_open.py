"""First open of every page with every embedded model, warm cache (issue 46).

"Warm cache": the model is loaded in the server process, the app's modules are imported and
the disk caches are as a running server has them; what is timed is a page's *first* script run
for a new session (``streamlit.testing``'s AppTest, in this process, the model picked in the
sidebar; AppTest's per-test scan for components is done once, as a server does at start).
Nothing the page computes for this model is cached in the process yet: each page was run
once before with another model, for its imports only. Background runs a page starts (the SemCor neighbour pool of Static vs Contextual) are
not waited for in the timing: the page shows its progress. They are allowed to end before the
next page is timed, so that one page's background work does not slow the next one's figure.

By default the stored neighbour pools are moved aside for the run (``--pools absent``): the
worst first open, where the pool must be encoded. ``--pools present`` keeps them.

Prints a markdown table for docs/benchmarks.md, with the machine, date and load average.

    OMP_WAIT_POLICY=PASSIVE OMP_NUM_THREADS=1 python bench/first_open.py \\
        [--models minilm-l6 mpnet-base] [--only Static] [--pools present] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sys
import tempfile
import time
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

MODELS = ("minilm-l6", "minilm-l6-mlm", "elmo-mini", "mpnet-base")
LIMIT_S = 5.0  # the bar: every first open under 5 s on 2 cores


def pages() -> tuple[str, ...]:
    """The home page and every page the sidebar lists (read from the app's own list)."""
    from ui.navigation import PAGES

    return ("app.py", *(page.script for page in PAGES))


_components = None  # the server's component registry: discovered once, as at server start


def new_session(page: str, model: str) -> AppTest:
    """A new session of ``page`` with ``model`` picked. AppTest scans every installed
    package for Streamlit components on each new AppTest (0.5-2 s here); a server does that
    once at start, so the scan is done once and shared."""
    from streamlit.components.v2.component_manager import BidiComponentManager
    from streamlit.testing.v1 import AppTest

    global _components
    if _components is None:
        _components = BidiComponentManager()
        _components.discover_and_register_components(start_file_watching=False)
    at = AppTest.from_file(str(ROOT / page), default_timeout=900)
    at._bidi_component_manager = _components
    at.session_state["models"] = [model]
    return at


def wait_for_background(timeout: float = 900.0) -> float:
    """Seconds spent waiting for the background runs pages started (pools) to end."""
    from ui import background

    t0 = time.perf_counter()
    for run in list(background._runs().values()):
        run.done.wait(timeout)
    return time.perf_counter() - t0


def warm_up(model: str) -> None:
    """Load the model and import every page's modules (one throwaway run of each page, with
    another model, so that nothing this model's pages compute is cached yet)."""
    from probing.models.registry import load_encoder

    load_encoder(model)
    for page in pages():
        at = new_session(page, "minilm-l6" if model != "minilm-l6" else "elmo-mini")
        at.session_state["sc_nn"] = False  # not the neighbour pool of the other model
        at.run()
        wait_for_background()


def first_opens(model: str, only: str | None = None) -> list[dict]:
    """Each page's first script run for a new session with ``model`` picked."""
    rows = []
    for page in pages():
        if only and only not in page:
            continue
        at = new_session(page, model)
        c0, t0 = time.process_time(), time.perf_counter()
        at.run()
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        problems = [str(e.value) for e in at.exception] + [e.value for e in at.error]
        background_s = wait_for_background()
        rows.append(
            {
                "model": model,
                "page": page,
                "wall_s": round(wall, 2),
                "cpu_s": round(cpu, 2),
                "load1": round(os.getloadavg()[0], 2),
                "background_s": round(background_s, 1),
                "problems": problems,
            }
        )
        print(json.dumps(rows[-1]), flush=True)
    return rows


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--models", nargs="*", default=list(MODELS))
    p.add_argument("--only", help="time only the pages whose file name contains this")
    p.add_argument("--pools", choices=("absent", "present"), default="absent")
    p.add_argument("--json", help="write the rows here too")
    args = p.parse_args(argv)

    from probing.analyses import pool_store

    stored, aside = pool_store.pool_dir(), None
    if args.pools == "absent" and stored.exists():
        # Moved aside (not a private cache folder: the feature caches stay warm), and back at
        # the end; the worker processes that build pools see the same folder.
        aside = Path(tempfile.mkdtemp(prefix="cl-pools-aside-", dir=stored.parent))
        stored.rename(aside / stored.name)
        print(f"stored neighbour pools moved aside to {aside} for the run", flush=True)
    rows = []
    try:
        for model in args.models:
            warm_up(model)
            rows += first_opens(model, args.only)
    finally:
        wait_for_background()
        if aside is not None:
            shutil.rmtree(stored, ignore_errors=True)  # the pools built during the run
            (aside / stored.name).rename(stored)
            aside.rmdir()
    load = os.getloadavg()
    print(
        f"\n{date.today()} · {os.cpu_count()} cores, {platform.machine()}, no GPU · "
        f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')} · load avg "
        f"{load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} (1/5/15 min) at the end · "
        f"stored neighbour pools {args.pools}\n"
    )
    print("| page | " + " | ".join(args.models) + " |")
    print("|---|" + "---|" * len(args.models))
    for page in dict.fromkeys(r["page"] for r in rows):
        cells = []
        for model in args.models:
            r = next((r for r in rows if r["page"] == page and r["model"] == model), None)
            cells.append(
                "–"
                if r is None
                else f"{r['wall_s']:.2f} s (CPU {r['cpu_s']:.2f}, load {r['load1']:.1f})"
                + (" ⚠" if r["problems"] else "")
            )
        print(f"| `{page}` | " + " | ".join(cells) + " |")
    slow = [r for r in rows if r["wall_s"] >= LIMIT_S]
    print(
        f"\nover {LIMIT_S:.0f} s: "
        + (", ".join(f"{r['page']} ({r['model']})" for r in slow) or "none")
    )
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
