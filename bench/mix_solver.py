"""Benchmark: the sweep's 7 scalar mixes (all-layer + cumulative), Adam against L-BFGS from the
best member (issue 41), on the same cached features.

As the tagging runner does (``probing/probes/runners/tagging.py``): per layer a linear probe
over the C grid on dev (warm-started from the previous layer), one C for all layers (best
mean dev accuracy), and for each mix over layers 0..k-1 the C of its dev-best member; then
each mix is fitted twice on the same raw sample with shared statistics (``stats=``):
``solver="adam"`` (today's) and ``solver="lbfgs"`` started from the member's probe at that C.
Per mix: CPU seconds (``time.process_time``, the fit alone), penalised objective on the
training words (the same function for both), dev and test accuracy, L-BFGS evaluations.

    OMP_NUM_THREADS=1 nice -n 10 python -m bench.mix_solver --train-sentences 4000 \\
        --json bench/out/mix_solver_4000.json

``--C 0.03``: the members at one C (no grid; the committed full-data minilm-l6 UPOS C).
``--train-sentences 0``: all of UD-EWT train. Results go to ``--json`` (bench/out is
git-ignored); a table for docs/benchmarks.md is printed.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import time
from datetime import UTC, datetime
from pathlib import Path


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="minilm-l6")
    ap.add_argument("--train-sentences", type=int, default=4000, help="0: the whole split")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--solvers", default="adam,lbfgs")
    ap.add_argument(
        "--C", type=float, default=None, help="the members' C (default: the grid, chosen on dev)"
    )
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args(argv)

    import numpy as np
    import torch

    import probing
    from probing.features import extract_features
    from probing.probes.defaults import PROBE_CS
    from probing.probes.linear import LinearProbe
    from probing.probes.mix import ScalarMixProbe, layer_stats
    from probing.probes.mix_solve import mix_objective

    torch.set_num_threads(args.threads)
    load = [os.getloadavg()[0]]
    enc = probing.load_encoder(args.model)
    n_sents = None if args.train_sentences == 0 else args.train_sentences
    tr = extract_features(enc, "ud-ewt", "train", "upos", max_sentences=n_sents)
    dv = extract_features(enc, "ud-ewt", "dev", "upos")
    te = extract_features(enc, "ud-ewt", "test", "upos")
    layer_ids = list(tr.layer_ids)

    t0 = time.process_time()
    probes, dev_scores, prev = {}, {}, None
    Cs = PROBE_CS if args.C is None else (args.C,)  # one C: that C's fit, scored on dev
    for la in layer_ids:
        p = LinearProbe(Cs=Cs, max_train_words=None, init=prev)
        p.fit(tr.layer(la), tr.labels, dv.layer(la), dv.labels)
        probes[la], dev_scores[la], prev = p, p.dev_scores_, p
    grid = sorted(dev_scores[layer_ids[0]])
    best_c = max(grid, key=lambda c: np.mean([dev_scores[la][c] for la in layer_ids]))
    dev_at = {la: dev_scores[la][best_c] for la in layer_ids}
    member_s = time.process_time() - t0
    print(f"members: C={best_c}, dev {dev_at}, {member_s:.0f} CPU-s", flush=True)

    X, Xd, Xt = tr.layer_stack(), dv.layer_stack(), te.layer_stack()
    mean, std = layer_stats(X)
    classes = np.unique(tr.labels)
    y_idx = np.searchsorted(classes, tr.labels)
    rows = []
    for k in range(1, len(layer_ids) + 1):
        sub = layer_ids[:k]
        best = max(sub, key=lambda la: dev_at[la])
        pos = sub.index(best)
        member = LinearProbe(C=best_c, max_train_words=None, init=probes[best])
        member.fit(tr.layer(best), tr.labels)
        for solver in args.solvers.split(","):
            probe = ScalarMixProbe(max_train_words=None, C=best_c, solver=solver)
            c0 = time.process_time()
            probe.fit(
                X[:k],
                tr.labels,
                Xd[:k],
                dv.labels,
                sub,
                stats=(mean[:k], std[:k]),
                member=(pos, member),
            )
            cpu = time.process_time() - c0
            scalars = np.log(np.maximum(probe.weights_, 1e-30))
            W = probe.linear_.weight.detach().numpy()
            b = probe.linear_.bias.detach().numpy()
            obj = mix_objective(X[:k], y_idx, scalars, W, b, mean[:k], std[:k], best_c)
            row = {
                "layers": f"0..{sub[-1]}",
                "solver": solver,
                "cpu_s": round(cpu, 2),
                "objective": obj,
                "dev_accuracy": probe.score(Xd[:k], dv.labels),
                "test_accuracy": probe.score(Xt[:k], te.labels),
                "weights": [round(float(w), 4) for w in probe.weights_],
                "epochs": probe.epochs_,
                "evaluations": getattr(probe, "n_evals_", None),
                "best_member": best,
            }
            rows.append(row)
            load.append(os.getloadavg()[0])
            print(json.dumps(row), flush=True)

    out = {
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "model": args.model,
        "train_words": int(tr.n_words),
        "train_sentences": args.train_sentences,
        "C": best_c,
        "member_grid_cpu_s": round(member_s, 1),
        "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024,
        "load_average": [round(min(load), 2), round(max(load), 2)],
        "rows": rows,
    }
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(out, indent=1), encoding="utf-8")
    print("| mixes | solver | CPU s | objective | dev acc | test acc | evaluations / epochs |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        work = r["evaluations"] if r["solver"] == "lbfgs" else f"{r['epochs']} epochs"
        print(
            f"| {r['layers']} | {r['solver']} | {r['cpu_s']:.1f} | {r['objective']:.5f} | "
            f"{r['dev_accuracy']:.4f} | {r['test_accuracy']:.4f} | {work} |"
        )
    for solver in args.solvers.split(","):
        total = sum(r["cpu_s"] for r in rows if r["solver"] == solver)
        print(f"{solver}: {total:.1f} CPU-s for {len(layer_ids)} mixes")
    print(f"peak RSS {out['peak_rss_mib']} MiB, load {out['load_average']}")


if __name__ == "__main__":
    main()
