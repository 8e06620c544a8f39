"""The generated findings block of the probe-attribution study, written from its committed
JSON (``probe_faithfulness.json``): the comparison engine's tables and the one sentence per
metric that :func:`probing.attribution.study.summarise` made from them. No sentence here is
written by hand: every comparison word comes from ``called`` differences.

The block sits in a Markdown file between ``<!-- generated:NAME:begin -->`` and
``<!-- generated:NAME:end -->`` (:func:`replace_block`), so a check can tell it from prose.
"""

from __future__ import annotations

import math

from probing.errors import InvalidArgumentError

NAME = "probe-attribution"


def markers(name: str = NAME) -> tuple[str, str]:
    return f"<!-- generated:{name}:begin -->", f"<!-- generated:{name}:end -->"


def _f(x: float | None, digits: int = 3) -> str:
    return "–" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.{digits}f}"


def _p(p: float | None) -> str:
    if p is None:
        return "–"
    return f"{p:.3f}" if p >= 0.001 else f"{p:.0e}"


def markdown_block(result: dict) -> str:
    """The block's Markdown (without markers) from a ``probe_faithfulness.json`` dict."""
    lines = [
        f"Made by `python -m probing {' '.join(result['argv'])}` "
        f"({result['n_cases']} cases, {result['model']}, {result['task']} probe at layer "
        f"{result['layer']}; layer chosen on dev: {result['layer_choice']}).",
    ]
    if "own_word_first" in result:
        lines += [
            "",
            "Share of cases where a method ranks the probed word first: "
            + ", ".join(f"{m} {v:.2f}" for m, v in result["own_word_first"].items())
            + ".",
        ]
    lines += ["", "#### Every word ranked and removed, the probed word too", ""]
    lines += _scope(result)
    if "context_words" in result:
        lines += ["", "#### The context only: the probed word kept in place", ""]
        lines += _scope(result["context_words"])
    ig = result.get("completeness", {})
    if ig:
        lines += [
            "",
            "IG completeness, |Σ attributions − (f(x) − f(x′))| / |f(x) − f(x′)| over cases: "
            + "; ".join(
                f"{b} baseline median {_f(v['median'], 6)}, max {_f(v['max'], 6)}"
                for b, v in ig.items()
            )
            + ".",
        ]
    return "\n".join(lines)


def _scope(result: dict) -> list[str]:
    """Means, the engine's comparison tables and its sentences of one scope."""
    lines = ["| metric | method | mean | 95 % interval |", "|---|---|---|---|"]
    for r in result["means"]:
        lines.append(
            f"| {r['metric']} | {r['method']} | {_f(r['mean'])} | "
            f"[{_f(r['mean_lo'])}, {_f(r['mean_hi'])}] |"
        )
    for metric, table in result["comparisons"].items():
        lines += [
            "",
            f"Paired differences, {metric} ({table.get('note', '')}):",
            "",
            "| a − b | diff | 95 % interval | p (Holm) | called |",
            "|---|---|---|---|---|",
        ]
        for d in table["rows"]:
            lines.append(
                f"| {d['a']} − {d['b']} | {_f(d['diff'])} | [{_f(d['ci_low'])}, "
                f"{_f(d['ci_high'])}] | {_p(d['p_holm'])} | {'yes' if d['called'] else 'no'} |"
            )
        lines += ["", f"- {result['statements'][metric]}"]
    return lines


def replace_block(text: str, block: str, name: str = NAME) -> str:
    """``text`` with the content between ``name``'s markers replaced by ``block``.

    Raises:
        InvalidArgumentError: the markers are missing or out of order.
    """
    begin, end = markers(name)
    i, j = text.find(begin), text.find(end)
    if i < 0 or j < i:
        raise InvalidArgumentError(f"No {begin} … {end} block to replace.")
    return text[: i + len(begin)] + "\n" + block.strip() + "\n" + text[j:]
