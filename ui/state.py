"""The user's inputs kept across pages and reloads: session state plus a permalink.

Streamlit forgets a widget's value when a page that does not draw that widget runs, so typed
sentences, the typed model id and the chosen task were lost on every page change. Inputs
drawn through :func:`persist` are written back to session state on every run (state the
script set itself survives page changes) and remembered in a per-session store.

The permalink: a few inputs are mirrored into the address bar (``st.query_params``) as
``model``, ``sentence``, ``layer``, ``head`` and ``task``, as BertViz / exBERT / LIT users
expect; opening such an address starts the session with them.

Widgets drawn through :func:`persist` take no default value of their own (the value is in
session state already), which keeps Streamlit from warning about a value set twice.

Every widget that :func:`persist` binds to a query parameter is listed, as the page draws it,
in :func:`linked_widgets` (session key, parameter, the values a link may give when the page
said): what the generated permalink test (tests/app/test_permalink_roundtrip.py) sets and
reads back on every page.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import streamlit as st

from ui import input_limits

PERMALINK = ("model", "sentence", "layer", "head", "task")
_STORE = "_kept_inputs"
_READ = "_permalink_read"  # query parameters already applied to session keys
_LINKED = "_linked_widgets"  # session key -> LinkedWidget, for every widget the address holds


@dataclass(frozen=True)
class LinkedWidget:
    """A widget whose value the address holds: its session ``key``, its query ``param``, and
    the values a link may give (``options``; None when the page gave only a check, such as a
    range, or none)."""

    key: str
    param: str
    options: tuple | None = None


def linked_widgets() -> dict[str, LinkedWidget]:
    """The widgets bound to a query parameter that this session's pages have drawn, by
    session key (filled by :func:`persist`)."""
    return st.session_state.setdefault(_LINKED, {})


def _store() -> dict[str, Any]:
    return st.session_state.setdefault(_STORE, {})


def _page() -> str:
    """The running page's id (its script hash), or "" outside a script run."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    return getattr(ctx, "page_script_hash", "") if ctx is not None else ""


def _link_applies() -> bool:
    """A permalink describes the page it was opened on: only that page reads it (the
    address may still hold another page's sentence after a page change)."""
    return st.session_state.setdefault("_link_page", _page()) == _page()


def from_link(param: str, parse: Callable[[str], Any] = str, key: str | None = None) -> Any | None:
    """The permalink's ``param`` parsed, or None (missing or unparsable).

    With ``key`` (the session key the parameter sets), only what :func:`persist` would take
    from the link: None once the session has used ``key``, or when the link was opened on
    another page. A page that re-derives a control (a default from a shipped run) asks this
    first, so that the link's value is not overwritten.
    """
    if key is not None and (key in st.session_state.get(_READ, ()) or not _link_applies()):
        return None
    raw = st.query_params.get(param)
    if raw is None or raw == "":
        return None
    try:
        return parse(raw)
    except (TypeError, ValueError):
        return None


def persist(
    key: str,
    default: Any,
    param: str | None = None,
    parse: Callable[[str], Any] = str,
    valid: Callable[[Any], bool] | None = None,
    show: Callable[[Any], Any] | None = None,
) -> str:
    """Keep session key ``key`` across pages (and, with ``param``, in the permalink).

    The value comes from, in order: this run's session state (the widget's current value),
    the permalink when the session has not used ``key`` yet, the per-session store, then
    ``default``. A value that ``valid`` rejects (e.g. a layer the model does not have) falls
    back to ``default``; so does a link's. ``show``: what the address shows for a value
    (None leaves the parameter out: e.g. "all layers", which a model switch re-derives).
    Returns ``key``, to pass to the widget.
    """
    ss, store = st.session_state, _store()
    read: set[str] = ss.setdefault(_READ, set())
    if key in ss:
        value = ss[key]
    elif (
        param
        and (linked := from_link(param, parse, key)) is not None
        and input_limits.fits(key, linked)  # the box's own limit holds for links too
        and (valid is None or valid(linked))
    ):
        value = linked
    elif key in store:
        value = store[key]
    else:
        value = default
    read.add(key)
    if valid is not None and not valid(value):
        value = default
    ss[key] = store[key] = value
    if param:
        linked_widgets()[key] = LinkedWidget(key, param, _options(valid))
        link(param, show(value) if show is not None else value)
    return key


def keep(key: str, value: Any) -> None:
    """Set ``key`` to ``value`` in session state and the per-session store: for a value the
    page re-derives after :func:`persist` (a model switch changes the layers), so that a
    return to the page finds the derived value, not the one before."""
    st.session_state[key] = _store()[key] = value


def forget(key: str) -> None:
    """Drop ``key`` from the per-session store (a refused value must not come back)."""
    _store().pop(key, None)


def link(param: str, value: Any) -> None:
    """Show ``value`` in the address bar as ``param`` (cleared when empty)."""
    text = ",".join(map(_text, value)) if isinstance(value, list | tuple) else _text(value)
    if value is None or text == "":
        if param in st.query_params:
            del st.query_params[param]
    elif st.query_params.get(param) != text:
        st.query_params[param] = text


def _text(value: Any) -> str:
    """A value as the address shows it: a whole float as a whole number (``1000``, not
    ``1000.0``: whole-number boxes are float widgets, see ``ui.common.whole_number_input``,
    and their links are read back with ``int``)."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


# Parsers and checks for permalink values (what ``persist``'s ``parse`` and ``valid`` take).


def as_bool(text: str) -> bool:
    """``true``/``false`` (as :func:`link` writes a bool) to a bool."""
    if text.lower() in {"true", "1", "yes"}:
        return True
    if text.lower() in {"false", "0", "no"}:
        return False
    raise ValueError(text)


def as_ints(text: str) -> list[int]:
    """``1,2,7`` to ``[1, 2, 7]``."""
    return [int(x) for x in text.split(",") if x.strip()]


def as_strs(text: str) -> list[str]:
    """``a,b`` to ``["a", "b"]``."""
    return [x.strip() for x in text.split(",") if x.strip()]


@dataclass(frozen=True)
class OneOf:
    """A check that a value is one of ``options`` (what :func:`one_of` makes)."""

    options: tuple

    def __call__(self, value: Any) -> bool:
        return value in self.options


@dataclass(frozen=True)
class AllOf(OneOf):
    """A check that a list's values are all among ``options`` (what :func:`all_of` makes)."""

    def __call__(self, values: Any) -> bool:
        return isinstance(values, list) and all(v in self.options for v in values)


def one_of(options: Iterable) -> OneOf:
    """A check that a value is one of ``options``."""
    return OneOf(tuple(options))


def all_of(options: Iterable) -> AllOf:
    """A check that a list's values are all among ``options``."""
    return AllOf(tuple(options))


def _options(valid: Callable[[Any], bool] | None) -> tuple | None:
    """The values ``valid`` allows, where it lists them: :func:`one_of` / :func:`all_of`,
    or a list's, tuple's or range's own ``__contains__``."""
    if isinstance(valid, OneOf):
        return valid.options
    owner = getattr(valid, "__self__", None)
    if getattr(valid, "__name__", "") == "__contains__" and isinstance(owner, list | tuple | range):
        return tuple(owner)
    return None
