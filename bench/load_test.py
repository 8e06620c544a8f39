"""Load test: N concurrent browser sessions driving every page of a running ContextLens.

Starts ``streamlit run app.py`` on 127.0.0.1 (demo mode by default) unless ``--url`` is given,
then opens ``--sessions`` concurrent Chromium pages that cycle through all pages for
``--seconds`` seconds. Each visit waits until the page's script run is over, then checks for
exception boxes. Reports sessions held, visits, errors, p50/p95 page latency and the server's
peak memory (VmHWM). Loopback only; bounded in count and time.

With ``--heavy N`` (default 2) the first N sessions also do heavy actions between page
visits, in turn: upload a CoNLL-U file (the first 100 sentences of UD-EWT dev, written to a
temporary file) and run the UPOS probe on it; draw a UMAP sense map (Static vs Contextual,
Sense geometry); fit the eraser and switch heads off (Interventions); CKA on request (Layer
Similarity). Light-page latencies are reported apart from heavy actions, and the
server's peak RSS is checked against ``--rss-bound-mib`` (the bound documented in
docs/benchmarks.md).

    python bench/load_test.py --sessions 8 --seconds 120

With ``--light-clicks`` the sessions without heavy actions stay on Fill Mask and, once a
second, type a new sentence there (Ctrl+Enter) and time the click until the page is idle
with its answer drawn: the light-click latency with heavy jobs running (p50/p95 reported as
``light_click_p50_s`` / ``light_click_p95_s``).

    python bench/load_test.py --sessions 8 --heavy 2 --light-clicks --seconds 90

By default every session acts at once and without pause (a closed loop: with more sessions
than the server can serve, latency grows with the queue, whatever each action costs).
``--think S`` adds a user's think time after each visit or click (exponential, mean S,
seeded per session) and ``--ramp S`` lets the sessions arrive evenly over S seconds.

    python bench/load_test.py --sessions 16 --heavy 4 --light-clicks --think 15 --ramp 30
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import statistics
import sys
import tempfile
import time
from datetime import date
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.browser import BUSY_JS, CHROMIUM, CHROMIUM_ARGS, streamlit_server


def page_paths() -> list[str]:
    """URL paths of the home page and each page of the app's navigation (ui/navigation.py)."""
    from ui.navigation import PAGES

    return ["", *(p.url_path for p in PAGES)]


async def wait_idle(page, timeout: float) -> float:
    """Wait until the page is idle (not running, no spinner, nothing stale) for 4 polls in a
    row; return the monotonic time the idle streak began (when the page became idle), so that
    the confirmation polls are not counted as latency."""
    await page.wait_for_selector('[data-testid="stMainBlockContainer"]', timeout=timeout * 1000)
    deadline = time.monotonic() + timeout
    quiet, since = 0, time.monotonic()
    while quiet < 4:
        if time.monotonic() > deadline:
            raise TimeoutError("page kept running")
        now = time.monotonic()
        if await page.evaluate(BUSY_JS):
            quiet = 0
        else:
            since = now if quiet == 0 else since
            quiet += 1
        await asyncio.sleep(0.25)
    return since


