"""How close the report's plan comes to what its parts take: each planned part's estimate
against its measured time (issue 41: within ×1.5), for reports run with cold private caches.

Runs ``python -m probing report --model M --budget B --out OUT/M`` for each model (one
process each, as a user would, a fresh ``CONTEXTLENS_CACHE_DIR``), then prints one row per
part (estimate, measured, their ratio) and a JSON summary; exit code 1 when a part's ratio
leaves [1/1.5, 1.5]. Run it alone: the plan measures the machine when it starts, and a load
that changes during the run moves the measured times, not the estimates.

    OMP_WAIT_POLICY=PASSIVE python -m bench.report_estimates \
        --models minilm-l6-mlm,elmo-mini --budget 10m --out /tmp/estimates
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TOLERANCE = 1.5


def run_report(model: str, budget: str, out: Path) -> dict:
    """One report in its own process with a cold cache; its report.json."""
    env = {**os.environ, "CONTEXTLENS_CACHE_DIR": tempfile.mkdtemp(prefix="estimates-")}
    cmd = [sys.executable, "-m", "probing", "report", "--model", model, "--budget", budget]
    started = time.perf_counter()
    subprocess.run([*cmd, "--out", str(out)], env=env, check=True, stderr=subprocess.DEVNULL)
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    report["wall_s"] = round(time.perf_counter() - started, 1)
    return report


def rows(report: dict) -> list[dict]:
    out = []
    for part, t in report["timings"].items():
        ratio = t["estimate_s"] / max(t["seconds"], 1e-9)
        out.append({"part": part, **t, "estimate/measured": round(ratio, 2)})
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default="minilm-l6-mlm,elmo-mini")
    ap.add_argument("--budget", default="10m")
    ap.add_argument("--out", type=Path, default=Path(tempfile.mkdtemp(prefix="estimates-")))
    args = ap.parse_args()
    summary, worst = {}, 1.0
    for model in args.models.split(","):
        report = run_report(model, args.budget, args.out / model)
        table = rows(report)
        print(
            f"\n{model}: budget {args.budget}, wall {report['wall_s']} s, "
            f"calibration {report['plan']['calibration']}, load {os.getloadavg()[0]:.1f}"
        )
        print(f"{'part':16s} {'estimate':>9s} {'measured':>9s} {'ratio':>6s}")
        for r in table:
            print(
                f"{r['part']:16s} {r['estimate_s']:9.1f} {r['seconds']:9.1f} "
                f"{r['estimate/measured']:6.2f}"
            )
            worst = max(worst, r["estimate/measured"], 1 / max(r["estimate/measured"], 1e-9))
        summary[model] = {"wall_s": report["wall_s"], "parts": table}
    summary["worst_ratio"] = round(worst, 2)
    print(json.dumps(summary))
    return 0 if worst <= TOLERANCE else 1


if __name__ == "__main__":
    sys.exit(main())
