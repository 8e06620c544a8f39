"""mpnet-base-mlm on text it never saw: per-mask results, comparisons, the doc's findings.

Scores the exported head (``models/mpnet-base-mlm``) on a seeded sample of masked pieces of
UD-EWT **test** (never trained on, never used to choose the exported step), next to the
unigram guess (the training corpus's five most frequent pieces, from the training log), and
runs the report's cloze part (``probing.analyses.cloze.run_cloze``) on UD-EWT test. Writes:

- ``<out>/heldout_masks.csv``: one row per mask (item, gold piece, the head's top-1 piece,
  hits at 1 and 5 for the head and for the unigram guess), the committed per-item data;
- ``<out>/heldout.json``: accuracies with 95 % intervals and the paired comparisons
  (:mod:`probing.probes.compare`, sentence bootstrap, Holm over the family), plus the cloze
  result and the command line;
- the block between ``<!-- generated:mpnet-base-mlm:begin/end -->`` in ``--doc``, whose
  every comparative word is chosen from those comparisons;
- the cloze figures into the head's ``training_log.json`` and card.

Run: ``python -m probing.training.mpnet_mlm_report --out results/mpnet-base-mlm --overwrite``.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from probing.models.embedded import MPNET_MLM_DIR
from probing.shipped import add_overwrite_argument, refuse_shipped

BEGIN, END = "<!-- generated:mpnet-base-mlm:begin -->", "<!-- generated:mpnet-base-mlm:end -->"
UNIT = "ud-ewt-test masks"


def add_arguments(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
    p.add_argument("--data-dir", type=Path, default=None, help="data sets folder")
    p.add_argument("--head-dir", type=Path, default=MPNET_MLM_DIR, help="the exported head")
    p.add_argument("--out", type=Path, default=Path("results/mpnet-base-mlm"))
    p.add_argument("--doc", type=Path, default=Path("docs/mpnet_base_mlm.md"))
    p.add_argument("--masks", type=int, default=2000, help="masked UD-EWT test pieces")
    p.add_argument("--seed", type=int, default=4321, help="seed of the masks and bootstrap")
    p.add_argument("--n-boot", type=int, default=2000, help="bootstrap replicates")
    p.add_argument("--cloze-sentences", type=int, default=150, help="0: no cloze part")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument(
        "--doc-only", action="store_true", help="only rewrite the doc block from --out's JSON"
    )
    add_overwrite_argument(p)
    return p


def per_mask(head_dir: Path, data_dir: Path | None, n_masks: int, seed: int, work: Path):
    """(rows, training log, model, tokenizer): one dict per mask of the UD-EWT test sample."""
    import torch
    from transformers import AutoTokenizer

    from probing.datasets.ud import read_ud
    from probing.models.mpnet_mlm import load_mpnet_mlm, mpnet_base_folder
    from probing.training.mlm_data import first_real_piece, masked_sample
    from probing.training.mpnet_features import heldout_states

    log = json.loads((head_dir / "training_log.json").read_text(encoding="utf-8"))
    model = load_mpnet_mlm(head_dir)
    tok = AutoTokenizer.from_pretrained(str(mpnet_base_folder()), local_files_only=True)
    guess = tok.convert_tokens_to_ids(log["unigram_top5_pieces"])
    sentences = [s.words for s in read_ud("test", data_dir)]
    sample = masked_sample(tok, sentences, n_masks, seed, first_real_piece(tok))
    states = heldout_states(
        model.mpnet, sample, work / f"ewt-test-{seed}-{sample.n}.npz", tok.pad_token_id
    )
    with torch.inference_mode():
        top5 = model.lm_head(torch.from_numpy(states.states).float()).topk(5, -1).indices.numpy()
    item = np.repeat(np.arange(len(sample.targets)), [len(t) for t in sample.targets])
    gold = states.targets
    rows = [
        {
            "item": int(i),
            "gold": tok.convert_ids_to_tokens(int(g)),
            "head_top1": tok.convert_ids_to_tokens(int(t[0])),
            "head_hit1": int(t[0] == g),
            "head_hit5": int(g in t),
            "unigram_hit1": int(g == guess[0]),
            "unigram_hit5": int(g in guess),
        }
        for i, g, t in zip(item, gold, top5, strict=True)
    ]
    return rows, log, model, tok


def comparisons(rows: list[dict], n_boot: int, seed: int) -> dict[str, Any]:
    """Accuracies with intervals, and head − unigram at top-1 and top-5 (Holm over both)."""
    from probing.probes.compare import Engine, SentenceCounts, with_holm

    engine = Engine(n_boot=n_boot, seed=seed)
    item = np.array([r["item"] for r in rows])
    n_items = int(item.max()) + 1
    reps, acc = {}, {}
    for name in ("head_hit1", "unigram_hit1", "head_hit5", "unigram_hit5"):
        hit = np.array([r[name] for r in rows])
        counts = np.zeros((n_items, 2))
        np.add.at(counts, (item, hit), 1.0)
        r = engine.replicates(name, SentenceCounts("accuracy", counts), UNIT)
        reps[name] = r
        lo, hi = np.quantile(r.draws[0], [0.025, 0.975])
        acc[name] = {"value": r.value, "ci_low": float(lo), "ci_high": float(hi)}
    diffs = with_holm(
        [
            engine.compare(reps["head_hit1"], reps["unigram_hit1"]),
            engine.compare(reps["head_hit5"], reps["unigram_hit5"]),
        ]
    )
    return {
        "n_masks": len(rows),
        "n_items": n_items,
        "accuracy": acc,
        "differences": [d.as_dict() for d in diffs],
    }


def _verb(d: dict) -> str:
    """The comparative the engine allows for ``a − b``: called (Holm) or not."""
    if d["called"]:
        return "higher than" if d["diff"] > 0 else "lower than"
    return "not distinguishable from"


def render_block(result: dict[str, Any], out: Path = Path("results/mpnet-base-mlm")) -> str:
    """The generated findings: a table of accuracies and one sentence per comparison."""
    acc = result["accuracy"]
    pct = lambda a: f"{100 * a['value']:.1f} % [{100 * a['ci_low']:.1f}, {100 * a['ci_high']:.1f}]"  # noqa: E731
    lines = [
        f"Held-out masks: {result['n_masks']:,} masked pieces in {result['n_items']} UD-EWT "
        "test sentences (95 % sentence-bootstrap intervals).",
        "",
        "| predictor | top-1 | top-5 |",
        "|---|---|---|",
        f"| mpnet-base-mlm head | {pct(acc['head_hit1'])} | {pct(acc['head_hit5'])} |",
        f"| unigram guess | {pct(acc['unigram_hit1'])} | {pct(acc['unigram_hit5'])} |",
        "",
    ]
    for k, d in zip((1, 5), result["differences"], strict=True):
        lines.append(
            f"- Top-{k}: the head's accuracy is {_verb(d)} the unigram guess's (head − unigram "
            f"{100 * d['diff']:+.1f} points [{100 * d['ci_low']:+.1f}, {100 * d['ci_high']:+.1f}],"
            f" p_Holm {d['p_holm']:.2g}; paired over the same masks, Holm over the 2 rows)."
        )
    cloze = result.get("cloze")
    if cloze:
        rows = cloze["comparisons"]["rows"]
        called = [r["b"] for r in rows if r["called"] and r["diff"] > 0]
        lines += [
            "",
            f"Cloze (the report's cloze part, {cloze['n_masks']} masked one-piece words in "
            f"{cloze['n_sentences']} UD-EWT test sentences): top-1 at layer 12 "
            f"{100 * cloze['top1'][-1]:.1f} %, top-5 {100 * cloze['top5_last']:.1f} %. "
            f"Under the head read as a logit lens, layer 12's top-1 is called higher than "
            f"{len(called)} of the {len(rows)} earlier layers (Holm over the "
            f"{len(rows)} rows)" + (f": {', '.join(called)}." if called else "."),
        ]
    lens = lens_lines(out / "tuned_lens_eval.json")
    return "\n".join(lines + lens + agreement_lines() + ablation_lines())


AGREEMENT = Path("results/interventions/mpnet-base-mlm__ud-ewt+templates__agreement.json")


def agreement_lines(path: Path = AGREEMENT) -> list[str]:
    """The committed agreement run as a table of accuracies with their intervals (no
    comparison is stated here; the run's own file has the per-case data)."""
    if not path.is_file():
        return []
    run = json.loads(path.read_text(encoding="utf-8"))
    lines = [
        "",
        f"Agreement (`{path}`; {run.get('n_scored', '?')} of {run.get('n_cases', '?')} cases "
        "scored; a case is left out when a verb form is not one piece): share of cases "
        "where the head gives the correct verb form the higher probability, 95 % interval.",
        "",
        "| source | cases | accuracy |",
        "|---|---|---|",
    ]
    for r in run["rows"]:
        if r["by"] == "all":
            lines.append(
                f"| {r['source']} | {r['n']} | {100 * r['accuracy']:.1f} % "
                f"[{100 * r['accuracy_lo']:.1f}, {100 * r['accuracy_hi']:.1f}] |"
            )
    patch = run.get("patching")
    if patch:
        t = patch["total_effect"]
        lines += [
            "",
            f"Patching: {patch['n_pairs']} templated minimal pairs ({patch['n_groups']} groups); "
            f"total effect of swapping the subject's number {t['value']:.2f} "
            f"[{t['ci_low']:.2f}, {t['ci_high']:.2f}] (mean d_source − d_base, d the logit "
            "difference of the two verb forms at the mask); the layer × position-role and "
            "layer × head grids are in the run's JSON.",
        ]
    return lines


def lens_lines(path: Path) -> list[str]:
    """The tuned-lens run's scores per layer (mean KL to the final distribution, nats, with
    its paired sentence-bootstrap interval), as a table; no comparison is stated."""
    if not path.is_file():
        return []
    run = json.loads(path.read_text(encoding="utf-8"))
    t = run["training"]
    ci = lambda d, i: f"{d['mean'][i]:.2f} [{d['ci_low'][i]:.2f}, {d['ci_high'][i]:.2f}]"  # noqa: E731
    lines = [
        "",
        f"Tuned lens (`{path}`, made by `python -m probing {' '.join(run['argv'])}`; "
        f"translators trained on {t['trained_on']} ({t['n_masked_states']} masked states, "
        f"{t['steps']} KL steps), scored on {run['n_masks']} masks, {run['evaluated_on']}): "
        "mean KL(final ‖ layer) in nats, 95 % interval.",
        "",
        "| layer | logit lens | tuned lens | tuned − logit |",
        "|---|---|---|---|",
    ]
    for i, name in enumerate(run["layers"]):
        lines.append(
            f"| {name} | {ci(run['kl_logit'], i)} | {ci(run['kl_tuned'], i)} | "
            f"{ci(run['kl_tuned_minus_logit'], i)} |"
        )
    return lines


ABLATION = Path("results/interventions/mpnet-base-mlm__ud-ewt__ablate-heads.json")


def ablation_lines(path: Path = ABLATION) -> list[str]:
    """The committed head-ablation run: its sizes and the finding the run's own Holm-corrected
    comparisons wrote (``probing.interventions.heads``), quoted as stored."""
    if not path.is_file():
        return []
    run = json.loads(path.read_text(encoding="utf-8"))
    return [
        "",
        f"Head ablation (`{path}`, made by `{' '.join(run['argv'])}`; "
        f"{run['n_heldout_words']} masked held-out words, {run['n_agreement_cases']} agreement "
        f"cases): {run['finding']}",
    ]


def write_doc_block(doc: Path, block: str) -> None:
    """Replace the text between the markers in ``doc`` (the markers must be there)."""
    from probing.io import atomic_write_text

    text = doc.read_text(encoding="utf-8")
    head, sep, rest = text.partition(BEGIN)
    _, sep2, tail = rest.partition(END)
    if not sep or not sep2:
        raise SystemExit(f"{doc} lacks the markers {BEGIN} … {END}")
    atomic_write_text(doc, f"{head}{BEGIN}\n{block}\n{END}{tail}")


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = add_arguments(
        argparse.ArgumentParser(prog="python -m probing.training.mpnet_mlm_report")
    )
    args = parser.parse_args(argv)
    if args.doc_only:
        refuse_shipped([args.doc], args.overwrite)
        result = json.loads((args.out / "heldout.json").read_text(encoding="utf-8"))
        write_doc_block(args.doc, render_block(result, args.out))
        return 0
    outputs = [args.out / "heldout_masks.csv", args.out / "heldout.json", args.doc]
    refuse_shipped(outputs + [args.head_dir / "training_log.json"], args.overwrite)
    import torch

    from probing.config import cache_dir
    from probing.io import atomic_write_json, atomic_write_text

    torch.set_num_threads(args.threads)
    rows, log, model, tok = per_mask(
        args.head_dir, args.data_dir, args.masks, args.seed, cache_dir() / "mpnet-base-mlm-report"
    )
    result = comparisons(rows, args.n_boot, args.seed)
    command = "python -m probing.training.mpnet_mlm_report " + shlex.join(argv)
    if args.cloze_sentences:
        from probing.analyses.cloze import run_cloze
        from probing.encoders.bert import TransformersEncoder
        from probing.encoding import ModelInfo

        info = ModelInfo(
            name="mpnet-base-mlm",
            family="bert",
            n_contextual_layers=0,
            dim=0,
            provenance=str(args.head_dir),
            source=str(args.head_dir),
        )

        settings = {
            "split": "test",
            "n_sentences": args.cloze_sentences,
            "seed": args.seed,
            "mask_rate": 0.15,
            "n_boot": args.n_boot,
        }
        cloze, _csv = run_cloze(TransformersEncoder(model, tok, info), settings, lambda *_: None)
        cloze.pop("per_sentence", None)
        result["cloze"] = cloze
        log["cloze"] = {
            "top1": cloze["top1"][-1],
            "top5": cloze["top5_last"],
            "n_masks": cloze["n_masks"],
            "n_sentences": cloze["n_sentences"],
            "split": "test",
            "command": command.strip(),
        }
        atomic_write_json(args.head_dir / "training_log.json", log)
        from probing.training.mpnet_mlm_head import write_card

        write_card(args.head_dir, log)
    args.out.mkdir(parents=True, exist_ok=True)
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(rows[0]))
    writer.writeheader()
    writer.writerows(rows)
    atomic_write_text(args.out / "heldout_masks.csv", buf.getvalue())
    atomic_write_json(args.out / "heldout.json", {**result, "command": command.strip()})
    write_doc_block(args.doc, render_block(result, args.out))
    print(render_block(result, args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
