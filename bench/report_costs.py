"""Measure the cost coefficients of ``python -m probing report`` (probing/report/plan.py).

CPU seconds of one thread (``time.process_time``; OMP_NUM_THREADS=1, one torch thread), so
that a loaded machine does not inflate them: the plan multiplies them by the slowdown it
measures when it runs (:func:`probing.report.plan.machine_speed`). Measured:

- encoding CPU seconds per UD-EWT dev sentence (the calibration's sentences);
- parsing CPU seconds per MB of data-set files (UD-EWT and SemCor, every split);
- each probe part's fitting at two sizes, on features already in the cache (so only the
  fits count);
- each analysis at two sizes, its encoding (per sentence, as calibrated) subtracted.

Prints one JSON line per measurement and the fitted ``fixed + per_unit × units`` per part.

    OMP_NUM_THREADS=1 nice -n 10 python -m bench.report_costs [--model minilm-l6]
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Callable
from typing import TypeVar

import torch

from probing.models.registry import load_encoder
from probing.report import plan as P

T = TypeVar("T")


def cpu(fn: Callable[[], T]) -> tuple[float, T]:
    t = time.process_time()
    out = fn()
    return time.process_time() - t, out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="minilm-l6")
    ap.add_argument("--sizes", default="50,200")
    args = ap.parse_args()
    torch.set_num_threads(1)
    from probing.analyses.registry import get
    from probing.datasets import read_sentences
    from probing.probes.run import probe_layers
    from probing.probes.settings import ProbeSettings

    def emit(**d: object) -> None:
        d["load"] = round(os.getloadavg()[0], 1)
        print(json.dumps(d), flush=True)

    enc = load_encoder(args.model)
    sents = P.calibration_sentences(16)
    enc.encode(sents[:2])
    c, _ = cpu(lambda: enc.encode(sents))
    per_sentence = c / len(sents)
    c_att, _ = cpu(lambda: enc.encode(sents[:8], attentions=True))
    emit(what="encode", cpu_per_sentence=per_sentence, cpu_per_sentence_attention=c_att / 8)
    for dataset in ("ud-ewt", "semcor"):
        mb = P.split_megabytes(dataset)
        c, _ = cpu(lambda d=dataset: [list(read_sentences(d, s)) for s in ("train", "dev", "test")])
        emit(what="read", dataset=dataset, mb=mb, cpu=c, cpu_per_mb=c / mb)
    sizes = [int(x) for x in args.sizes.split(",")]
    points: dict[str, list[tuple[float, float]]] = {}
    for n in sizes:
        for task in P.PROBE_TASKS:
            values = {k: v for k, v in P.part_settings(task, n, args.model).items() if k != "task"}
            s = ProbeSettings.of(task, **values)
            if task in ("pos", "supersense"):  # fill the feature cache first (not counted)
                probe_layers(enc, s.replace(seeds=1, n_boot=10, control=False))
            c, _ = cpu(lambda s=s: probe_layers(enc, s))
            settings = P.part_settings(task, n, args.model)
            evals = settings["max_dev_sentences"] + settings["max_test_sentences"]
            points.setdefault(task, []).append((n, c, evals))
            emit(what="probe", task=task, n=n, cpu=c)
    analysis_sizes = {"cka": (200, 800), "contextuality": (60, 250), "attention-stats": (30, 120)}
    for name, ns in analysis_sizes.items():
        a = get(name)
        for n in ns:
            settings = P.part_settings(name, n, args.model)
            c, _ = cpu(lambda a=a, settings=settings: a.run([enc], a.params(**settings)))
            per = per_sentence if name != "attention-stats" else c_att / 8
            compute = c - per * P.encoded_sentences(name, settings)
            units = P.compute_units(name, settings)
            points.setdefault(name, []).append((units, compute, 0))
            emit(what="analysis", part=name, n=n, cpu=c, compute=compute, units=units)
    for name, pts in points.items():
        (u0, c0, _), (u1, c1, _) = pts[0], pts[-1]
        slope = max(0.0, (c1 - c0) / (u1 - u0))
        emit(what="fit", part=name, fixed=round(max(0.0, c0 - slope * u0), 3), per_unit=slope)


if __name__ == "__main__":
    main()
