"""Add the comparison table to committed results by re-applying their saved probes.

    PYTHONPATH=. python results/compare_saved.py results/minilm-l6__ud-ewt__pos.json ...

For each results file with saved probes (``results/probes/<stem>.*``): extract (or read
from the feature cache) the test split, re-apply the probes layer by layer, write the
per-sentence counts to ``results/sentence-scores/<stem>.safetensors``, and set the JSON's
``comparisons`` (adjacent layers and best-vs-each, :mod:`probing.probes.compare`). Prints
the re-applied vs committed score of every layer: a re-application that does not reproduce
the committed score stops the script (nothing written for that file).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from probing.features import extract_features, load_features
from probing.io import atomic_write_json
from probing.models.registry import load_encoder
from probing.probes.compare import Difference, Engine, format_table
from probing.probes.reapply import (
    COUNTS_DIR,
    agreement,
    layer_comparisons,
    load_counts,
    reapplied_counts,
    refit_seeds,
    save_counts,
)
from probing.probes.results import ProbeResults
from probing.probes.saved import SavedProbes

# Re-applied vs committed: float16 features read back and float32 probe weights give the
# same predictions up to ties; more than this means the saved probe is not the one scored.
TOLERANCE = 5e-4


def note_for(results: ProbeResults) -> str:
    same = results.meta.same_train_words_for_all_seeds
    seeds = results.meta.seeds or [results.meta.seed or 0]
    if same and len(seeds) > 1:
        return (
            f"per-sentence scores re-applied from the saved probes; every one of the "
            f"seeds {seeds} trains the task probe on the same (all) training words and "
            f"the fit is deterministic, so the task score has no seed variance and the "
            f"two-level bootstrap reduces to the sentence bootstrap"
        )
    if len(seeds) > 1:
        return (
            f"per-sentence scores of the first seed's saved probe only: the seeds {seeds} "
            f"each drew their own training sample, and only seed {seeds[0]}'s probe was "
            f"saved, so this table does not fold in seed variance (the committed "
            f"rows' values are means over seeds)"
        )
    return "per-sentence scores re-applied from the saved probes; one seed (none folded in)"


def _own_samples(results: ProbeResults) -> bool:
    """The run's seeds drew their own training samples (so one saved probe is one seed)."""
    return not results.meta.same_train_words_for_all_seeds and len(results.meta.seeds or [0]) > 1


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("results", nargs="+", type=Path)
    ap.add_argument("--n-boot", type=int, default=1000)
    ap.add_argument(
        "--refit-seeds",
        action="store_true",
        help="runs whose seeds drew their own training samples: refit the other seeds' task "
        "probes (needs the run's training features) so that seed variance is folded in",
    )
    ap.add_argument(
        "--force",
        action="store_true",
        help="also replace counts that the run itself wrote (seeds, controls)",
    )
    ap.add_argument(
        "--test-features",
        action="append",
        type=Path,
        default=[],
        help="a feature-cache entry to read the test split from (folder named "
        "<model>__<dataset>__test__<key>), e.g. one made before an encoder code change moved "
        "the cache key; the agreement check guards against features that differ",
    )
    args = ap.parse_args(argv)
    engine = Engine(n_boot=args.n_boot, seed=0)
    encoders: dict = {}
    for path in args.results:
        results = ProbeResults.from_json(path)
        own = path.parent / COUNTS_DIR / f"{path.stem}.safetensors"
        if own.is_file() and not args.force and "run's" in load_counts(own).info.get("source", ""):
            print(f"{path.stem}: the run wrote its own counts and table; kept")
            continue
        stem = path.parent / "probes" / path.stem
        saved = SavedProbes.load(stem)
        if results.model not in encoders:
            encoders[results.model] = load_encoder(results.model)
        given = [
            f
            for f in args.test_features
            if f.name.startswith(f"{results.model}__{results.dataset}__test__")
        ]
        if given:
            test = load_features(given[0])
        else:
            test = extract_features(
                encoders[results.model], results.dataset, "test", None, layers=saved.layers
            )
        refit = args.refit_seeds and _own_samples(results)
        if refit:
            train = extract_features(
                encoders[results.model],
                results.dataset,
                "train",
                None,
                layers=saved.layers,
                max_sentences=results.meta.max_train_sentences,
            )
            counts = refit_seeds(results, saved, train, test)
        else:
            counts = reapplied_counts(results, saved, test)
        check = agreement(results, counts)
        worst = max(abs(a - b) for a, b in check.values())
        print(f"{path.stem}: re-applied vs committed, largest |diff| {worst:.2e}")
        for name, (a, b) in check.items():
            print(f"  {name}: {a:.5f} vs {b:.5f}")
        single_seed_probe = _own_samples(results) and not refit
        if worst > TOLERANCE and not single_seed_probe:
            print(
                f"{path.stem}: saved probes do not reproduce the committed scores; skipped",
                file=sys.stderr,
            )
            continue
        source = f"re-applied results/probes/{path.stem}.safetensors to the test features"
        counts.info["reapplied_vs_committed"] = check
        save_counts(counts, path.parent / COUNTS_DIR / f"{path.stem}.safetensors", source)
        note = (
            note_for(results)
            if not refit
            else (
                f"per-sentence scores of every seed {results.meta.seeds}: the first seed's saved "
                f"probe re-applied, the others refitted on their own training samples at the "
                f"committed C (seed means reproduce the committed rows); seed variance folded in"
            )
        )
        table = layer_comparisons(results, counts, engine, note)
        data = json.loads(path.read_text(encoding="utf-8"))
        data["comparisons"] = table
        atomic_write_json(path, data, indent=1)
        print(format_table([Difference.from_dict(r) for r in table["rows"]]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
