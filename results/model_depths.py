"""mpnet-base (12 layers) against minilm-l6 (6 layers) at equal training size: where each
task peaks by *relative* depth, paired over the same test sentences (issue 28).

    PYTHONPATH=. python results/model_depths.py [--out results/equal-size/relative_depth.json]

Per task, both models' runs use the same training protocol: deprel as committed (4,000
sentences, 20,000 arcs per fit), WSD as committed (1-NN over all SemCor training), UPOS and supersense with 20,000 training words per fit and
3 seeds (mpnet-base's committed runs; minilm-l6's in ``results/equal-size/``, made by
``results/regenerate.sh``). Each centre of gravity (Tenney et al.'s running-best form) is
compared in absolute layers and divided by the model's number of contextual layers
(relative depth); the comparison engine (:func:`probing.probes.compare.depth_differences`:
two-level bootstrap over seeds and test sentences, paired where the test sentences are the
same) gives mpnet − minilm in both with intervals, Holm over the tasks in each, and calls
the relative ordering only where the absolute difference does not point the other way.
The best layer's test score is compared the same way.
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path

from probing.io import atomic_write_json
from probing.probes.compare import Engine, compare, depth_differences, with_holm
from probing.probes.statements import Cells

ROOT = Path(__file__).resolve().parent
# task -> (mpnet-base results folder, minilm-l6 results folder, data set)
TASKS = {
    "pos": (ROOT, ROOT / "equal-size", "ud-ewt"),
    "deprel": (ROOT, ROOT, "ud-ewt"),
    "supersense": (ROOT, ROOT / "equal-size", "semcor"),
    "wsd": (ROOT, ROOT, "semcor"),  # both: 1-NN on every SemCor training sentence
}
LAYERS = {"mpnet-base": 12, "minilm-l6": 6}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--out", default=str(ROOT / "equal-size" / "relative_depth.json"))
    p.add_argument("--markdown", action="store_true", help="also print the docs table")
    args = p.parse_args(argv)
    engine = Engine(n_boot=2000, seed=0)
    rows, pairs, best_diffs = [], [], []
    for task, (mp_dir, mini_dir, dataset) in TASKS.items():
        reps = {}
        for model, folder in (("mpnet-base", mp_dir), ("minilm-l6", mini_dir)):
            stem = f"{model}__{dataset}__{task}"
            if not (folder / f"{stem}.json").is_file():
                print(f"skip {task}: no {folder / stem}.json")
                break
            cells = Cells(folder, engine)
            cog = replace(cells.get(f"{stem}:cog"), name=f"{model} {task} CoG")
            best = cells.get(f"{stem}:best")
            reps[model] = (cog, best, cells.best_layer(stem), LAYERS[model])
        else:
            (a, ab, al, an), (b, bb, bl, bn) = reps["mpnet-base"], reps["minilm-l6"]
            pairs.append((a, an, b, bn))
            best_diffs.append(compare(ab, bb))
            rows.append(
                {
                    "task": task,
                    "mpnet_best_layer": al,
                    "mpnet_best_depth": al / an,
                    "minilm_best_layer": bl,
                    "minilm_best_depth": bl / bn,
                    "mpnet_cog_layers": a.value,
                    "minilm_cog_layers": b.value,
                    "mpnet_cog_depth": a.value / an,
                    "minilm_cog_depth": b.value / bn,
                }
            )
    depth = depth_differences(pairs, engine.seed)
    for row, d, e in zip(rows, depth, with_holm(best_diffs), strict=True):
        row["cog_diff"] = d.as_dict()
        row["best_score_diff"] = e.as_dict()
        print(f"{row['task']}: {cog_sentence(row)}")
    atomic_write_json(
        Path(args.out),
        {"what": __doc__.split("\n")[0], "rows": rows, "summary": summary(rows)},
    )
    if args.markdown:
        print(markdown(rows))
        print(summary(rows))
    return 0


def cog_sentence(row: dict) -> str:
    """One task's comparison, written from its row: absolute, then relative (called only
    where the absolute difference does not point the other way)."""
    d = row["cog_diff"]
    ab, rel = d["absolute"], d["relative"]
    a_word = (
        "not distinguishable" if not ab["called"] else ("higher" if ab["diff"] > 0 else "lower")
    )
    if d["relative_called"]:
        r_word = "higher" if rel["diff"] > 0 else "lower"
    elif d["contradicted"] and rel["called"]:
        r_word = "not called (the absolute difference points the other way)"
    else:
        r_word = "not distinguishable"
    return (
        f"mpnet-base's centre of gravity {row['mpnet_cog_layers']:.2f} of 12 layers vs "
        f"minilm-l6's {row['minilm_cog_layers']:.2f} of 6: in layers {a_word} "
        f"({ab['diff']:+.2f} [{ab['ci_low']:+.2f}, {ab['ci_high']:+.2f}], p_Holm "
        f"{ab['p_holm']:.2g}); in relative depth {r_word} ({rel['diff']:+.3f} "
        f"[{rel['ci_low']:+.3f}, {rel['ci_high']:+.3f}], p_Holm {rel['p_holm']:.2g})"
    )


def markdown(rows: list[dict]) -> str:
    """The table docs/results.md shows (``--markdown`` prints it)."""
    names = {"pos": "UPOS", "deprel": "deprel", "supersense": "supersense", "wsd": "WSD (F1)"}
    out = [
        "| task | best layer (dev): mpnet / minilm | CoG in layers: mpnet / minilm | "
        "difference (layers) [95 % CI], Holm p | CoG in relative depth: mpnet / minilm | "
        "difference (depth) [95 % CI], Holm p | relative called | best-layer score, "
        "mpnet − minilm (points) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        ab, rel, e = r["cog_diff"]["absolute"], r["cog_diff"]["relative"], r["best_score_diff"]
        called = (
            "yes"
            if r["cog_diff"]["relative_called"]
            else ("no: layers point the other way" if r["cog_diff"]["contradicted"] else "no")
        )
        out.append(
            f"| {names.get(r['task'], r['task'])} | {r['mpnet_best_layer']}/12 "
            f"({r['mpnet_best_depth']:.2f}) / {r['minilm_best_layer']}/6 "
            f"({r['minilm_best_depth']:.2f}) | {r['mpnet_cog_layers']:.2f} / "
            f"{r['minilm_cog_layers']:.2f} | {ab['diff']:+.2f} [{ab['ci_low']:+.2f}, "
            f"{ab['ci_high']:+.2f}], {ab['p_holm']:.2g} | {r['mpnet_cog_depth']:.3f} / "
            f"{r['minilm_cog_depth']:.3f} | {rel['diff']:+.3f} [{rel['ci_low']:+.3f}, "
            f"{rel['ci_high']:+.3f}], {rel['p_holm']:.2g} | {called} | {e['diff'] * 100:+.2f} "
            f"[{e['ci_low'] * 100:+.2f}, {e['ci_high'] * 100:+.2f}] |"
        )
    return "\n".join(out)


def summary(rows: list[dict]) -> str:
    """The cross-model sentence, counted from the rows."""
    n = len(rows)
    rel_lower = [
        r["task"]
        for r in rows
        if r["cog_diff"]["relative_called"] and r["cog_diff"]["relative"]["diff"] < 0
    ]
    contradicted = [r["task"] for r in rows if r["cog_diff"]["contradicted"]]
    abs_called = [
        f"{r['task']} ({'higher' if r['cog_diff']['absolute']['diff'] > 0 else 'lower'})"
        for r in rows
        if r["cog_diff"]["absolute"]["called"]
    ]
    out = (
        f"Relative depth: mpnet-base's centre of gravity is called lower than minilm-l6's for "
        f"{len(rel_lower)} of {n} tasks ({', '.join(rel_lower) or 'none'}); in absolute layers "
        f"the difference is called for {len(abs_called)} ({', '.join(abs_called) or 'none'})"
    )
    if contradicted:
        out += (
            f"; for {', '.join(contradicted)} the absolute centre points the other way, "
            "so no relative ordering is called there"
        )
    return out + "."


if __name__ == "__main__":
    raise SystemExit(main())
