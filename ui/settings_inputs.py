"""Widgets for the settings of a registered analysis, with the ranges its class declares
(:mod:`probing.analyses.params`): the page never restates a range the CLI also checks."""

from __future__ import annotations

from typing import Any

from probing import config
from probing.params import spec_of
from ui.common import whole_number_input
from ui.state import persist


def _cap(value: float | str | None) -> float | None:
    if isinstance(value, str):  # the name of an operator's limit (probing.config.limits)
        return float(getattr(config.limits(), value))
    return value


def page_range(cls: type, name: str) -> tuple[int, int]:
    """The range a page offers for whole-number setting ``name`` of ``cls``: the declared
    range, capped by the page's (and in the shared demo, the demo's) upper end."""
    spec = spec_of(cls, name)
    if spec.bound is None:
        raise KeyError(f"{cls.__name__}.{name} has no range")
    hi = spec.bound.hi
    for cap in (_cap(spec.page_max), _cap(spec.demo_max) if config.demo_mode() else None):
        if cap is not None:
            hi = min(hi, cap)
    return int(spec.bound.lo), int(hi)


def setting_number(
    cls: type,
    name: str,
    label: str,
    *,
    key: str,
    param: str,
    default: int,
    step: int,
    where: Any = None,
) -> int:
    """A whole-number box for setting ``name`` of ``cls``, its range from the class, its value
    kept for the session and in the address as ``param`` (a link outside the range is
    ignored)."""
    lo, hi = page_range(cls, name)
    return whole_number_input(
        label,
        lo,
        hi,
        step=step,
        key=persist(key, min(max(default, lo), hi), param, int, lambda n: lo <= n <= hi),
        where=where,
    )
