"""An analysis's parameters, declared once: a frozen dataclass whose fields carry their range,
choices and help (:func:`param`), read by the CLI, the pages, sweeps and reports.

From such a class, :func:`add_arguments` builds a command's options (``n_words`` becomes
``--n-words``, its range checked while parsing, by :mod:`probing.cli.bounds`' converters),
:func:`from_args` makes the instance back, :func:`argv_of` writes the options that reproduce
it (recorded in results), :func:`check` refuses a value out of range in the library with the
same words the CLI uses, and :func:`spec_of` gives a page a field's range for its widget.

Standard library only: the CLI reads these before any heavy import.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

ALL_WORDS = {"all", "none"}
SEED_MAX = 2**32 - 1  # numpy and scikit-learn seeds


@dataclass(frozen=True)
class Bound:
    """``lo``..``hi`` inclusive. ``kind``: ``int`` or ``float``. ``all_ok``: ``all`` is
    accepted (no cap, None). ``items``: a comma-separated list of that many values (None: one
    value). ``choices``: a comma-separated list of these words instead of numbers."""

    lo: float = 0
    hi: float = 0
    kind: type = int
    all_ok: bool = False
    items: tuple[int, int] | None = None
    choices: tuple[str, ...] = ()
    as_text: bool = False  # hand the command the checked text, not the parsed values

    def describe(self) -> str:
        """The valid range in words, as the error messages say it."""
        if self.choices:
            return f"one or more of {', '.join(self.choices)}, comma-separated"
        what = (
            f"a whole number from {_n(self.lo)} to {_n(self.hi)}"
            if self.kind is int
            else f"a number from {_n(self.lo)} to {_n(self.hi)}"
        )
        if self.all_ok:
            what += ", or 'all'"
        if self.items is not None:
            lo, hi = self.items
            count = f"{lo}" if lo == hi else f"{lo} to {hi}"
            what = f"{count} comma-separated values, each {what}"
        return what

    def holds(self, value: object) -> bool:
        """Whether one parsed value (not a list) lies in the range."""
        if value is None:
            return self.all_ok
        if isinstance(value, bool) or not isinstance(value, int | float):
            return False
        if self.kind is int and not float(value).is_integer():
            return False
        return math.isfinite(value) and self.lo <= value <= self.hi


def _n(x: float) -> str:
    if float(x).is_integer() and abs(x) < 1e12:
        return f"{int(x):,}"
    return f"{x:g}"


def _one(text: str, b: Bound) -> int | float | None:
    word = text.strip().lower()
    if b.all_ok and word in ALL_WORDS:
        return None
    try:
        value = int(word) if b.kind is int else float(word)
    except ValueError:
        raise ValueError from None
    if b.kind is float and not math.isfinite(value):
        raise ValueError
    if not b.lo <= value <= b.hi:
        raise ValueError
    return value


def converter(b: Bound) -> Callable[[str], object]:
    """The argparse ``type`` for ``b``: the value (a list for ``items``, the checked text for
    ``choices``), or ArgumentTypeError saying the valid range and what was given."""

    def convert(text: str) -> object:
        shown = text if len(text) <= 40 else text[:37] + "..."
        fail = argparse.ArgumentTypeError(f"must be {b.describe()}, not {shown!r}")
        if b.choices:
            parts = [p.strip() for p in text.split(",") if p.strip()]
            if not parts or any(p not in b.choices for p in parts):
                raise fail
            return ",".join(parts)
        if b.items is None:
            try:
                return _one(text, b)
            except ValueError:
                raise fail from None
        parts = [p for p in text.replace(" ", "").split(",") if p]
        lo, hi = b.items
        if not lo <= len(parts) <= hi:
            raise fail
        try:
            values = [_one(p, b) for p in parts]
        except ValueError:
            raise fail from None
        return ",".join(parts) if b.as_text else values

    convert.__name__ = "bounded"
    return convert


def count(lo: int, hi: float, all_ok: bool = False) -> Bound:
    """A whole-number range."""
    return Bound(lo, hi, int, all_ok)


SEED = count(0, SEED_MAX)


@dataclass(frozen=True)
class Spec:
    """What :func:`param` records on a field: its help, range or choices, the demo's cap, and
    whether the CLI takes it as a repeatable option (``append``) or a switch (``flag``)."""

    help: str
    bound: Bound | None = None
    choices: tuple[str, ...] = ()
    # A page's tighter upper ends (what a click may cost): locally and in the shared demo. A
    # number, or the name of a :func:`probing.config.limits` field (the operator's setting).
    page_max: float | str | None = None
    demo_max: float | str | None = None
    append: bool = False
    flag: bool = False


def param(
    default: Any,
    help: str,  # argparse's word for it
    *,
    bound: Bound | None = None,
    choices: tuple[str, ...] = (),
    page_max: float | str | None = None,
    demo_max: float | str | None = None,
    append: bool = False,
) -> Any:
    """A dataclass field with its :class:`Spec` (a bool default makes a CLI switch)."""
    flag = isinstance(default, bool)
    spec = Spec(help, bound, tuple(choices), page_max, demo_max, append, flag)
    if isinstance(default, list | dict | set):
        raise TypeError("param defaults are immutable: use a tuple")
    return dataclasses.field(default=default, metadata={"spec": spec})


def spec_of(cls: type, name: str) -> Spec:
    """The :class:`Spec` of field ``name`` of parameter class ``cls``."""
    for f in dataclasses.fields(cls):
        if f.name == name:
            return f.metadata["spec"]
    raise KeyError(f"{cls.__name__} has no parameter {name!r}")


def option(name: str) -> str:
    """The CLI option of a field: ``n_words`` → ``--n-words``."""
    return "--" + name.replace("_", "-")


def add_arguments(parser: argparse.ArgumentParser, cls: type) -> None:
    """One option per field of ``cls``, with its default, help, choices and range check."""
    for f in dataclasses.fields(cls):
        spec: Spec = f.metadata["spec"]
        text = spec.help
        if spec.flag:
            parser.add_argument(option(f.name), action="store_true", help=text)
            continue
        kwargs: dict[str, Any] = {"help": text, "dest": f.name}
        if spec.choices:
            kwargs["choices"] = spec.choices
        if spec.bound is not None:
            kwargs["type"] = converter(spec.bound)
            shown = "all" if f.default is None and spec.bound.all_ok else f.default
            kwargs["help"] = f"{text} ({spec.bound.describe()}; default {shown})"
        if spec.append:
            kwargs["action"] = "append"
            kwargs["default"] = None
        else:
            kwargs["default"] = f.default
        parser.add_argument(option(f.name), **kwargs)


def from_args(cls: type, args: argparse.Namespace) -> Any:
    """The instance of ``cls`` an parsed command line describes (repeatable options as
    tuples; one not given takes the field's default)."""
    values = {}
    for f in dataclasses.fields(cls):
        value = getattr(args, f.name)
        if f.metadata["spec"].append:
            value = tuple(value) if value else f.default
        values[f.name] = value
    return cls(**values)


def argv_of(params: Any) -> list[str]:
    """The options that reproduce ``params`` (defaults left out)."""
    out: list[str] = []
    for f in dataclasses.fields(params):
        value, spec = getattr(params, f.name), f.metadata["spec"]
        if value == f.default:
            continue
        if spec.flag:
            out.append(option(f.name))
        elif spec.append:
            for v in value:
                out += [option(f.name), str(v)]
        else:
            out += [option(f.name), "all" if value is None else str(value)]
    return out


def check(params: Any) -> None:
    """Refuse a value outside its field's range or choices, as the CLI words it.

    Raises:
        InvalidArgumentError: naming the option, its range and the value given.
    """
    from probing.errors import InvalidArgumentError

    for f in dataclasses.fields(params):
        value, spec = getattr(params, f.name), f.metadata["spec"]
        if spec.choices and value not in spec.choices:
            raise InvalidArgumentError(
                f"{option(f.name)} must be one of {', '.join(spec.choices)}, not {value!r}."
            )
        if spec.bound is not None and spec.bound.items is None and not spec.bound.holds(value):
            raise InvalidArgumentError(
                f"{option(f.name)} must be {spec.bound.describe()}, not {value!r}."
            )
