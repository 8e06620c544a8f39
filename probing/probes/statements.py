"""Comparative sentences checked against the comparison engine, and written from it.

A :class:`Statement` is a sentence of the docs with the comparisons it rests on, each a
:class:`Claim`: ``above`` (a is higher than b) or ``tie`` (no difference detectable: the
paired 95 % interval of a − b contains 0). A cell is ``(results stem, name)``: ``layer N``,
``best`` (the layer chosen on dev), ``cog`` (the running-best centre of gravity) or any
cell stored in ``results/sentence-scores/<stem>.safetensors``.

:func:`check` holds a statement to the engine (:mod:`probing.probes.compare`): every
``above`` must be *called* with Holm's correction over all the statement's claims (and a
sign that holds at every seed), and every ``tie`` must have an interval containing 0 at
the unadjusted level (the stricter test for a tie). A sentence that says more than the
table fails. :func:`render` writes the sentence with the numbers the claims rest on.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from probing.errors import InvalidArgumentError
from probing.probes.compare import (
    ALPHA,
    SEEDS_IDENTICAL,
    Difference,
    Engine,
    Replicates,
    centre_of_gravity_replicates,
    compare,
    with_holm,
)
from probing.probes.reapply import COUNTS_DIR, StoredCounts, load_counts

CLAIM_KINDS = ("above", "tie")


@dataclass(frozen=True)
class Claim:
    """``a`` above ``b`` or ``a`` tied with ``b``; cells as ``"stem:name"``."""

    kind: str
    a: str
    b: str

    def __post_init__(self) -> None:
        if self.kind not in CLAIM_KINDS:
            raise InvalidArgumentError(f"claim kind {self.kind!r}; one of {CLAIM_KINDS}")


@dataclass(frozen=True)
class Statement:
    """A sentence and the claims it rests on."""

    text: str
    claims: tuple[Claim, ...]
    scale: float = 100.0  # differences printed in points (× 100); 1 for layers (CoG)
    unit: str = "points"


@dataclass
class Verdict:
    """What the engine says about a statement's claims."""

    statement: Statement
    diffs: list[Difference]
    problems: list[str] = field(default_factory=list)

    @property
    def holds(self) -> bool:
        return not self.problems


class Cells:
    """Replicates of named cells, read from the stored per-sentence counts."""

    def __init__(self, results_dir: str | Path, engine: Engine | None = None) -> None:
        self.dir = Path(results_dir)
        self.engine = engine or Engine(n_boot=2000, seed=0)
        self._counts: dict[str, StoredCounts] = {}
        self._cache: dict[str, Replicates] = {}

    def counts(self, stem: str) -> StoredCounts:
        if stem not in self._counts:
            self._counts[stem] = load_counts(self.dir / COUNTS_DIR / f"{stem}.safetensors")
        return self._counts[stem]

    def best_layer(self, stem: str) -> int:
        meta = json.loads((self.dir / f"{stem}.json").read_text(encoding="utf-8"))["meta"]
        best = (meta.get("best_layer") or {}).get("layer", meta.get("best_layer_dev"))
        if best is None:
            raise InvalidArgumentError(f"{stem} has no layer chosen on dev")
        return int(best)

    def get(self, ref: str) -> Replicates:
        """The replicates of ``"stem:name"`` (named ``"stem:name"`` for the engine)."""
        if ref in self._cache:
            return self._cache[ref]
        stem, _, name = ref.partition(":")
        stored = self.counts(stem)
        if name == "best":
            rep = self.get(f"{stem}:layer {self.best_layer(stem)}")
        elif name == "cog":
            layers = stored.layers(self.engine, prefix=f"{stem}:")
            rep = centre_of_gravity_replicates(ref, layers)
        elif name in stored.cells:
            rep = self.engine.replicates(ref, stored.cells[name], stored.unit)
        else:
            raise InvalidArgumentError(f"{stem} has no cell {name!r}; have {list(stored.cells)}")
        rep = replace(rep, name=ref)
        self._cache[ref] = rep
        return rep


def check(statement: Statement, cells: Cells) -> Verdict:
    """Hold a statement to the engine (see the module doc)."""
    raw = [compare(cells.get(c.a), cells.get(c.b), cells.engine.seed) for c in statement.claims]
    diffs = with_holm(raw)
    problems = []
    for claim, d in zip(statement.claims, diffs, strict=True):
        if claim.kind == "above" and not (d.called and d.value > 0):
            why = "sign flips over seeds" if not d.sign_stable else f"Holm p {d.p_holm:.3f}"
            problems.append(
                f"{claim.a} above {claim.b} is not called ({why}, "
                f"CI [{d.ci_low:+.4f}, {d.ci_high:+.4f}])"
            )
        if claim.kind == "tie" and (d.p < ALPHA and (d.ci_low > 0 or d.ci_high < 0)):
            problems.append(
                f"{claim.a} and {claim.b} differ: {d.value:+.4f} "
                f"[{d.ci_low:+.4f}, {d.ci_high:+.4f}], p {d.p:.3f}"
            )
    return Verdict(statement, diffs, problems)


