"""mpnet-base (12 layers) against minilm-l6 (6 layers) at equal training size: where each
task peaks by *relative* depth, paired over the same test sentences (issue 28).

    PYTHONPATH=. python results/model_depths.py [--out results/equal-size/relative_depth.json]

Per task, both models' runs use the same training protocol: deprel as committed (4,000
sentences, 20,000 arcs per fit), WSD as committed (1-NN over all SemCor training), UPOS and supersense with 20,000 training words per fit and
3 seeds (mpnet-base's committed runs; minilm-l6's in ``results/equal-size/``, made by
``results/regenerate.sh``). Each centre of gravity (Tenney et al.'s running-best form) is
divided by the model's number of contextual layers, and the comparison engine
(:mod:`probing.probes.compare`: two-level bootstrap over seeds and test sentences, paired
where the test sentences are the same) gives mpnet − minilm with its interval; Holm's
correction runs over the tasks. The best layer's test score is compared the same way.
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path

from probing.io import atomic_write_json
from probing.probes.compare import Engine, compare, with_holm
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
    args = p.parse_args(argv)
    engine = Engine(n_boot=2000, seed=0)
    rows, cog_diffs, best_diffs = [], [], []
    for task, (mp_dir, mini_dir, dataset) in TASKS.items():
        reps = {}
        for model, folder in (("mpnet-base", mp_dir), ("minilm-l6", mini_dir)):
            stem = f"{model}__{dataset}__{task}"
            if not (folder / f"{stem}.json").is_file():
                print(f"skip {task}: no {folder / stem}.json")
                break
            cells = Cells(folder, engine)
            cog = cells.get(f"{stem}:cog")
            n = LAYERS[model]
            rel = replace(
                cog, name=f"{model} {task} CoG / {n}", points=cog.points / n, draws=cog.draws / n
            )
            best = cells.get(f"{stem}:best")
            reps[model] = (rel, best, cells.best_layer(stem), n)
        else:
            (a, ab, al, an), (b, bb, bl, bn) = reps["mpnet-base"], reps["minilm-l6"]
            cog_diffs.append(compare(a, b))
            best_diffs.append(compare(ab, bb))
            rows.append(
                {
                    "task": task,
                    "mpnet_best_layer": al,
                    "mpnet_best_depth": al / an,
                    "minilm_best_layer": bl,
                    "minilm_best_depth": bl / bn,
                    "mpnet_cog_depth": a.value,
                    "minilm_cog_depth": b.value,
                }
            )
    for row, d, e in zip(rows, with_holm(cog_diffs), with_holm(best_diffs), strict=True):
        row["cog_depth_diff"] = d.as_dict()
        row["best_score_diff"] = e.as_dict()
        print(
            f"{row['task']}: relative CoG mpnet {row['mpnet_cog_depth']:.3f} vs minilm "
            f"{row['minilm_cog_depth']:.3f}: {d.value:+.3f} [{d.ci_low:+.3f}, {d.ci_high:+.3f}] "
            f"p_holm {d.p_holm:.3g}; best layer {row['mpnet_best_layer']}/12 vs "
            f"{row['minilm_best_layer']}/6, best score {e.value * 100:+.2f} "
            f"[{e.ci_low * 100:+.2f}, {e.ci_high * 100:+.2f}] points"
        )
    atomic_write_json(Path(args.out), {"what": __doc__.split("\n")[0], "rows": rows})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
