"""Find comparative sentences that no claim made.

A findings document may compare numbers only inside blocks its generator writes from
claims (``<!-- claims:begin -->`` … ``<!-- claims:end -->``, or a tool's own
``<!-- generated:NAME:begin -->`` … ``<!-- generated:NAME:end -->``). Everywhere else —
method prose, headings, captions — a sentence with a comparative word (higher, lower,
peaks, above, below, better, worse, beats, outperforms, not distinguishable, at majority /
baseline / chance, …) is reported. Method prose that needs such a word for a *method*
("a lower bound", "the layers above it are recomputed") uses a phrase from
:data:`METHOD_PHRASES`, which are removed before the search.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

BLOCK = re.compile(r"<!-- (claims|generated:[\w.-]+):begin -->.*?<!-- \1:end -->", re.DOTALL)
CODE = re.compile(r"```.*?```|`[^`\n]*`", re.DOTALL)
COMPARATIVE = re.compile(
    r"\b(higher|lower|highest|lowest|peaks?|peaked|above|below|better|worse"
    r"|beats?|outperforms?|outperformed|exceeds?|surpass\w*|more accurate|less accurate"
    r"|not distinguishable|indistinguishable|at (?:the )?(?:majority|baseline|chance)"
    r"|falls? to|drops? to|rises? to|sits? (?:higher|lower|above|below))\b",
    re.IGNORECASE,
)
# Method wording that contains a comparative word but compares no findings.
METHOD_PHRASES = (
    "lower bound",
    "upper bound",
    "layers above",
    "layer above",
    "the layers below",
    "above the threshold",
    "below the threshold",
    "p < ",
    "higher-order",
    "lower-case",
    "lowercase",
    "is above or below",
    "above, below",
    "above / below",
    "above/below",
    "above or below",
)


@dataclass(frozen=True)
class Unbacked:
    """A sentence outside any claims block that compares."""

    path: str
    line: int
    word: str
    sentence: str


def _mask(text: str, pattern: re.Pattern) -> str:
    """Blank out matches, keeping line numbers."""
    return pattern.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


# "above" / "below" compare when a verb or an amount comes before them ("is above", "2
# points below"); after a noun they point at the page ("the block below", "the model above").
_COMPARING = re.compile(
    r"(?:\b(?:is|are|was|were|be|been|being|sits?|sat|lies?|lay|falls?|fell|stays?|stayed"
    r"|remains?|remained|drops?|dropped|rises?|rose|ends?|ended|scores?|scored|well|far"
    r"|just|clearly|not|points?|layers?|pp|%)|[\d.%])\s*$"
)


def _layout(text: str, hit: re.Match) -> bool:
    """``above`` / ``below`` used for where something is on the page, not for a score."""
    if hit.group(0) not in ("above", "below"):
        return False
    return not _COMPARING.search(text[: hit.start()].rstrip())


def find_unbacked(text: str, path: str = "") -> list[Unbacked]:
    """Comparative sentences of ``text`` outside claims blocks and code."""
    masked = _mask(_mask(text, BLOCK), CODE)
    masked = re.sub(r"\]\([^)]*\)", "]", masked)  # link targets are paths, not prose
    out = []
    for m in re.finditer(r"[^.!?\n]+(?:[.!?]|\n|$)", masked):
        sentence = m.group(0)
        low = sentence.lower()
        for phrase in METHOD_PHRASES:
            low = low.replace(phrase, " " * len(phrase))
        hit = next((h for h in COMPARATIVE.finditer(low) if not _layout(low, h)), None)
        if hit:
            line = text.count("\n", 0, m.start()) + 1
            out.append(Unbacked(path, line, hit.group(0), sentence.strip()))
    return out


def scan(paths: list[str | Path]) -> list[Unbacked]:
    """Every unbacked comparative sentence in the given files."""
    found = []
    for p in paths:
        p = Path(p)
        found += find_unbacked(p.read_text(encoding="utf-8"), str(p))
    return found


def python_strings(source: str) -> list[tuple[int, str]]:
    """The string literals of a Python module (f-strings with their holes as ``{}``), with
    line numbers: what a page can show."""
    import ast

    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            out.append((node.lineno, node.value))
        elif isinstance(node, ast.JoinedStr):
            text = "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)
            out.append((node.lineno, text))
    return out


def scan_python(paths: list[str | Path]) -> list[Unbacked]:
    """Comparative sentences in the string literals of page and view modules."""
    found = []
    for p in paths:
        p = Path(p)
        for line, text in python_strings(p.read_text(encoding="utf-8")):
            if " " not in text.strip():
                continue  # a key or an identifier ("peak"), not a sentence
            found += [
                Unbacked(str(p), line, u.word, u.sentence) for u in find_unbacked(text, str(p))
            ]
    return found