async def wait_busy(page, within: float = 1.0) -> None:
    """Wait (up to ``within`` s) for the rerun a click started to show as running."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline and not await page.evaluate(BUSY_JS):
        await asyncio.sleep(0.05)


async def check_page(page, what: str, out: dict) -> None:
    boxes = await page.locator('[data-testid="stException"]').count()
    body = await page.inner_text("body")
    if boxes or "Traceback (most recent call last)" in body:
        out["errors"].append(f"{what}: exception box")


async def probe_upload(page, url: str, upload: Path, out: dict) -> None:
    """Upload a CoNLL-U file on the Probing page and run the UPOS probe on it."""
    await page.goto(f"{url}/Probing", timeout=120_000)
    await wait_idle(page, timeout=180)
    await page.locator('input[type="file"]').set_input_files(str(upload), timeout=LOCATE_MS)
    await wait_idle(page, timeout=180)
    await page.get_by_role("button", name="Probe UPOS on").click(timeout=LOCATE_MS)
    await asyncio.sleep(1)
    await wait_idle(page, timeout=300)
    await check_page(page, "probe upload", out)


async def umap_map(page, url: str, out: dict) -> None:
    """Static vs Contextual, Sense geometry, UMAP: the sense map of the default lemma."""
    await page.goto(f"{url}/Static_vs_Contextual", timeout=120_000)
    await wait_idle(page, timeout=180)
    await page.get_by_text("Sense geometry", exact=True).click(timeout=LOCATE_MS)
    await asyncio.sleep(1)
    await wait_idle(page, timeout=300)
    await page.get_by_text("UMAP", exact=True).click(timeout=LOCATE_MS)
    await asyncio.sleep(1)
    await wait_idle(page, timeout=300)
    await check_page(page, "umap", out)


async def erasure_fit(page, url: str, out: dict) -> None:
    """Interventions: fit the eraser on the user's sentence (a background job in the worker),
    then switch heads off (hooked fill-mask passes on the shared model)."""
    await page.goto(f"{url}/Interventions", timeout=120_000)
    await wait_idle(page, timeout=180)
    await page.get_by_role("button", name="Fit the eraser").click(timeout=LOCATE_MS)
    # The job's progress fragment reruns every second; its end shows the labels table.
    await page.get_by_text("erased at layer").first.wait_for(timeout=600_000)
    await wait_idle(page, timeout=300)
    await check_page(page, "erasure fit", out)
    await page.get_by_role("tab", name="Heads").click(timeout=LOCATE_MS)
    await wait_idle(page, timeout=180)
    box = (
        page.locator('[data-testid="stMultiSelect"]').filter(has_text="Heads off").locator("input")
    ).first
    for head in ("L1-H0", "L3-H5", "L6-H11"):  # typed into the box, picked with Enter
        await box.click(timeout=LOCATE_MS)
        await box.fill(head, timeout=LOCATE_MS)
        await box.press("Enter", timeout=LOCATE_MS)
        await box.press("Escape", timeout=LOCATE_MS)
        await wait_idle(page, timeout=180)
    await check_page(page, "heads off", out)


async def cka_on_request(page, url: str, out: dict) -> None:
    """Layer Similarity: CKA of the sidebar's model with itself on 100 words (the worker)."""
    await page.goto(f"{url}/Layer_Similarity?words=100", timeout=120_000)
    await wait_idle(page, timeout=180)
    await page.get_by_role("button", name="Compute CKA over").click(timeout=LOCATE_MS)
    await asyncio.sleep(1)
    await wait_idle(page, timeout=600)
    await check_page(page, "cka", out)


HEAVY = {
    "probe upload": probe_upload,
    "umap": umap_map,
    "erasure fit": erasure_fit,
    "cka": cka_on_request,
}
NOUNS = ["store", "bank", "river", "school", "market", "station", "office", "garden"]


def pause(rng: random.Random, mean_s: float) -> float:
    """A user's think time: exponential with mean ``mean_s`` (0: none), so that sessions do
    not act in lockstep (a closed loop with no pause measures saturation, not latency)."""
    return rng.expovariate(1.0 / mean_s) if mean_s > 0 else 0.0


async def light_clicks(
    page,
    url: str,
    until: float,
    sid: int,
    out: dict,
    think: float = 1.0,
    query: str = "",
    mean_pause: float = 0.0,
) -> None:
    """Fill Mask: type a new sentence (Ctrl+Enter) at most every ``think`` s, after a pause
    of mean ``mean_pause`` s (:func:`pause`); time each click until the page became idle
    again with its answer drawn."""
    rng = random.Random(sid)
    await page.goto(f"{url}/Fill_Mask{'?' + query if query else ''}", timeout=120_000)
    await wait_idle(page, timeout=300)
    box = page.get_by_label("Text", exact=True).first
    k = sid
    while time.monotonic() < until:
        k += 1
        text = f"I walked to the {NOUNS[k % len(NOUNS)]} and bought some [MASK] ({k})."
        t0 = time.monotonic()
        try:
            await box.click(timeout=LOCATE_MS)
            await box.fill(text, timeout=LOCATE_MS)
            await box.press("Control+Enter", timeout=LOCATE_MS)
            await wait_busy(page)  # the rerun starts
            idle_at = await wait_idle(page, timeout=300)
            await check_page(page, "light click", out)
            out["light"].append(idle_at - t0)
            out.setdefault("light_at", []).append(round(t0 - out["t_start"], 1))
            out.setdefault("light_session", []).append(sid)
        except Exception as exc:  # every failure is a counted error
            out["errors"].append(f"session {sid} light click: {type(exc).__name__}: {exc}"[:300])
        await asyncio.sleep(max(pause(rng, mean_pause), think - (time.monotonic() - t0)))


LOCATE_MS = 180_000  # a widget can take this long to appear on a loaded shared machine


