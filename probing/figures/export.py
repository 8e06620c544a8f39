"""Figure export for downloads: PNG/SVG through kaleido (needs a Chrome), HTML always."""

from __future__ import annotations

import functools

import plotly.graph_objects as go


@functools.cache
def image_export_available() -> bool:
    """True when kaleido can find a Chrome/Chromium to render PNG and SVG with.

    Looked up once per process: the lookup is cheap, but rendering is what would fail.
    """
    try:
        import kaleido  # noqa: F401
        from choreographer.browsers.chromium import Chromium

        return Chromium.find_browser(skip_local=False) is not None
    except Exception:  # no kaleido, an unexpected choreographer: no image export
        return False


def figure_bytes(fig: go.Figure, fmt: str) -> bytes:
    """The figure as ``png`` (2× scale), ``svg`` or self-contained ``html`` bytes.

    PNG and SVG go through kaleido, which starts a headless Chrome (a few seconds); HTML
    embeds plotly.js, so it opens offline.
    """
    if fmt == "html":
        return fig.to_html(include_plotlyjs=True, full_html=True).encode("utf-8")
    if fmt not in ("png", "svg"):
        raise ValueError(f"format must be png, svg or html, not {fmt!r}")
    width = fig.layout.width or 1200
    height = fig.layout.height or 700
    return fig.to_image(format=fmt, width=width, height=height, scale=2 if fmt == "png" else 1)
