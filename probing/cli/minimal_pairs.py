"""``python -m probing minimal-pairs``: minimal pairs scored by pseudo-log-likelihood.

Examples::

    python -m probing minimal-pairs --model minilm-l6-mlm --out /tmp/contextlens
    python -m probing minimal-pairs --model elmo-mini --out /tmp/contextlens
    python -m probing minimal-pairs --model minilm-l6-mlm --jsonl blimp/anaphor_gender.jsonl
    python -m probing minimal-pairs --compare A.pairs.csv B.pairs.csv --out /tmp/contextlens

A run writes ``<model>__minimal-pairs__<scorer>.csv`` (accuracy per paradigm with its 95 %
interval), ``.json`` (the same with settings, warnings and the pseudo-perplexity on held-out
UD-EWT test sentences) and ``.pairs.csv`` (every pair's two scores: what comparisons are
made from) into ``--out`` (default ``results/minimal-pairs``, written into only with
``--overwrite``). ``--compare`` reads two runs' ``.pairs.csv`` and writes the paired
per-paradigm differences with Holm (``comparison__<a>__<b>.json``, each run named
``<model>_<scorer>``).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from probing.shipped import add_overwrite_argument, output_folder, refuse_shipped

if TYPE_CHECKING:
    from probing.minimal_pairs.evaluate import PairScores

DEFAULT_OUT = "results/minimal-pairs"
SCORERS = ("original", "within_word_l2r")


def add_arguments(p: argparse.ArgumentParser) -> None:
    """Options of ``python -m probing minimal-pairs``."""
    p.add_argument("--model", default="minilm-l6-mlm", help="registry name, folder or hub id")
    p.add_argument(
        "--paradigms",
        nargs="+",
        default=None,
        help="sources (templates, ud-ewt) or paradigm names (default: both sources; none "
        "with --jsonl)",
    )
    p.add_argument("--jsonl", action="append", default=[], help="a BLiMP-format JSONL file")
    p.add_argument(
        "--scorer",
        choices=SCORERS,
        default="original",
        help="PLL variant for masked LMs (ELMo is scored by its two LMs whatever this says)",
    )
    p.add_argument(
        "--max-pairs", type=int, default=200, help="at most this many pairs per paradigm"
    )
    p.add_argument(
        "--ppl-sentences",
        type=int,
        default=200,
        help="pseudo-perplexity on the first N UD-EWT test sentences (0: skip)",
    )
    p.add_argument("--n-boot", type=int, default=1000, help="bootstrap replicates")
    p.add_argument(
        "--compare",
        nargs=2,
        metavar=("A_PAIRS_CSV", "B_PAIRS_CSV"),
        help="compare two runs' .pairs.csv files instead of scoring",
    )
    p.add_argument(
        "--out", type=output_folder, default=DEFAULT_OUT, help=f"output folder ({DEFAULT_OUT})"
    )
    p.add_argument("--quiet", action="store_true", help="no progress output")
    add_overwrite_argument(p)


def run_stem(model: str, scorer: str) -> str:
    from probing.probes.store import output_stem

    return output_stem(model, "minimal-pairs", scorer)


def _say(quiet: bool) -> Callable[[str, int, int], None]:
    def show(stage: str, done: int, total: int) -> None:
        if not quiet:
            print(f"  {stage}: {done}/{total}", flush=True)

    return show


def select_pairs(paradigms: list[str] | None, jsonl: list[str], max_pairs: int) -> list:
    """The pairs a run scores: BLiMP files, and the built sources / named paradigms."""
    from probing.errors import InvalidArgumentError
    from probing.minimal_pairs import paradigms as P
    from probing.minimal_pairs.pairs import read_blimp_jsonl

    pairs = [p for f in jsonl for p in read_blimp_jsonl(f)]
    if paradigms is None and jsonl:
        return pairs
    wanted = paradigms or list(P.BUILDERS)
    sources = [w for w in wanted if w in P.BUILDERS]
    names = [w for w in wanted if w not in P.BUILDERS]
    built = P.build(sources or list(P.BUILDERS) if names else sources, max_pairs)
    if names:
        known = list(dict.fromkeys(p.paradigm for p in built))
        missing = [n for n in names if n not in known]
        if missing:
            raise InvalidArgumentError(
                f"Unknown paradigm {', '.join(map(repr, missing))}; sources: "
                f"{', '.join(P.BUILDERS)}; paradigms: {', '.join(known)}."
            )
        built = [p for p in built if p.paradigm in names or p.paradigm in sources]
    return pairs + built


def run(args: argparse.Namespace) -> int:
    if args.compare:
        return _run_compare(args)
    from probing.models.registry import entry

    out = Path(args.out)
    known = entry(args.model)
    # ELMo is scored by its bi-LM whatever --scorer says; a folder's family is not known
    # before loading, so its stem keeps --scorer's name.
    scorer = (
        "bilm" if known is not None and known.info.objective == "bidirectional-lm" else args.scorer
    )
    stem = run_stem(args.model, scorer)
    refuse_shipped([out / f"{stem}.{ext}" for ext in ("csv", "json", "pairs.csv")], args.overwrite)

    import warnings

    from probing.minimal_pairs import evaluate as ev
    from probing.minimal_pairs.pairs import FewPairsWarning, few_pair_warnings
    from probing.models.registry import load_encoder
    from probing.probes.compare import Engine

    say = _say(args.quiet)
    say("building pairs", 0, 1)
    pairs = select_pairs(args.paradigms, args.jsonl, args.max_pairs)
    encoder = load_encoder(args.model)
    ps, _ = ev.score_pairs(encoder, pairs, args.scorer, lambda d, t: say("scoring", d, t))
    engine = Engine(n_boot=args.n_boot)
    rows = ev.accuracy_table(ps, engine)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FewPairsWarning)  # carried in the results instead
        few = few_pair_warnings([p for p, k in zip(ps.pairs, ps.kept, strict=True) if k])
    payload: dict = {
        "model": encoder.name,
        "scorer": ps.scorer,
        "rows": rows,
        "n_pairs": len(pairs),
        "n_scored": int(ps.kept.sum()),
        "warnings": few,
        "settings": {
            "paradigms": args.paradigms,
            "jsonl": [Path(f).name for f in args.jsonl],
            "max_pairs": args.max_pairs,
            "n_boot": args.n_boot,
            "pll_metric": None if ev.is_bilm(encoder) else args.scorer,
        },
        "method": "a pair is right when score(good) > score(bad) (ties wrong); 95 % interval: "
        "percentile bootstrap over the paradigm's groups (source sentence / template item) "
        "through probing.probes.compare.Engine",
    }
    if ev.is_bilm(encoder):
        payload["left_out"] = "pairs whose changed word is outside the LM vocabulary"
    if args.ppl_sentences:
        from probing.features import read_sentences

        held = [list(s.words) for s in read_sentences("ud-ewt", "test")[: args.ppl_sentences]]
        say("pseudo-perplexity", 0, 1)
        payload["perplexity"] = {
            **ev.pseudo_perplexity(encoder, held, args.scorer),
            "text": f"UD-EWT test, first {len(held)} sentences",
        }
    _write(out, stem, payload, rows, ps.rows())
    return 0


def _write(out: Path, stem: str, payload: dict, rows: list[dict], pair_rows: list[dict]) -> None:
    import pandas as pd

    from probing.io import atomic_write_json, atomic_write_text

    out.mkdir(parents=True, exist_ok=True)
    atomic_write_text(out / f"{stem}.csv", pd.DataFrame(rows).to_csv(index=False))
    atomic_write_json(out / f"{stem}.json", json.loads(json.dumps(payload, default=float)))
    atomic_write_text(out / f"{stem}.pairs.csv", pd.DataFrame(pair_rows).to_csv(index=False))
    print(f"wrote {out / stem}.csv, .json, .pairs.csv")


def read_run(path: str | Path) -> PairScores:
    """A run's ``.pairs.csv`` (with its ``.json`` beside it for the model's name)."""
    import pandas as pd

    from probing.minimal_pairs.evaluate import PairScores

    path = Path(path)
    meta_path = path.with_name(path.name.removesuffix(".pairs.csv") + ".json")
    meta = json.loads(meta_path.read_text()) if meta_path.is_file() else {}
    frame = pd.read_csv(path, keep_default_na=False)
    model = meta.get("model", path.name.split("__")[0])
    return PairScores.from_rows(frame.to_dict("records"), model, meta.get("scorer", ""))


def compare_payload(a: PairScores, b: PairScores, n_boot: int = 1000) -> dict:
    """The paired comparison of two runs as stored (``comparisons`` in the engine's form)."""
    from probing.minimal_pairs.evaluate import compare_runs
    from probing.probes.compare import Engine, table_dict

    diffs = compare_runs(a, b, Engine(n_boot=n_boot))
    return {
        "a": {"model": a.model, "scorer": a.scorer},
        "b": {"model": b.model, "scorer": b.scorer},
        "comparisons": table_dict(
            diffs,
            "minimal-pair accuracy",
            "per paradigm, on the pairs both models scored; groups (source sentence / "
            "template item) resampled with the same picks for both models; Holm over "
            "the paradigms",
        ),
    }


def _tag(path: str) -> str:
    """``<model>_<scorer>`` of a run's ``<model>__minimal-pairs__<scorer>.pairs.csv``."""
    return Path(path).name.removesuffix(".pairs.csv").replace("__minimal-pairs__", "_")


def _run_compare(args: argparse.Namespace) -> int:
    from probing.io import atomic_write_json
    from probing.probes.compare import Difference, format_table

    a, b = read_run(args.compare[0]), read_run(args.compare[1])
    out = Path(args.out)
    path = out / f"comparison__{_tag(args.compare[0])}__{_tag(args.compare[1])}.json"
    refuse_shipped([path], args.overwrite)
    payload = compare_payload(a, b, args.n_boot)
    out.mkdir(parents=True, exist_ok=True)
    atomic_write_json(path, payload)
    rows = [Difference.from_dict(r) for r in payload["comparisons"]["rows"]]
    print(format_table(rows, unit="accuracy points"))
    print(f"wrote {path}")
    return 0