async def session(
    browser,
    url: str,
    paths: list[str],
    until: float,
    sid: int,
    out: dict,
    heavy: Path | None = None,
    light: bool = False,
    click: tuple[float, str] = (1.0, ""),
    mean_pause: float = 0.0,
    start_after: float = 0.0,
) -> None:
    """Cycle through the pages; with ``heavy`` (an upload file), a heavy action after every
    second page visit, alternating between the kinds in HEAVY; with ``light``, only light
    clicks on Fill Mask (:func:`light_clicks`)."""
    await asyncio.sleep(start_after)  # --ramp: sessions arrive one after another
    ctx = await browser.new_context(viewport={"width": 1280, "height": 900})
    page = await ctx.new_page()
    i = sid  # stagger: sessions start on different pages
    n_heavy = 0
    rng = random.Random(1000 + sid)
    try:
        if light:
            await light_clicks(page, url, until, sid, out, *click, mean_pause=mean_pause)
        while not light and time.monotonic() < until:
            if heavy is not None and i % 2 == 0:
                name = list(HEAVY)[(n_heavy + sid) % len(HEAVY)]
                n_heavy += 1
                t0 = time.monotonic()
                try:
                    if name == "probe upload":
                        await probe_upload(page, url, heavy, out)
                    else:
                        await HEAVY[name](page, url, out)
                    out["heavy"].setdefault(name, []).append(time.monotonic() - t0)
                    out.setdefault("heavy_at", []).append(
                        (name, round(t0 - out["t_start"], 1), round(time.monotonic() - t0, 1))
                    )
                except Exception as exc:  # every failure is a counted error
                    out["errors"].append(f"session {sid} {name}: {type(exc).__name__}: {exc}"[:300])
                if time.monotonic() >= until:
                    break
            path = paths[i % len(paths)]
            i += 1
            t0 = time.monotonic()
            try:
                await page.goto(f"{url}/{path}", timeout=120_000)
                await wait_idle(page, timeout=180)
                boxes = await page.locator('[data-testid="stException"]').count()
                body = await page.inner_text("body")
                if boxes or "Traceback (most recent call last)" in body:
                    out["errors"].append(f"session {sid} /{path}: exception box")
                out["latency"].setdefault(path or "home", []).append(time.monotonic() - t0)
                out["visits"] += 1
            except Exception as exc:  # every failure is a counted error
                out["errors"].append(f"session {sid} /{path}: {type(exc).__name__}: {exc}"[:300])
            await asyncio.sleep(min(pause(rng, mean_pause), max(0.0, until - time.monotonic())))
        out["held"] += 1
    finally:
        await ctx.close()


async def warm_up(url: str, paths: list[str]) -> None:
    """Visit every page once so that model loading is not counted as page latency."""
    from playwright.async_api import async_playwright

    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = await browser.new_page()
        for path in paths:
            await page.goto(f"{url}/{path}", timeout=300_000)
            await wait_idle(page, timeout=300)
        await browser.close()


def peak_rss_mib(pid: int) -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def rss_mib(pid: int) -> float:
    """Resident memory of ``pid`` now (0 when it is gone)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return 0.0
    return 0.0


def children(pid: int) -> list[int]:
    """The server's child processes: its heavy-job workers (ui/worker.py)."""
    kids: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            kids += [int(k) for k in (task / "children").read_text().split()]
        except OSError:
            continue
    return kids


async def sample_memory(pid: int, out: dict, every_s: float = 1.0) -> None:
    """Every second: the server's RSS, its workers' and their sum; the peaks go in ``out``."""
    peak = out.setdefault("memory_peak_mib", {"server": 0.0, "workers": 0.0, "total": 0.0})
    while True:
        server = rss_mib(pid)
        workers = sum(rss_mib(k) for k in children(pid))
        for k, v in (("server", server), ("workers", workers), ("total", server + workers)):
            peak[k] = max(peak[k], round(v, 1))
        out["worker_pids"] = sorted(set(out.get("worker_pids", [])) | set(children(pid)))
        await asyncio.sleep(every_s)


def upload_file(folder: Path, n_sentences: int = 100) -> Path:
    """The first ``n_sentences`` of UD-EWT dev as a CoNLL-U file in ``folder``."""
    from probing.datasets.ud import ud_file

    blocks = ud_file("dev").read_text(encoding="utf-8").split("\n\n")[:n_sentences]
    path = folder / "ewt-dev-100.conllu"
    path.write_text("\n\n".join(blocks) + "\n\n", encoding="utf-8")
    return path


