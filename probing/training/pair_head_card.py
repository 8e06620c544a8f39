"""The model card of a pair head (``models/minilm-l6-nsp``, ``models/minilm-l6-sop``,
``models/minilm-l6-sop-top2``), rendered from its training summary (the ``training`` entry
of ``head.json``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from probing.io import atomic_write_text
from probing.training.cards import render_card

_TASK_TEXT = {
    "nsp": (
        "an NSP head for all-MiniLM-L6-v2",
        "B is the next sentence (IsNext)",
        "B is not (NotNext)",
        "NSP: a positive is a sentence and the next one; a negative pairs the same first "
        "sentence with a sentence drawn from another document of the same split (as BERT's).",
    ),
    "sop": (
        "an SOP head for all-MiniLM-L6-v2",
        "A and B in their order",
        "swapped",
        "SOP: a positive is a sentence and the next one; a negative is the same two sentences "
        "swapped (as ALBERT's).",
    ),
}


def pair_head_card_values(name: str, manifest: dict[str, Any]) -> dict[str, Any]:
    """The template's fields from a head's manifest."""
    log = manifest["training"]
    title, class0, class1, rule = _TASK_TEXT[log["task"]]
    pairs, per_doc, s = log["pairs"], log["per_document"], log["settings"]
    test = log["test"]
    pct = lambda x: f"{100 * x:.1f} %"  # noqa: E731
    return {
        "name": name,
        "title": title,
        "description": log["description"],
        "base_sha256_16": manifest["base_sha256"][:16],
        "n_params": f"{384 * 384 + 384 + 384 * 2 + 2:,}",
        "class0": class0,
        "class1": class1,
        "pair_rule": rule,
        **{f"{n}_pairs": f"{pairs[n]['pairs']:,}" for n in pairs},
        **{f"{n}_docs": f"{pairs[n]['documents']:,}" for n in pairs},
        **{f"{n}_per_doc": per_doc[n] if per_doc[n] is not None else "all" for n in per_doc},
        **s,
        "best_epoch": log["best_epoch"]["epoch"],
        "best_dev": pct(log["best_epoch"]["dev"]),
        "encoding_note": _encoding_note(log["encoding"]),
        "train_s": f"{log['train_seconds']:.0f}",
        "test_acc": pct(test["accuracy"]),
        "test_ci": f"[{pct(test['ci_low'])}, {pct(test['ci_high'])}]",
    }


def tuned_card_values(name: str, manifest: dict[str, Any]) -> dict[str, Any]:
    """The tuned template's fields (a head trained with the encoder's top layers)."""
    log = manifest["training"]
    title, class0, class1, rule = _TASK_TEXT[log["task"]]
    tuned = manifest["tuned_layers"]
    pairs, per_doc, s = log["pairs"], log["per_document"], log["settings"]
    test = log["test"]
    pct = lambda x: f"{100 * x:.1f} %"  # noqa: E731
    rows = [
        f"| {h['step']} | {h['train_loss']:.3f} | {pct(h['dev'])} |"
        if h["train_loss"] is not None
        else f"| {h['step']} | – | {pct(h['dev'])} |"
        for h in log["history"]
    ]
    return {
        "name": name,
        "title": f"an {log['task'].upper()} head trained with the top {len(tuned)} layers of "
        "all-MiniLM-L6-v2",
        "description": log["description"],
        "task": log["task"],
        "k": len(tuned),
        "tuned_layers": " and ".join(str(i) for i in tuned),
        "frozen_layers": f"0–{min(tuned) - 1}",
        "base_sha256_16": manifest["base_sha256"][:16],
        "n_params": f"{log['n_parameters']:,}",
        "class0": class0,
        "class1": class1,
        "pair_rule": rule,
        **{f"{n}_pairs": f"{pairs[n]['pairs']:,}" for n in pairs},
        **{f"{n}_docs": f"{pairs[n]['documents']:,}" for n in pairs},
        **{f"{n}_per_doc": per_doc[n] if per_doc[n] is not None else "all" for n in per_doc},
        **s,
        "steps": log["steps"],
        "best_step": log["best_epoch"]["step"],
        "best_dev": pct(log["best_epoch"]["dev"]),
        "train_s": f"{log['train_seconds']:,.0f}",
        "history_rows": "\n".join(rows),
        "test_acc": pct(test["accuracy"]),
        "test_ci": f"[{pct(test['ci_low'])}, {pct(test['ci_high'])}]",
    }


def _encoding_note(enc: dict[str, float]) -> str:
    """What the exporting run encoded and what it read from the feature cache."""
    done, cached = int(enc["encoded"]), int(enc["cached"])
    if not cached:
        return f"this run encoded all {done:,} pairs in {enc['seconds']:.0f} s."
    if not done:
        return (
            f"this run read all {cached:,} pairs from the feature cache an earlier run of the "
            "same command filled."
        )
    return (
        f"this run encoded {done:,} pairs in {enc['seconds']:.0f} s and read {cached:,} from "
        "the feature cache."
    )


def write_pair_head_card(folder: Path, manifest: dict[str, Any]) -> Path:
    """Write ``folder/README.md`` from the head's manifest (the tuned template when it lists
    ``tuned_layers``)."""
    if manifest.get("tuned_layers"):
        text = render_card("minilm-l6-pair-head-tuned", tuned_card_values(folder.name, manifest))
    else:
        text = render_card("minilm-l6-pair-head", pair_head_card_values(folder.name, manifest))
    return atomic_write_text(Path(folder) / "README.md", text)
