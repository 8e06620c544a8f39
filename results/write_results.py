"""Write results/claims.json and docs/results.md from the committed per-item data.

    PYTHONPATH=. python results/write_results.py [--check]

Every finding in docs/results.md is a claim made by :mod:`probing.claims.sources` (the
comparison engine on the committed per-sentence counts and engine tables); the prose here
describes methods only and :mod:`probing.claims.unbacked` holds it to that. ``--check``
writes nothing and exits 1 when either file differs from what would be written.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from probing.claims import render
from probing.claims.sources import collect
from probing.claims.unbacked import find_unbacked

ROOT = Path(__file__).resolve().parent.parent
CLAIMS = ROOT / "results" / "claims.json"
DOC = ROOT / "docs" / "results.md"

HEAD = """# ContextLens findings

Every finding on this page is a **claim**: a sentence written by a wording rule from the
comparison engine's paired differences on committed per-item data, with its interval, the
family of tests it was corrected over and the files it rests on. The page is written by
`PYTHONPATH=. python results/write_results.py` (which also writes `results/claims.json`, the
claims as data, read by the Layering page); `tests/unit/test_claims.py` fails when this page
or a claim differs from a re-run, and when a findings document compares numbers outside a
claims block. How each number is made is in [methods.md](methods.md); each run's own tables
(every layer, every baseline, timings and the exact command) are in its JSON and CSV under
`results/`, linked from each claim; speed and memory are in [benchmarks.md](benchmarks.md).

## How a claim is made

- **The engine** (`probing/probes/compare.py`): a paired percentile bootstrap over test
  sentences (2,000 replicates here), two-level where seeds vary (seeds resampled inside each
  replicate; "seeds identical" where they do not). The p-value is the bootstrap's two-sided
  p, or, where fewer than 10 replicates cross zero, the normal approximation from the
  bootstrap's standard error.
- **Called**: the Holm-adjusted p is under 0.05 over the claim's family, the 95 % interval
  excludes 0 and the sign is the same at every seed. Otherwise the two are *not
  distinguishable*: the interval is given so the reader sees how large a difference it
  leaves open.
- **Families** are stated with each claim and never chosen after the fact: a probe run's
  best layer (chosen on dev) against every other layer and every baseline of the run;
  every pair of a model's tasks by centre of gravity (running best, Tenney et al. 2019);
  every task two models share; every row of an engine table.
- **Erasure** is judged out of sample: a fresh probe trained on erased words the eraser
  never saw (dev), scored on erased test. A layer is judged to keep none of the property
  only where the interval of (held-out accuracy − majority) reaches 0. Per-layer intervals
  are not corrected (a correction would widen them, and so judge more layers to keep none).
- **Units**: points are 100 × the score (accuracy, F1, UUAS, root accuracy); centres of
  gravity are in layers; relative depth is the centre divided by the model's number of
  layers, called only where the absolute difference does not point the other way.

## Claim counts

"""

TAIL = """
## What these claims do not cover

- Runs without stored per-sentence counts make no claim (their tables are in their JSON
  and CSV): sentence pooling, contextuality, CKA, attention statistics and the tuned lens.
  Their pages describe the method and show the numbers with intervals; no sentence compares
  them. The course objectives (NSP/SOP heads, fine-tuning), the mpnet-base-mlm head and the
  attribution of probe labels write their engine-made findings into their own pages
  ([course_objectives.md](course_objectives.md), [mpnet_base_mlm.md](mpnet_base_mlm.md),
  [attribution.md](attribution.md)).
- A claim about a model is about that checkpoint and that protocol (data, training size,
  seeds as its JSON records); the intervals are over test sentences and seeds, not over
  checkpoints or data sets.
"""


def document(claims: list) -> str:
    return (
        HEAD
        + render.block(render.counts_table(claims))
        + "\n\n## Findings by model\n\n"
        + render.by_model(claims)
        + TAIL
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args(argv)
    claims = collect(ROOT / "results")
    text = document(claims)
    if bad := find_unbacked(text, str(DOC)):
        for u in bad:
            print(f"unbacked comparison in the prose: {u.word!r}: {u.sentence}", file=sys.stderr)
        return 1
    records = json.dumps([c.to_record() for c in claims], indent=1, ensure_ascii=False) + "\n"
    if args.check:
        same = (
            DOC.read_text(encoding="utf-8") == text
            and CLAIMS.read_text(encoding="utf-8") == records
        )
        print("docs/results.md and results/claims.json are up to date" if same else "they differ")
        return 0 if same else 1
    CLAIMS.write_text(records, encoding="utf-8")
    DOC.write_text(text, encoding="utf-8")
    print(f"{len(claims)} claims written")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