async def run(
    url: str,
    sessions: int,
    seconds: float,
    paths: list[str],
    n_heavy: int = 0,
    light: bool = False,
    click: tuple[float, str] = (1.0, ""),
    server_pid: int | None = None,
    pacing: tuple[float, float] = (0.0, 0.0),
) -> dict:
    """``pacing``: (mean think time between a session's actions, seconds over which the
    sessions arrive), both 0 by default: every session acts at once and without pause."""
    from playwright.async_api import async_playwright

    out: dict = {
        "latency": {},
        "heavy": {},
        "errors": [],
        "visits": 0,
        "held": 0,
        "light": [],
        "t_start": time.monotonic(),
    }
    with tempfile.TemporaryDirectory() as tmp:
        upload = upload_file(Path(tmp))
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            until = time.monotonic() + seconds
            sampler = asyncio.create_task(sample_memory(server_pid, out)) if server_pid else None
            await asyncio.gather(
                *(
                    session(
                        browser,
                        url,
                        paths,
                        until,
                        s,
                        out,
                        upload if s < n_heavy else None,
                        light and s >= n_heavy,
                        click,
                        mean_pause=pacing[0],
                        start_after=pacing[1] * s / sessions,
                    )
                    for s in range(sessions)
                )
            )
            if sampler is not None:
                sampler.cancel()
            await browser.close()
    return out


RUN_LOG = Path(tempfile.gettempdir()) / f"contextlens-load-test-runs-{os.getpid()}.jsonl"


