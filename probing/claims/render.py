"""Claims as Markdown: a summary per model, each finding with its family and correction.

Every list of findings is written between ``<!-- claims:begin -->`` and
``<!-- claims:end -->``, so :mod:`probing.claims.unbacked` can tell generated findings
from method prose.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from probing.claims.claim import Claim

BEGIN, END = "<!-- claims:begin -->", "<!-- claims:end -->"
TOPICS = (
    ("probing", "Probing: the best layer against the other layers and the baselines"),
    ("depth", "Depth across models"),
    ("erasure", "Erasure, judged out of sample"),
    ("heads", "Heads masked one at a time"),
    ("agreement", "Subject-verb agreement"),
    ("minimal pairs", "Minimal pairs"),
    ("alterrep", "Counterfactual pushes (AlterRep)"),
    ("neurons", "Units that matter"),
    ("attribution", "Attribution faithfulness"),
    ("pre-training objectives", "Pre-training objectives (NSP and SOP heads)"),
    ("fine-tuning", "What fine-tuning changes"),
)


def block(lines: Sequence[str]) -> str:
    return "\n".join([BEGIN, *lines, END])


def claim_line(c: Claim, link_prefix: str = "../") -> str:
    """One bullet: the sentence, then family, correction and sources (linked)."""
    src = ", ".join(f"[{Path(s).name}]({link_prefix}{s})" for s in c.source)
    tail = f" *Family: {c.family}; correction: {c.correction}.*"
    if c.note:
        tail += f" *{c.note}*"
    if src:
        tail += f" Data: {src}."
    return f"- {c.text}{tail}"


def counts_table(claims: Sequence[Claim]) -> list[str]:
    """Per model: claims made, comparisons, called, not distinguishable."""
    rows: dict[str, list[int]] = {}
    for c in claims:
        r = rows.setdefault(c.model, [0, 0, 0, 0])
        r[0] += 1
        r[1] += len(c.comparisons)
        r[2] += c.n_called
        r[3] += c.n_tied
    out = [
        "| model | claims | comparisons | called | not distinguishable |",
        "|---|---:|---:|---:|---:|",
    ]
    out += [f"| {m} | {a} | {b} | {c} | {d} |" for m, (a, b, c, d) in sorted(rows.items())]
    tot = [sum(r[i] for r in rows.values()) for i in range(4)]
    out.append(f"| **all** | {tot[0]} | {tot[1]} | {tot[2]} | {tot[3]} |")
    return out


def summary_table(claims: Sequence[Claim]) -> list[str]:
    """A model's probe runs at a glance: the best layer (dev) and how many of the other
    layers the engine calls under it, cannot tell from it, or calls over it."""
    peaks = [c for c in claims if c.kind == "peak"]
    if not peaks:
        return []
    out = [
        "| task (data) | best layer (dev) | called under it | not distinguishable | called over it |",
        "|---|---:|---|---|---|",
    ]
    for c in peaks:

        def layers(outcome: str, c: Claim = c) -> str:
            return ", ".join(x.b.split()[1] for x in c.comparisons if x.outcome == outcome) or "–"

        task = c.text.split(": layer ")[0].split(" · ", 1)[1]
        out.append(
            f"| {task} | {c.extra['best_layer']} | {layers('above')} | {layers('tie')} | "
            f"{layers('below')} |"
        )
    return out


def by_model(claims: Sequence[Claim]) -> str:
    """A section per model (single-model claims first, then cross-model ones), a sub-list
    per topic."""
    models = sorted({c.model for c in claims}, key=lambda m: (" vs " in m, m))
    parts = []
    for model in models:
        mine = [c for c in claims if c.model == model]
        parts.append(f"### {model}\n")
        if table := summary_table(mine):
            parts.append("Summary of the probe runs:\n\n" + block(table) + "\n")
        for topic, title in TOPICS:
            these = [c for c in mine if c.topic == topic]
            if these:
                parts.append(f"**{title}**\n\n" + block([claim_line(c) for c in these]) + "\n")
    return "\n".join(parts)


def save(claims: Sequence[Claim], path: str | Path) -> None:
    Path(path).write_text(
        json.dumps([c.to_record() for c in claims], indent=1, ensure_ascii=False) + "\n",
        encoding="utf-8",
    )


def load(path: str | Path) -> list[Claim]:
    return [Claim.from_record(d) for d in json.loads(Path(path).read_text(encoding="utf-8"))]
