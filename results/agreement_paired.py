"""Paired agreement differences between elmo-mini's forward LM and minilm-l6-mlm (issue 29).

Both models are scored on the same cases (UD-EWT dev+test and the templates, as
``python -m probing agreement``), so their accuracy difference has a paired interval: one
sentence-bootstrap (the case's group, 1,000 replicates) draws the same sentences for both.
Writes ``results/interventions/elmo-mini_vs_minilm-l6-mlm__agreement-paired.{json,csv}``.

    PYTHONPATH=. python results/agreement_paired.py [--out results/interventions]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np


def main() -> int:
    import pandas as pd

    from probing.interventions import agreement as ag
    from probing.interventions.stats import PairedBootstrap, est_fields, interval
    from probing.io import atomic_write_json, atomic_write_text
    from probing.models.registry import load_encoder

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default="results/interventions")
    p.add_argument("--n-boot", type=int, default=1000)
    args = p.parse_args()
    cases = ag.ud_cases() + ag.templated_cases()
    elmo = load_encoder("elmo-mini")
    prepared_e = ag.prepare(elmo, cases)  # the forward LM, left context only
    right_e = dict(zip(prepared_e.kept, ag.margins(elmo, prepared_e) > 0, strict=True))
    mlm = load_encoder("minilm-l6-mlm")
    prepared = ag.prepare(mlm, cases)
    right_m = dict(zip(prepared.kept, ag.margins(mlm, prepared) > 0, strict=True))
    both = [i for i in range(len(cases)) if i in right_e and i in right_m]
    rows = []
    for source in dict.fromkeys(cases[i].source for i in both):
        idx = [i for i in both if cases[i].source == source]
        boot = PairedBootstrap([cases[i].group for i in idx], n_boot=args.n_boot, seed=0)
        e = np.array([right_e[i] for i in idx], float)
        m = np.array([right_m[i] for i in idx], float)
        att = np.array([min(cases[i].attractors, 2) for i in idx])
        for by, value, mask in [("all", "all", np.ones(len(idx), bool))] + [
            ("attractors", {2: "2+"}.get(a, a), att == a) for a in sorted(set(att.tolist()))
        ]:
            w = mask.astype(float)
            pe, de = boot.ratio_draws(e * w, w)
            pm, dm = boot.ratio_draws(m * w, w)
            rows.append(
                {
                    "source": source,
                    "by": by,
                    "value": value,
                    "n": int(w.sum()),
                    **est_fields("elmo_mini", interval(pe, de, int(w.sum()))),
                    **est_fields("minilm_l6_mlm", interval(pm, dm, int(w.sum()))),
                    **est_fields("elmo_minus_minilm", interval(pe - pm, de - dm, int(w.sum()))),
                }
            )
    payload = {
        "what": "agreement accuracy, elmo-mini forward LM (left context) vs minilm-l6-mlm "
        "(masked verb, both sides), on the same cases; paired sentence-bootstrap intervals",
        "n_cases": len(cases),
        "n_both": len(both),
        "rows": rows,
    }
    out = Path(args.out)
    stem = "elmo-mini_vs_minilm-l6-mlm__agreement-paired"
    atomic_write_json(out / f"{stem}.json", payload)
    atomic_write_text(out / f"{stem}.csv", pd.DataFrame(rows).to_csv(index=False))
    print(f"wrote {out / stem}.json, .csv")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