def server_runs(res: dict) -> list[dict]:
    """The server's page script runs (``CONTEXTLENS_RUN_LOG``, ui/run_log.py) that started in
    the test's window (after the warm-up)."""
    if not RUN_LOG.exists():
        return []
    runs = [json.loads(line) for line in RUN_LOG.read_text().splitlines() if line.strip()]
    return [r for r in runs if r["start"] >= res["t_start"]]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--sessions", type=int, default=8)
    ap.add_argument("--seconds", type=float, default=120)
    ap.add_argument("--url", help="a running server on loopback (default: start one)")
    ap.add_argument(
        "--browser-nice",
        type=int,
        default=0,
        help="run the browsers (Playwright, Chromium) this much nicer than the server, which "
        "is started first: on one machine they otherwise compete with the server for the "
        "cores that users' own machines would bring (default 0: same priority)",
    )
    ap.add_argument("--no-demo", action="store_true", help="start the server without demo mode")
    ap.add_argument("--json", type=Path, help="write the raw results here")
    ap.add_argument("--heavy", type=int, default=2, help="sessions that also run heavy actions")
    ap.add_argument(
        "--heavy-kinds",
        default=",".join(HEAVY),
        help=f"which heavy actions, in turn (comma-separated; default all: {', '.join(HEAVY)})",
    )
    ap.add_argument("--rss-bound-mib", type=float, default=3072, help="documented RSS bound")
    ap.add_argument(
        "--light-clicks",
        action="store_true",
        help="sessions without heavy actions time light clicks on Fill Mask",
    )
    ap.add_argument(
        "--click-every",
        type=float,
        default=1.0,
        help="a light session starts a click at most every S seconds (default 1)",
    )
    ap.add_argument(
        "--fill-mask-query",
        default="",
        help="URL query for the Fill Mask page, e.g. by_layer=false",
    )
    ap.add_argument(
        "--think",
        type=float,
        default=0.0,
        help="mean think time (s, exponential, seeded per session) after each page visit or "
        "light click (default 0: a closed loop with no pause, which measures saturation)",
    )
    ap.add_argument(
        "--ramp",
        type=float,
        default=0.0,
        help="the sessions arrive evenly over this many seconds (default 0: all at once)",
    )
    args = ap.parse_args(argv)
    kinds = [k.strip() for k in args.heavy_kinds.split(",") if k.strip()]
    if not kinds or any(k not in HEAVY for k in kinds):
        ap.error(f"--heavy-kinds takes some of: {', '.join(HEAVY)}")
    for k in [k for k in HEAVY if k not in kinds]:
        HEAVY.pop(k)
    if args.sessions > 32 or args.seconds > 900:
        ap.error("bounded: at most 32 sessions and 900 seconds")
    paths = page_paths()
    click = (args.click_every, args.fill_mask_query)
    if args.think < 0 or not 0 <= args.ramp < args.seconds:
        ap.error("--think must be >= 0 and --ramp in [0, --seconds)")
    pacing = (args.think, args.ramp)
    env = {} if args.no_demo else {"CONTEXTLENS_DEMO": "1"}
    RUN_LOG.unlink(missing_ok=True)
    env["CONTEXTLENS_RUN_LOG"] = str(RUN_LOG)

    def report(res: dict, server_pid: int | None) -> None:
        all_lat = sorted(x for v in res["latency"].values() for x in v)
        q = statistics.quantiles(all_lat, n=20) if len(all_lat) >= 2 else [float("nan")] * 19
        summary = {
            "date": date.today().isoformat(),
            "machine": f"{os.cpu_count()} cores, {platform.machine()}",
            "sessions": args.sessions,
            "seconds": args.seconds,
            "think_mean_s": args.think,
            "ramp_s": args.ramp,
            "sessions_held": res["held"],
            "visits": res["visits"],
            "errors": len(res["errors"]),
            "p50_s": round(statistics.median(all_lat), 2) if all_lat else None,
            "p95_s": round(q[18], 2),
            "per_page_p50_s": {
                k: round(statistics.median(v), 2) for k, v in res["latency"].items()
            },
            "heavy_sessions": args.heavy,
            "heavy_actions": {k: len(v) for k, v in res["heavy"].items()},
            "heavy_p50_s": {k: round(statistics.median(v), 1) for k, v in res["heavy"].items()},
            "server_peak_rss_mib": (rss := peak_rss_mib(server_pid) if server_pid else None),
            # Heavy jobs run in worker processes (ui/worker.py): their memory counts too.
            "memory_peak_mib_sampled": res.get("memory_peak_mib"),
            "worker_processes_seen": len(res.get("worker_pids", [])),
            "rss_bound_mib": args.rss_bound_mib,
            # The bound holds for the server and its heavy-job workers together.
            "rss_within_bound": None
            if rss is None
            else max(rss, (res.get("memory_peak_mib") or {}).get("total", 0.0))
            <= args.rss_bound_mib,
            "error_samples": res["errors"][:5],
            "load_average_1_5_15": [round(x, 2) for x in os.getloadavg()],
            "click_every_s": args.click_every,
            "browser_nice": args.browser_nice,
            "fill_mask_query": args.fill_mask_query,
        }
        if res["light"]:
            lq = sorted(res["light"])
            summary["light_clicks"] = len(lq)
            summary["light_click_p50_s"] = round(statistics.median(lq), 2)
            summary["light_click_p95_s"] = round(
                statistics.quantiles(lq, n=20)[18] if len(lq) >= 2 else lq[0], 2
            )
            # Each click (start time in the window, seconds): stalls show as slow clicks
            # that start together.
            summary["light_clicks_over_5_s"] = sum(x > 5 for x in lq)
            # The server's own part (ui/run_log.py): each Fill Mask script run in the window,
            # wall and CPU seconds, without the browsers that share this machine's cores.
            runs = [r for r in server_runs(res) if r["page"] == "Fill_Mask"]
            if len(runs) >= 2:
                wall = [r["seconds"] for r in runs]
                cpu = [r["thread_cpu_s"] for r in runs]
                summary["fill_mask_server_runs"] = len(runs)
                summary["fill_mask_server_run_p50_s"] = round(statistics.median(wall), 3)
                summary["fill_mask_server_run_p95_s"] = round(
                    statistics.quantiles(wall, n=20)[18], 3
                )
                summary["fill_mask_server_run_max_s"] = round(max(wall), 3)
                summary["fill_mask_server_cpu_p50_s"] = round(statistics.median(cpu), 3)
            summary["light_click_times_s"] = [
                (at, round(x, 2))
                for at, x in zip(res.get("light_at", []), res["light"], strict=False)
            ]
            summary["heavy_at"] = res.get("heavy_at", [])
        print(json.dumps(summary, indent=2))
        if args.json:
            args.json.write_text(json.dumps({**summary, "raw": res}, indent=2))

    if args.url:
        report(
            asyncio.run(
                run(
                    args.url,
                    args.sessions,
                    args.seconds,
                    paths,
                    args.heavy,
                    args.light_clicks,
                    click,
                    pacing=pacing,
                )
            ),
            None,
        )
        return 0
    with streamlit_server(env=env) as url:
        import subprocess

        if args.browser_nice:
            # The browsers stand in for users' own machines: started after the server, from
            # a process made nicer, they take the cores only when the server leaves them.
            os.nice(args.browser_nice)

        # the server process is the child python running streamlit
        pid = int(subprocess.check_output(["pgrep", "-n", "-f", "streamlit run app.py"]).split()[0])
        # warm-up: one visit of every page loads the models once for all sessions
        asyncio.run(warm_up(url, paths))
        report(
            asyncio.run(
                run(
                    url,
                    args.sessions,
                    args.seconds,
                    paths,
                    args.heavy,
                    args.light_clicks,
                    click,
                    server_pid=pid,
                    pacing=pacing,
                )
            ),
            pid,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
