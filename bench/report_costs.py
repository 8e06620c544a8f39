"""Measure the cost coefficients of ``python -m probing report`` (probing/report/plan.py).

CPU seconds of one thread (``time.process_time``; OMP_NUM_THREADS=1, one torch thread), so
that a loaded machine does not inflate them: the plan multiplies them by the slowdown it
measures when it runs (:func:`probing.report.plan.machine_speed`). Measured:

- encoding CPU seconds per UD-EWT dev sentence (the calibration's sentences);
- parsing CPU seconds per MB of data-set files (UD-EWT and SemCor, every split);
- each probe part's fitting at two sizes, on features already in the cache (so only the
  fits count);
- each analysis at two sizes, its encoding (per sentence, as calibrated) subtracted.

- the masked-LM parts (cloze, tuned lens) on ``--lm-model`` (a model with an MLM head), at
  two sizes, its encoding (per sentence, calibrated on that model) subtracted.

Prints one JSON line per measurement and the fitted ``fixed + per_unit × units`` per part.
``--parts`` measures only those (and skips the reading of whole data sets).

    OMP_NUM_THREADS=1 nice -n 10 python -m bench.report_costs [--model minilm-l6]
    OMP_NUM_THREADS=1 nice -n 10 python -m bench.report_costs --parts wsd,cloze,tuned-lens
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
    ap.add_argument("--lm-model", default="minilm-l6-mlm", help="model for the LM parts")
    ap.add_argument("--parts", default=",".join(P.PARTS), help="comma-separated parts")
    args = ap.parse_args()
    wanted = set(args.parts.split(","))
    torch.set_num_threads(1)
    from probing.analyses.registry import get
    from probing.datasets import read_sentences
    from probing.probes.run import probe_layers
    from probing.probes.settings import ProbeSettings

    def emit(**d: object) -> None:
        d["load"] = round(os.getloadavg()[0], 1)
        print(json.dumps(d), flush=True)

    enc = load_encoder(args.model)
    # The plan's own calibration sentences (64: a sample that pads as little as the parts'
    # sorted batches do), so that the encoding subtracted below is what the plan adds back.
    sents = P.calibration_sentences()
    half = len(sents) // 2
    enc.encode(sents[:2])
    c, _ = cpu(lambda: enc.encode(sents))
    per_sentence = c / len(sents)
    c_att, _ = cpu(lambda: enc.encode(sents[:half], attentions=True))
    per_att = c_att / half
    emit(what="encode", cpu_per_sentence=per_sentence, cpu_per_sentence_attention=per_att)
    for dataset in ("ud-ewt", "semcor") if wanted >= set(P.PARTS) else ():
        mb = P.split_megabytes(dataset)
        c, _ = cpu(lambda d=dataset: [list(read_sentences(d, s)) for s in ("train", "dev", "test")])
        emit(what="read", dataset=dataset, mb=mb, cpu=c, cpu_per_mb=c / mb)
    sizes = [int(x) for x in args.sizes.split(",")]
    points: dict[str, list[tuple[float, float]]] = {}
    for n in sizes:
        for task in [t for t in P.PROBE_TASKS if t in wanted]:
            values = {k: v for k, v in P.part_settings(task, n, args.model).items() if k != "task"}
            s = ProbeSettings.of(task, **values)
            if task in ("pos", "supersense", "wsd"):  # fill the feature cache first (not counted)
                probe_layers(enc, s.replace(seeds=1, n_boot=10, control=False))
            c, _ = cpu(lambda s=s: probe_layers(enc, s))
            settings = P.part_settings(task, n, args.model)
            evals = settings["max_dev_sentences"] + settings["max_test_sentences"]
            points.setdefault(task, []).append((n, c, evals))
            emit(what="probe", task=task, n=n, cpu=c)
    analysis_sizes = {"cka": (200, 800), "contextuality": (60, 250), "attention-stats": (30, 120)}
    for name, ns in [(n, s) for n, s in analysis_sizes.items() if n in wanted]:
        a = get(name)
        for n in ns:
            settings = P.part_settings(name, n, args.model)
            c, _ = cpu(lambda a=a, settings=settings: a.run([enc], a.params(**settings)))
            per = per_sentence if name != "attention-stats" else per_att
            compute = c - per * P.encoded_sentences(name, settings)
            units = P.compute_units(name, settings)
            points.setdefault(name, []).append((units, compute, 0))
            emit(what="analysis", part=name, n=n, cpu=c, compute=compute, units=units)
    lm_sizes = {"cloze": (100, 500), "tuned-lens": (100, 200), "agreement": (100, 500)}
    lm_parts = [(n, s) for n, s in lm_sizes.items() if n in wanted]
    if lm_parts:
        from probing.report.lm_parts import run_part

        lm = load_encoder(args.lm_model)
        lm.encode(sents[:2])
        c, _ = cpu(lambda: lm.encode(sents))
        per_lm = c / len(sents)
        emit(what="encode", model=args.lm_model, cpu_per_sentence=per_lm)
        for name, ns in lm_parts:
            for n in ns:
                settings = P.part_settings(name, n, args.lm_model)
                c, _ = cpu(
                    lambda name=name, settings=settings: run_part(
                        name, lm, settings, lambda *a: None
                    )
                )
                compute = c - per_lm * P.encoded_sentences(name, settings)
                units = P.compute_units(name, settings)
                points.setdefault(name, []).append((units, compute, 0))
                emit(what="lm", part=name, n=n, cpu=c, compute=compute, units=units)
    for name, pts in points.items():
        (u0, c0, _), (u1, c1, _) = pts[0], pts[-1]
        slope = max(0.0, (c1 - c0) / (u1 - u0))
        emit(what="fit", part=name, fixed=round(max(0.0, c0 - slope * u0), 3), per_unit=slope)


if __name__ == "__main__":
    main()