def render(verdict: Verdict) -> str:
    """The sentence followed by the differences it rests on, in parentheses; "seeds
    identical" where no seed varies (for the whole statement, or per difference when only
    some rest on one fit), so the two-level bootstrap does not pretend a seed level."""
    st = verdict.statement
    identical = [d.seed_level == SEEDS_IDENTICAL for d in verdict.diffs]
    parts = []
    for claim, d, same in zip(st.claims, verdict.diffs, identical, strict=True):
        a, b = _short(claim.a), _short(claim.b)
        if claim.a.partition(":")[0] == claim.b.partition(":")[0]:
            b = b.rsplit(" ", 1)[-1]  # same run: "minilm-l6 pos L3 − L4"
        s = st.scale
        parts.append(
            f"{a} − {b} {d.value * s:+.2f} [{d.ci_low * s:+.2f}, {d.ci_high * s:+.2f}]"
            + (f", p_Holm {_p(d.p_holm)}" if claim.kind == "above" else "")
            + (", seeds identical" if same and not all(identical) else "")
        )
    tail = f"; {SEEDS_IDENTICAL}" if identical and all(identical) else ""
    return f"{st.text} ({'; '.join(parts)} {st.unit}{tail})"


def _p(p: float) -> str:
    """A p-value to three decimals, or in powers of ten below 0.001 (the normal-approximation
    p of a clear difference can be far below the bootstrap's floor)."""
    if p >= 0.001:
        return f"{p:.3f}"
    return "< 1e-15" if p < 1e-15 else f"{p:.0e}".replace("e-0", "e-")


def load_statements(path: str | Path) -> list[Statement]:
    """Statements from JSON: ``[{"text", "claims": [[kind, a, b], ...], "scale"?, "unit"?}]``."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    return [
        Statement(
            d["text"],
            tuple(Claim(*c) for c in d["claims"]),
            float(d.get("scale", 100.0)),
            d.get("unit", "points"),
        )
        for d in data
    ]


def render_block(statements: Sequence[Statement], cells: Cells) -> tuple[str, list[Verdict]]:
    """Markdown bullets of the statements that hold, and every verdict."""
    verdicts = [check(s, cells) for s in statements]
    lines = [f"- {render(v)}" for v in verdicts if v.holds]
    return "\n".join(lines), verdicts


def _short(ref: str) -> str:
    """``minilm-l6__ud-ewt__pos:layer 3`` -> ``minilm-l6 pos L3``."""
    stem, _, name = ref.partition(":")
    model, _, task = stem.split("__") if stem.count("__") == 2 else (stem, "", "")
    name = {"cog": "CoG"}.get(name, name.replace("layer ", "L"))
    return f"{model} {task} {name}"


def table_sentence(comparisons: dict | None) -> str:
    """One sentence written from a run's comparison table (``ProbeResults.comparisons``):
    which layers the best layer is called above or below, which it is not distinguishable
    from, and which adjacent steps are called. Empty when the run has no table."""
    if not comparisons or not comparisons.get("rows"):
        return ""
    diffs = [Difference.from_dict(r) for r in comparisons["rows"]]
    best = [d for d in diffs if "best" in d.kind]
    if not best:
        return ""
    name = best[0].a
    above = [d.b.replace("layer ", "") for d in best if d.called and d.value > 0]
    below = [d.b.replace("layer ", "") for d in best if d.called and d.value < 0]
    ties = [d.b.replace("layer ", "") for d in best if not d.called]
    parts = []
    if above:
        parts.append(f"above layer{'s' if len(above) > 1 else ''} {', '.join(above)}")
    if below:
        parts.append(f"below layer{'s' if len(below) > 1 else ''} {', '.join(below)}")
    if ties:
        parts.append(
            f"not distinguishable from layer{'s' if len(ties) > 1 else ''} {', '.join(ties)}"
        )
    steps = sorted(
        (d for d in diffs if "adjacent" in d.kind),
        key=lambda d: min(int(d.a.split()[-1]), int(d.b.split()[-1])),
    )
    moves = []
    for d in steps:
        lo, hi = sorted((int(d.a.split()[-1]), int(d.b.split()[-1])))
        gain = d.value if int(d.a.split()[-1]) == hi else -d.value
        word = ("up" if gain > 0 else "down") if d.called else "no call"
        moves.append(f"{lo}→{hi} {word}")
    text = f"Paired comparisons: {name} (chosen on dev) is {'; '.join(parts)}"
    if moves:
        text += f"; layer to layer: {', '.join(moves)}"
    if diffs and all(d.seed_level == SEEDS_IDENTICAL for d in diffs):
        return text + " (bootstrap over test sentences, seeds identical; Holm over the table)."
    return (
        text + " (bootstrap over test sentences and seeds, Holm over the table; "
        "a difference is called only if its sign holds at every seed)."
    )
