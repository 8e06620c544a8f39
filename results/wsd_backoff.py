"""What WSD's first-sense backoff adds, and the committed WSD rows without it.

    PYTHONPATH=. python results/wsd_backoff.py results/*__semcor__wsd.json

Items whose lemma is unseen in SemCor's training split back off (issue 27). WordNet's
first sense is ordered by tag counts that include SemCor's test documents, so backing off
to it leaks. This reads the SemCor splits (no encoder needed) and, for each committed WSD
file, recombines its rows: the 1-NN answers on seen lemmas are the committed ``f1_seen``
(every seen item is answered, so its F1 is its accuracy), and an unseen lemma gets its only
WordNet sense when it has one, else no answer (:func:`probing.probes.wsd.only_sense_backoff`).
Prints per layer the committed (leaky) F1 and the non-leaky precision, recall and F1,
with how the unseen items fare under each backoff. Point values only: the committed files
do not keep per-sentence outcomes (a re-run keeps them, ``results/sentence-scores/``).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from probing.datasets import read_sentences
from probing.probes.wsd import first_sense_backoff, is_placeholder, lemma_key, wordnet_sense_count


def instances(split: str) -> list[str]:
    """Sense keys of a split's WSD instances (first word of a multi-word form, no
    placeholders), as the runs select them."""
    out = []
    for s in read_sentences("semcor", split):
        for sense, mwe in zip(s.labels["sense"], s.labels["mwe"], strict=True):
            if sense and mwe != "I" and not is_placeholder(sense):
                out.append(sense)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("results", nargs="+", type=Path)
    args = ap.parse_args(argv)
    train = {lemma_key(s) for s in instances("train")}
    test = instances("test")
    keys = np.array([lemma_key(s) for s in test])
    unseen = np.array([k not in train for k in keys])
    first = first_sense_backoff()
    gold_u, keys_u = np.array(test)[unseen], keys[unseen]
    first_right = np.array([first(k) == g for k, g in zip(keys_u, gold_u, strict=True)])
    mono = np.array([wordnet_sense_count(k) == 1 for k in keys_u])
    mono_right = int(np.sum(mono & first_right))  # one sense: it is the first
    print(
        f"test items {len(test)}, unseen lemma {unseen.sum()} ({unseen.mean():.1%}); "
        f"first sense right on {first_right.mean():.1%} of them; {mono.sum()} have one "
        f"WordNet sense ({mono_right} right), {(~mono).sum()} get no answer"
    )
    for path in args.results:
        d = json.loads(path.read_text(encoding="utf-8"))
        rows = {(r["probe"], r["layer"], r["metric"]): r for r in d["results"]}
        print(path.stem)
        for (probe, layer, metric), r in sorted(rows.items(), key=lambda x: str(x[0])):
            if probe != "1nn" or metric != "f1_seen":
                continue
            n_seen = r["n"]
            right_seen = round(r["value"] * n_seen)
            answered = n_seen + int(mono.sum())
            right = right_seen + mono_right
            p, rec = right / answered, right / len(test)
            f1 = 2 * p * rec / (p + rec)
            leaky = rows[("1nn", layer, "f1")]["value"]
            print(
                f"  layer {layer}: leaky F1 {leaky:.4f}; non-leaky P {p:.4f} R {rec:.4f} "
                f"F1 {f1:.4f} ({(leaky - f1) * 100:+.2f} points from the leak)"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
