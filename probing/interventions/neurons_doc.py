"""The findings of a "units that matter" run as Markdown, written between a doc's
``<!-- generated:neurons:begin -->`` / ``<!-- generated:neurons:end -->`` markers, so that a
check can tell them from the hand-written method prose around them. Every comparative
sentence comes from :func:`probing.interventions.neurons_compare.findings`."""

from __future__ import annotations

from pathlib import Path

from probing.interventions.neurons_compare import findings

BEGIN = "<!-- generated:neurons:begin -->"
END = "<!-- generated:neurons:end -->"


def _ci(row: dict, key: str, fmt: str) -> str:
    return f"{row[key]:{fmt}} [{row[f'{key}_lo']:{fmt}}, {row[f'{key}_hi']:{fmt}}]"


def block(result: dict, source: str | Path) -> str:
    """The generated Markdown (without the markers)."""
    rankings = list(result["rankings"])
    s = result["settings"]
    lines = [
        f"Run: `{Path(source).as_posix()}` — {result['model']}, {result['task']} at hidden "
        f"state {result['layer']} ({result['dim']} neurons); probes trained on "
        f"{result['n_train_words']:,} words, tested on {result['n_test_words']:,} words of "
        f"{result.get('n_test_sentences', '?')} sentences; {s['n_random']} random draws per "
        f"k, {s.get('n_boot', 1000):,} bootstrap replicates.",
        "",
        "Probe accuracy (95 % intervals):",
        "",
        "| k | " + " | ".join(f"top k, {r}" for r in rankings) + " | random k (draws' range) |",
        "|---|" + "---|" * (len(rankings) + 1),
    ]
    for row in result["probes"]["rows"]:
        tops = " | ".join(_ci(row, f"{r}_accuracy", ".3f") for r in rankings)
        lines.append(
            f"| {row['k']} | {tops} | {_ci(row, 'random_accuracy', '.3f')} "
            f"({row['random_min']:.3f}–{row['random_max']:.3f}) |"
        )
    found = findings(result)
    lines += ["", *[f"- {x}" for x in found["probes"]]]
    ablation = result.get("ablation")
    if ablation:
        lines += [
            "",
            f"Masked-LM loss with the set ablated ({ablation['what']}; "
            f"{ablation['heldout_sentences']} held-out sentences, 95 % intervals):",
            "",
            "| k | clean | " + " | ".join(f"top k, {r}" for r in rankings) + " | random k |",
            "|---|---|" + "---|" * (len(rankings) + 1),
        ]
        for row in ablation["rows"]:
            tops = " | ".join(_ci(row, f"{r}_loss", ".3f") for r in rankings)
            lines.append(
                f"| {row['k']} | {_ci(row, 'clean_loss', '.3f')} | {tops} | "
                f"{_ci(row, 'random_loss', '.3f')} ({row['random_min']:.3f}–"
                f"{row['random_max']:.3f}) |"
            )
        lines += ["", *[f"- {x}" for x in found["ablation"]]]
    lines += ["", f"Method of the comparisons: {result['probes']['comparisons']['method']}."]
    return "\n".join(lines)


def replace_block(text: str, result: dict, source: str | Path) -> str:
    """``text`` with everything between the markers replaced by :func:`block`."""
    head, _, rest = text.partition(BEGIN)
    _, _, tail = rest.partition(END)
    return f"{head}{BEGIN}\n{block(result, source)}\n{END}{tail}"
