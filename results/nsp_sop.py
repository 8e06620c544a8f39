"""NSP vs SOP as a measurement (issue 43): each pair head on its own test pairs, on NSP
negatives from the same document and on swapped pairs.

    PYTHONPATH=. nice -n 10 python results/nsp_sop.py --data-dir DATA --overwrite
        [--work-dir DIR] [--test-per-doc 6] [--seed 0] [--out results/nsp-sop]
        [--doc docs/course_objectives.md] [--from-items] [--heads HEAD ...]

The test pairs are those ``train-pair-heads`` scored for the cards (the same documents,
anchors and seed: :mod:`probing.training.sentence_pairs`); the heads are loaded from
``models/minilm-l6-{nsp,sop,sop-top2}`` (:func:`probing.models.pair_heads.load_pair_head`).
The frozen-encoder heads read the encoder's ``[CLS]`` state of each pair (cached in
``--work-dir``, shared with training); ``sop-top2`` (the top 2 layers trained with the head)
runs the whole model on each pair, or reads the scores its training run cached in the same
``--work-dir`` under the digest of its weights
(:func:`probing.training.pair_heads_tuned.cached_predictions`). Written:

- ``<out>/items.csv``: per pair its anchor, test document, kind, label and each head's
  P(continues) and correctness;
- ``<out>/summary.json``: each (head, set) accuracy with its 95 % interval, the family of
  differences (:func:`probing.analyses.nsp_sop.differences`: paired bootstrap over test
  documents, Holm) and the sentences written from them;
- the block between ``<!-- generated:nsp-sop:begin/end -->`` in ``--doc``.

``--from-items`` re-makes the summary and the block from the committed ``items.csv`` alone.
``--heads H ...`` scores only those heads and keeps the other heads' columns of the existing
``items.csv`` (its rows must be the same pairs: document, kind and label are checked).
"""

from __future__ import annotations

import argparse
import csv
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from probing.analyses.nsp_sop import (  # noqa: E402
    HEAD_LABELS,
    SET_LABELS,
    accuracies,
    cell_replicates,
    differences,
    findings,
)
from probing.errors import ShippedFilesError  # noqa: E402
from probing.io import atomic_write, atomic_write_json, atomic_write_text  # noqa: E402
from probing.probes.compare import Engine  # noqa: E402
from probing.shipped import add_overwrite_argument, refuse_shipped  # noqa: E402

HEADS = ("nsp", "sop", "sop-top2")
BEGIN, END = "<!-- generated:nsp-sop:begin -->", "<!-- generated:nsp-sop:end -->"
COLUMNS = ("anchor", "doc_id", "kind", "label", *(f"p_continue_{h}" for h in HEADS),
           *(f"correct_{h}" for h in HEADS))  # fmt: skip
N_BOOT = 2000
METHOD = (
    "Each set: the test positives (a sentence and the next one, label 0) plus one kind of "
    "negative (label 1); accuracy = the head's class (the larger of its two logits) agreeing "
    "with the label. Intervals: "
    f"percentile bootstrap over test documents ({N_BOOT:,} replicates, the same picks for "
    "every cell, so every difference is paired); p two-sided from the bootstrap (or the "
    "normal approximation where fewer than 10 replicates cross zero); Holm over the whole "
    "family; a difference is called when its Holm p < 0.05 and its interval excludes 0 "
    "(probing.probes.compare)."
)


def _head_probs(head: str, pairs, work: Path):
    """(N, 2) class probabilities of one shipped head on ``pairs``: through the cached
    ``[CLS]`` states for a frozen-encoder head, the whole model for one with tuned layers."""
    import torch

    from probing.models.pair_heads import load_pair_head, tuned_parameter_names
    from probing.training.pair_features import cached_cls
    from probing.training.pair_heads_tuned import cached_predictions

    model, tokenizer, manifest = load_pair_head(f"minilm-l6-{head}")
    if manifest.get("tuned_layers"):
        names = tuned_parameter_names(manifest["tuned_layers"], model.state_dict())
        return cached_predictions(model, tokenizer, names, pairs, work)
    cls = cached_cls(model, tokenizer, pairs, work / "features", "test")
    with torch.no_grad():  # BertForPreTraining's NSP path on the cached [CLS] states
        logits = model.cls.seq_relationship(model.bert.pooler(cls[:, None, :]))
    return torch.softmax(logits, -1).double().numpy()


def score_items(args: argparse.Namespace, keep: list[dict] | None = None) -> list[dict]:
    """Apply the shipped heads (``args.heads``) to the test pairs, one row per pair; the
    other heads' columns come from ``keep`` (the existing rows of the same pairs)."""
    import torch

    from probing.training.sentence_pairs import (
        KINDS,
        pair_heads_work_dir,
        pairs_of,
        read_documents,
        sample_anchors,
    )

    torch.set_num_threads(1)
    docs = read_documents("test", args.data_dir)
    anchors = sample_anchors(docs, args.test_per_doc, seed=args.seed)
    pairs = list(pairs_of(anchors, docs, seed=args.seed, kinds=KINDS))
    if keep is not None:
        same = len(keep) == len(pairs) and all(
            (r["doc_id"], r["kind"], int(r["label"])) == (p.doc_id, p.kind, p.label)
            for r, p in zip(keep, pairs, strict=False)
        )
        if not same:
            raise SystemExit("items.csv holds other pairs: score every head (leave out --heads)")
    work = Path(args.work_dir or pair_heads_work_dir())
    probs = {head: _head_probs(head, pairs, work) for head in args.heads}
    rows = []
    for n, pair in enumerate(pairs):
        row = {"anchor": n // len(KINDS), "doc_id": pair.doc_id, "kind": pair.kind,
               "label": pair.label}  # fmt: skip
        for head in HEADS:
            if head not in probs:
                row[f"p_continue_{head}"] = keep[n][f"p_continue_{head}"]
                row[f"correct_{head}"] = int(keep[n][f"correct_{head}"])
                continue
            p = probs[head][n]
            row[f"p_continue_{head}"] = f"{p[0]:.6f}"
            row[f"correct_{head}"] = int(int(p.argmax()) == pair.label)  # 1: not continues
        rows.append(row)
    return rows


