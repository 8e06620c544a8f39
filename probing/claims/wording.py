"""The wording rules: how a set of engine comparisons becomes a sentence.

Each rule names every comparison it rests on and says only what the engine called: an
outcome is ``above`` / ``below`` where the difference is called (Holm-adjusted p < 0.05,
interval clear of 0, sign the same at every seed) and ``tie`` ("not distinguishable")
otherwise. Nothing here chooses which comparisons to state: the builders in
:mod:`probing.claims.sources` pass every comparison of a family.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from probing.claims.claim import Comparison
from probing.probes.compare import Difference

BASELINE_NAMES = {
    "majority": "the majority label",
    "word_type": "the word-type baseline",
    "static": "the static vectors",
    "scalar_mix": "the scalar mix",
    "first_sense": "WordNet's first sense",
    "semcor_mfs": "SemCor's most frequent sense",
    "semcor_mfs_train_only": "SemCor's most frequent sense (seen lemmas only)",
    "semcor_mfs_leaky_backoff": "SemCor's most frequent sense with the first-sense backoff",
    "static_1nn": "the static-vector 1-NN",
}


def comparison(d: Difference, a: str | None = None, b: str | None = None) -> Comparison:
    """A :class:`Comparison` from the engine's :class:`Difference` (outcome from ``called``)."""
    outcome = ("above" if d.value > 0 else "below") if d.called else "tie"
    p_adj = d.p_holm if not math.isnan(d.p_holm) else math.nan
    return Comparison(
        a if a is not None else d.a,
        b if b is not None else d.b,
        float(d.value),
        float(d.ci_low),
        float(d.ci_high),
        float(d.p),
        float(p_adj),
        outcome,
    )


def interval_outcome(value: float, lo: float, hi: float) -> str:
    """``above`` / ``below`` where the interval is clear of 0, else ``tie``."""
    return "above" if lo > 0 else "below" if hi < 0 else "tie"


def p_text(p: float) -> str:
    if math.isnan(p):
        return ""
    if p >= 0.001:
        return f"{p:.3f}"
    return "< 1e-15" if p < 1e-15 else f"{p:.0e}".replace("e-0", "e-")


def numbers(c: Comparison, scale: float, unit: str, adjusted: str = "Holm") -> str:
    """``+7.03 [+6.62, +7.42] points, p_Holm < 1e-15``."""
    s = f"{c.value * scale:+.2f} [{c.ci_low * scale:+.2f}, {c.ci_high * scale:+.2f}] {unit}"
    if not math.isnan(c.p_adj):
        s += f", p_{adjusted} {p_text(c.p_adj)}"
    return s


def listing(names: Sequence[str], singular: str, plural: str) -> str:
    """``layer 3`` / ``layers 0, 1 and 4``."""
    names = list(names)
    if len(names) == 1:
        return f"{singular} {names[0]}"
    return f"{plural} {', '.join(names[:-1])} and {names[-1]}"


def grouped(
    subject: str,
    comps: Sequence[Comparison],
    name: callable,
    every: str = "",
    singular: str = "layer",
    plural: str = "layers",
) -> str:
    """``{subject} is above X; not distinguishable from Y; below Z`` over ``name(c.b)``;
    ``every`` replaces the listing when every comparison is above (``every other layer``)."""
    above = [name(c.b) for c in comps if c.outcome == "above"]
    below = [name(c.b) for c in comps if c.outcome == "below"]
    ties = [name(c.b) for c in comps if c.outcome == "tie"]
    parts = []
    if above:
        parts.append(
            f"above {every}"
            if every and len(above) == len(comps)
            else f"above {listing(above, singular, plural)}"
        )
    if ties:
        parts.append(f"not distinguishable from {listing(ties, singular, plural)}")
    if below:
        parts.append(f"below {listing(below, singular, plural)}")
    return f"{subject} is {'; '.join(parts)}"


def evidence(comps: Sequence[Comparison], label: callable, scale: float, unit: str) -> str:
    """The comparisons a sentence rests on, in parentheses."""
    return "(" + "; ".join(f"{label(c)} {numbers(c, scale, unit)}" for c in comps) + ")"


def by_outcome(
    comps: Sequence[Comparison], name: callable, prep: str, singular: str = "", plural: str = ""
) -> str:
    """``above at layers 1 and 2; not distinguishable at layer 0``: each outcome with the
    names of its comparisons (``name(c)``), in a fixed order."""
    said = []
    for word, outcome in (("above", "above"), ("not distinguishable", "tie"), ("below", "below")):
        names = [name(c) for c in comps if c.outcome == outcome]
        if names:
            what = listing(names, singular, plural) if singular else listing(names, "", "").strip()
            said.append(f"{word} {prep} {what}")
    return "; ".join(said)
