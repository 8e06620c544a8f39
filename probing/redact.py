"""Server paths out of messages shown to demo visitors, redacted by value.

A pattern for "an absolute path" misses a relative data folder or one with a space or comma
in its name (``my lens/data/ud/...``), so the known server folders (data, cache, checkout,
home, temp, interpreter) are replaced by their value first; the pattern then catches any
other absolute path.
"""

from __future__ import annotations

import re

from probing import config

PLACEHOLDER = "<server path>"
_ABS_PATH = re.compile(r"(?<![\w.:/<])(?:/[\w.\-+@]+){2,}/?")


def redact_paths(text: str) -> str:
    """``text`` with every server folder (and anything below it) and every other absolute
    path replaced by ``<server path>``; a sentence's closing full stop is kept."""
    for root in config.server_paths():
        # The folder and the rest of the path below it, up to whitespace or a quote: a
        # file name under a data folder says where the server keeps it.
        text = re.sub(re.escape(root) + r"(?:[/\\][^\s'\"<>]*)?", _keep_stop, text)
    return _ABS_PATH.sub(_keep_stop, text)


def _keep_stop(match: re.Match[str]) -> str:
    return PLACEHOLDER + ("." if match.group().endswith(".") else "")