def write_items(rows: list[dict], path: Path) -> None:
    def write(tmp: Path) -> None:
        with open(tmp, "w", newline="", encoding="utf-8") as f:
            w = csv.DictWriter(f, fieldnames=COLUMNS, lineterminator="\n")
            w.writeheader()
            w.writerows(rows)

    atomic_write(path, write)


def read_items(path: Path) -> list[dict]:
    with open(path, encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def summarise(rows: list[dict]) -> dict:
    """Accuracies with intervals, the family of differences and its sentences."""
    doc_index: dict[str, int] = {}
    docs = np.array([doc_index.setdefault(r["doc_id"], len(doc_index)) for r in rows])
    kinds = [r["kind"] for r in rows]
    labels = np.array([int(r["label"]) for r in rows])
    # each head's class, from the committed correctness (the probabilities are rounded)
    pred = {h: np.where([int(r[f"correct_{h}"]) for r in rows], labels, 1 - labels) for h in HEADS}
    engine = Engine(n_boot=N_BOOT, seed=0)
    reps = cell_replicates(kinds, labels, docs, pred, engine)
    diffs = differences(reps, seed=engine.seed)
    return {
        "method": METHOD,
        "n_pairs": len(rows),
        "n_documents": len(doc_index),
        "n_anchors": len({r["anchor"] for r in rows}),
        "accuracies": [a.as_dict() for a in accuracies(reps, kinds)],
        "differences": [d.as_dict() for d in diffs],
        "findings": findings(reps, diffs),
    }


def block(summary: dict) -> str:
    """The generated Markdown: the accuracy table and one sentence per difference."""
    lines = [
        BEGIN,
        "",
        f"Test: {summary['n_anchors']:,} anchor sentences from {summary['n_documents']} "
        f"documents, {summary['n_pairs']:,} pairs (`results/nsp-sop/items.csv`).",
        "",
        "| head | negatives | accuracy | 95 % interval | pairs |",
        "|---|---|---|---|---|",
    ]
    for a in summary["accuracies"]:
        lines.append(
            f"| {HEAD_LABELS[a['head']]} | {SET_LABELS[a['set']]} | {100 * a['accuracy']:.1f} % "
            f"| [{100 * a['ci_low']:.1f}, {100 * a['ci_high']:.1f}] | {a['n_pairs']:,} |"
        )
    lines += ["", "Differences (the engine's calls, Holm over all rows):", ""]
    lines += [f"- {s}" for s in summary["findings"]]
    lines += ["", END]
    return "\n".join(lines)


def write_block(doc: Path, text: str) -> None:
    """Replace the generated block in ``doc`` (it must have both markers)."""
    old = doc.read_text(encoding="utf-8")
    start, end = old.find(BEGIN), old.find(END)
    if start < 0 or end < start:
        raise SystemExit(f"{doc} has no {BEGIN} … {END} block")
    atomic_write_text(doc, old[:start] + text + old[end + len(END) :])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data-dir", default=None)
    ap.add_argument("--work-dir", type=Path, default=None)
    ap.add_argument("--test-per-doc", type=int, default=6)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=ROOT / "results" / "nsp-sop")
    ap.add_argument("--doc", type=Path, default=ROOT / "docs" / "course_objectives.md")
    ap.add_argument("--from-items", action="store_true", help="re-make from items.csv only")
    ap.add_argument("--heads", nargs="+", choices=HEADS, default=list(HEADS),
                    help="score these heads; keep the others' columns of items.csv")  # fmt: skip
    add_overwrite_argument(ap)
    args = ap.parse_args(argv)
    items, summary_path = args.out / "items.csv", args.out / "summary.json"
    try:
        refuse_shipped(
            ([] if args.from_items else [items]) + [summary_path, args.doc],
            args.overwrite,
            hint="write somewhere else with --out DIR --doc FILE",
        )
    except ShippedFilesError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    start = time.time()
    if args.from_items:
        rows = read_items(items)
    else:
        args.out.mkdir(parents=True, exist_ok=True)
        keep = read_items(items) if set(args.heads) != set(HEADS) else None
        rows = score_items(args, keep)
        write_items(rows, items)
    summary = summarise(rows)
    atomic_write_json(summary_path, summary)
    write_block(args.doc, block(summary))
    print("\n".join(summary["findings"]))
    print(f"done in {time.time() - start:.0f} s -> {args.out}, {args.doc}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
