"""Text limits kept by the server for every entry point, before any work.

A widget's ``max_chars`` is checked by the browser only: a permalink (``?sentence=…``) or a
hand-made websocket message hands the script any length, and a long enough text costs
minutes of CPU outside the job queue, or comes back whole in an error message. So every
page run starts (:func:`ui.common.page_header` calls :func:`enforce`) by refusing:

- query parameters longer than the page's typed-text limit (``config.limits().max_chars``),
  with overlong names, or beyond :data:`MAX_PARAMS` of them: each is removed from the
  address;
- text values in session state (every text box's value) longer than the box's limit:
  :data:`BOX_LIMITS` for boxes meant for one word or one name, ``max_chars`` for the rest.
  The value is dropped, so the box falls back to its default.

:func:`ui.state.persist` applies the box's limit to a permalink value too (:func:`fits`).
A refusal says which input, its length and the limit: never the text itself.
"""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from probing import config

# Boxes for one word, one token or one name: tighter than a sentence's limit.
BOX_LIMITS = {
    "sc_target": 40,
    "sc_lemma": 40,
    "dir_target": 40,
    "corrupt_target": 40,
    "fill_mask_follow": 40,
    "lens_text": 300,
    "nsp_model": 200,
    "models_custom": 200,
    "sweep_folder": 500,
    "sc_static_path": 1_000,
}
BOX_NAMES = {
    "sc_target": "Target word",
    "sc_lemma": "Lemma",
    "dir_target": "Word",
    "corrupt_target": "Target word",
    "fill_mask_follow": "Follow a token",
    "lens_text": "Your sentence",
    "nsp_model": "Checkpoint",
    "models_custom": "Model id",
    "sweep_folder": "Sweep folder",
    "sc_static_path": "Vectors file",
}
MAX_PARAMS = 40  # query parameters read from one address
MAX_PARAM_NAME = 40  # characters of a parameter's name


def text_limit(key: str) -> int:
    """Most characters the text box (session key) ``key`` takes on this server."""
    return min(BOX_LIMITS.get(key, config.limits().max_chars), config.limits().max_chars)


def fits(key: str, value: object) -> bool:
    """False for a text longer than box ``key`` takes (other values always fit)."""
    return not isinstance(value, str) or len(value) <= text_limit(key)


def _what(key: str) -> str:
    return f"The “{BOX_NAMES[key]}” box" if key in BOX_NAMES else "A text box"


def _refuse_params() -> list[str]:
    notes = []
    limit = config.limits().max_chars
    for i, name in enumerate(list(st.query_params)):
        value = st.query_params.get(name, "")
        if i >= MAX_PARAMS or len(name) > MAX_PARAM_NAME:
            del st.query_params[name]
            notes.append(
                "The address has too many or too long parameters; the extra ones were ignored."
            )
        elif len(value) > limit:
            del st.query_params[name]
            notes.append(
                f"The address's `{name}` parameter has {len(value):,} characters; this "
                f"server takes at most {limit:,}. It was ignored."
            )
    return list(dict.fromkeys(notes))


def _refuse_boxes(forget: Callable[[str], None]) -> list[str]:
    notes = []
    for key in list(st.session_state):
        key = str(key)
        value = st.session_state[key] if not key.startswith("_") else None
        if isinstance(value, str) and not fits(key, value):
            del st.session_state[key]
            forget(key)
            notes.append(
                f"{_what(key)} held {len(value):,} characters; this server takes at "
                f"most {text_limit(key):,}. It was reset."
            )
    return notes


def enforce(forget: Callable[[str], None]) -> list[str]:
    """Refuse oversized query parameters and text values (see module doc) before the page
    does any work; show one warning per refusal and return their texts. ``forget`` drops a
    refused key from the session's kept values (:func:`ui.state.forget`; passed in because
    :mod:`ui.state` reads this module's limits)."""
    notes = _refuse_params() + _refuse_boxes(forget)
    for note in notes:
        st.warning(note)
    return notes
