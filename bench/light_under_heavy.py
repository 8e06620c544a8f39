"""Light clicks while heavy jobs run: in a server thread (the old way) or a worker process.

One process plays the server: its main thread does a Fill Mask "click" (``fill_mask`` on
minilm-l6-mlm, a new sentence each time) once a second and times it, while heavy jobs run
back to back either in a thread at nice +10 (how ``ui/jobs.py`` ran them before issue 31.4)
or in a worker process (``ui.worker``, as now). The heavy jobs are the load test's kinds:
the UPOS probe on 100 UD-EWT dev sentences (upload path) and a SemCor lemma's sense table
(a new lemma each time, so SemCor is scanned in Python each time). No browser, no Streamlit
server: what it isolates is the GIL. Reports p50/p95/max click seconds per mode, each click's
(start s, seconds), and the CPU seconds of the process and its workers.

    OMP_WAIT_POLICY=PASSIVE python bench/light_under_heavy.py --seconds 90 --json out.json
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

LEMMAS = [("bank", "n"), ("line", "n"), ("interest", "n"), ("play", "v"), ("run", "v")]
NOUNS = ["store", "bank", "river", "school", "market", "station", "office", "garden"]


def heavy_loop(stop: threading.Event, mode: str, done: list) -> None:
    """Heavy jobs back to back until ``stop``: in this thread (nice +10) or a worker."""
    from probing.budget import Budget
    from probing.datasets.ud import ud_file
    from probing.datasets.upload import read_conllu_upload
    from ui import jobs, tasks

    blocks = ud_file("dev").read_text(encoding="utf-8").split("\n\n")[:100]
    sentences = read_conllu_upload(("\n\n".join(blocks) + "\n\n").encode(), 10**8)
    k = 0
    with jobs.lower_priority():
        while not stop.is_set():
            lemma, pos = LEMMAS[k % len(LEMMAS)]
            t0 = time.monotonic()
            budget = Budget(600, 4 * 2**30, what="bench")
            with budget, jobs.job_context(budget) if mode == "worker" else _null():
                if k % 2 == 0:
                    jobs.offload(tasks.probe_upload, "minilm-l6", sentences, layers=[0, 3, 6])
                else:
                    jobs.offload(tasks.sense_table, "minilm-l6", lemma, pos, 300 + k)
            done.append((("upload", "sense")[k % 2], round(time.monotonic() - t0, 1)))
            k += 1


class _null:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


def clicks(seconds: float, t_start: float) -> list[tuple[float, float]]:
    """Fill Mask clicks once a second for ``seconds``; (start s, latency s) each."""
    from probing.analyses.fill_mask import fill_mask
    from probing.models.registry import load_encoder

    enc = load_encoder("minilm-l6-mlm")
    out = []
    until = time.monotonic() + seconds
    k = 0
    while time.monotonic() < until:
        k += 1
        text = f"I walked to the {NOUNS[k % len(NOUNS)]} and bought some [MASK] ({k})."
        t0 = time.monotonic()
        fill_mask(enc, text)
        out.append((round(t0 - t_start, 1), round(time.monotonic() - t0, 3)))
        time.sleep(max(0.0, 1.0 - (time.monotonic() - t0)))
    return out


def summary(lat: list[float]) -> dict:
    lat = sorted(lat)
    p95 = statistics.quantiles(lat, n=20)[18] if len(lat) >= 2 else lat[0]
    return {
        "clicks": len(lat),
        "p50_s": round(statistics.median(lat), 3),
        "p95_s": round(p95, 3),
        "max_s": round(lat[-1], 3),
        "over_5_s": sum(x > 5 for x in lat),
    }


def cpu_s() -> float:
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--seconds", type=float, default=90)
    ap.add_argument("--modes", default="thread,worker")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    from probing.analyses.fill_mask import fill_mask
    from probing.models.registry import load_encoder

    fill_mask(load_encoder("minilm-l6-mlm"), "A warm [MASK].")  # load before timing
    load_encoder("minilm-l6")
    result: dict = {"load_average_start": os.getloadavg(), "modes": {}}
    for mode in args.modes.split(","):
        stop, done = threading.Event(), []
        cpu0, t_start = cpu_s(), time.monotonic()
        heavy = threading.Thread(target=heavy_loop, args=(stop, mode, done), daemon=True)
        heavy.start()
        time.sleep(5)  # the heavy loop under way (the worker started) before clicks count
        times = clicks(args.seconds, t_start)
        stop.set()
        heavy.join(900)
        result["modes"][mode] = {
            **summary([x for _, x in times]),
            "heavy_jobs_done": done,
            "cpu_s": round(cpu_s() - cpu0, 1),
            "clicks_s": times,
        }
        print(mode, json.dumps({k: v for k, v in result["modes"][mode].items() if k != "clicks_s"}))
    result["load_average_end"] = os.getloadavg()
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))
    from ui import jobs

    jobs._pool().shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
