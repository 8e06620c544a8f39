"""A claim: one comparative finding with the numbers, family and correction it rests on.

A claim's ``text`` is written by its kind's wording rule (the builders in
:mod:`probing.claims.sources`), never by hand: the sentence says exactly what the tests
called. Each claim carries its comparisons (:class:`Comparison`: a − b, interval, raw and
adjusted p, and the outcome the wording used), so counts (made / called / not
distinguishable) and the check that a page says what the data say are read off the data.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

from probing.errors import InvalidArgumentError

KINDS = (
    "peak",  # the best layer (chosen on dev) against every other layer of a run
    "ordering",  # a against b (called above or below, or not distinguishable)
    "cog_order",  # two tasks' centres of gravity within one model
    "depth",  # two models' centres of gravity, absolute layers and relative depth
    "cross_model",  # the same measure in two models, paired where the items are the same
    "at_baseline",  # a score against its baseline (e.g. held-out probe after erasure vs majority)
    "survivors",  # how many units of a family survive a family-wise correction
)
OUTCOMES = ("above", "below", "tie")


@dataclass(frozen=True)
class Comparison:
    """``a − b`` as the engine gave it, and what the wording makes of it."""

    a: str
    b: str
    value: float
    ci_low: float
    ci_high: float
    p: float = math.nan
    p_adj: float = math.nan
    outcome: str = "tie"  # above / below (called) or tie (not distinguishable)

    def __post_init__(self) -> None:
        if self.outcome not in OUTCOMES:
            raise InvalidArgumentError(f"outcome {self.outcome!r}; one of {OUTCOMES}")

    @property
    def called(self) -> bool:
        return self.outcome != "tie"


@dataclass(frozen=True)
class Claim:
    """A finding: its kind, what it is about, the sentence its wording rule wrote, and the
    comparisons (with family and correction) it rests on."""

    id: str
    kind: str
    model: str  # the model it is about; "a vs b" for a cross-model claim
    topic: str  # probing, depth, erasure, heads, agreement, minimal pairs, attribution, ...
    text: str
    comparisons: tuple[Comparison, ...]
    family: str  # what the correction ran over
    correction: str  # "Holm over N" / "none (one test)" / "per layer, uncorrected (…)"
    unit: str = "points"
    scale: float = 100.0
    source: tuple[str, ...] = ()
    note: str = ""  # what the intervals do not support, where the rule says so
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise InvalidArgumentError(f"claim kind {self.kind!r}; one of {KINDS}")

    @property
    def n_called(self) -> int:
        return sum(c.called for c in self.comparisons)

    @property
    def n_tied(self) -> int:
        return sum(not c.called for c in self.comparisons)

    def to_record(self) -> dict[str, Any]:
        """JSON-ready (NaN -> None)."""
        d = asdict(self)
        d["comparisons"] = [
            {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in c.items()}
            for c in d["comparisons"]
        ]
        d["source"] = list(self.source)
        return d

    @classmethod
    def from_record(cls, d: dict[str, Any]) -> Claim:
        comps = tuple(
            Comparison(**{k: (math.nan if v is None else v) for k, v in c.items()})
            for c in d["comparisons"]
        )
        rest = {k: v for k, v in d.items() if k not in ("comparisons", "source")}
        return cls(comparisons=comps, source=tuple(d.get("source", ())), **rest)
