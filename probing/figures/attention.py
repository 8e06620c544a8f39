"""Plotly figures for attention: head view, model view, one head's heatmap, head statistics.

Every builder takes an :class:`probing.analyses.attention.AttentionMap` (or statistics) and returns a
``go.Figure``; nothing here computes attention. Token axes are numeric with the tokens as
tick text, because a sentence repeats tokens ("the" … "the") and categorical axes would
merge them. Export (PNG/SVG through kaleido + a Chrome, HTML otherwise) is at the end.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from probing.analyses.attention import STATISTICS, AttentionMap, HeadStatistics

# One colour per head: d3's category10, then category20b's darks (readable on white).
HEAD_COLOURS = (
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
    "#393b79",
    "#637939",
    "#8c6d31",
    "#843c39",
    "#7b4173",
    "#3182bd",
    "#e6550d",
    "#31a354",
    "#756bb1",
    "#636363",
)
SEGMENT_COLOURS = {None: "#888888", 0: "#222222", 1: "#1f4e9c"}  # special, segment A, segment B
HEATMAP_SCALE = "Blues"
ROW_PX = 20  # vertical pixels per token in the head view and the large heatmap
MAX_TICKS = 60  # token labels per axis of the large heatmap
HEAD_VIEW_PX = 760  # the two token columns read best close together, not page-wide

# Lines are bucketed by opacity (one trace per head and bucket) because plotly sets opacity
# per trace: 20 buckets keep the opacity within 0.05 of the weight with ≤ 20 traces a head.
_OPACITY_STEPS = 20


def head_colour(head: int) -> str:
    """The colour of head ``head`` (0-based) in every attention figure."""
    return HEAD_COLOURS[head % len(HEAD_COLOURS)]


def _token_text(amap: AttentionMap) -> list[str]:
    return [t if len(t) <= 18 else t[:17] + "…" for t in amap.tokens]


def head_view_figure(
    amap: AttentionMap,
    layer: int,
    heads: Sequence[int],
    focus: int | Sequence[int] | None = None,
    max_lines: int = 1500,
    min_weight: float = 0.02,
) -> go.Figure:
    """Tokens in two columns, attending (left) → attended (right), one line per weight.

    A line's opacity is its weight (rounded up to a multiple of 0.05); its colour is its head.
    With ``focus`` (one token or several), only those tokens' rows are drawn and their
    labels are highlighted; otherwise the ``max_lines`` largest weights ≥ ``min_weight`` are
    drawn, which bounds the figure's size whatever the input length (a 60-word sentence with
    12 heads has ~60,000 pairs; most are near zero and invisible anyway).

    Args:
        amap: the map to draw (any level).
        layer: 1-based layer.
        heads: 0-based heads to overlay.
        focus: token index (or indices) whose rows to show alone, or None for all rows.
        max_lines: cap on the lines drawn.
        min_weight: weights below this are not drawn.

    Returns:
        Figure with one legend entry per head; token markers carry their index as
        ``customdata`` so a click can pick the focus token.
    """
    n = amap.n_tokens
    heads = [h for h in heads if 0 <= h < amap.n_heads]
    weights = amap.weights[layer - 1][heads]  # (len(heads), n, n)
    focus = focus_rows(focus, n)
    if focus:
        mask = np.zeros_like(weights, dtype=bool)
        mask[:, focus, :] = True
        weights = np.where(mask, weights, 0.0)
    h_idx, q_idx, k_idx = np.nonzero(weights >= min_weight)
    values = weights[h_idx, q_idx, k_idx]
    total = len(values)
    if total > max_lines:
        top = np.argpartition(values, -max_lines)[-max_lines:]
        h_idx, q_idx, k_idx, values = h_idx[top], q_idx[top], k_idx[top], values[top]
    left, right = 0.0, 1.0
    fig = go.Figure()
    buckets = np.clip(np.ceil(values * _OPACITY_STEPS), 1, _OPACITY_STEPS).astype(int)
    for pos, head in enumerate(heads):
        colour = head_colour(head)
        mine = h_idx == pos
        # A legend entry even when no line passes the threshold, so colours stay explained.
        fig.add_trace(
            go.Scatter(
                x=[None],
                y=[None],
                mode="lines",
                line={"color": colour, "width": 3},
                name=f"head {head}",
                legendgroup=f"h{head}",
                showlegend=True,
            )
        )
        for b in np.unique(buckets[mine]):
            sel = mine & (buckets == b)
            xs = np.tile([left, right, np.nan], int(sel.sum()))
            ys = np.column_stack([q_idx[sel], k_idx[sel], np.full(sel.sum(), np.nan)]).ravel()
            fig.add_trace(
                go.Scatter(
                    x=xs,
                    y=ys,
                    mode="lines",
                    opacity=b / _OPACITY_STEPS,
                    line={"color": colour, "width": 2},
                    hoverinfo="skip",
                    legendgroup=f"h{head}",
                    showlegend=False,
                )
            )
    text = _token_text(amap)
    colours = [SEGMENT_COLOURS.get(s, "#222222") for s in amap.segments]
    for f in focus:
        colours[f] = "#d62728"
        text[f] = f"<b>{text[f]}</b>"
    for x, position, side in ((left, "middle left", "from"), (right, "middle right", "to")):
        fig.add_trace(
            go.Scatter(
                x=[x] * n,
                y=list(range(n)),
                mode="markers+text",
                text=text,
                textposition=position,
                textfont={"color": colours, "size": 13},
                marker={"size": 7, "color": colours},
                customdata=list(range(n)),
                hovertemplate=f"{side}: %{{text}} (#%{{customdata}})<extra></extra>",
                showlegend=False,
            )
        )
    for f in focus:
        fig.add_shape(
            type="rect",
            x0=-0.42,
            x1=-0.01,
            y0=f - 0.48,
            y1=f + 0.48,
            fillcolor="rgba(214,39,40,0.12)",
            line={"width": 0},
            layer="below",
        )
    shown = len(values)
    named = ", ".join(f"“{amap.tokens[f]}”" for f in focus[:4]) + (" …" if len(focus) > 4 else "")
    subtitle = (
        f"row{'s' if len(focus) > 1 else ''} of {named}" if focus else f"{shown} of {total} lines"
    ) + f", weights ≥ {min_weight:g}"
    fig.update_layout(
        title={
            "text": f"Layer {layer}, heads {', '.join(map(str, heads)) or '—'}"
            f"<br><sup>{subtitle}; line opacity = attention weight</sup>"
        },
        height=max(320, n * ROW_PX + 140),
        width=HEAD_VIEW_PX,
        margin={"l": 20, "r": 20, "t": 80, "b": 20},
        xaxis={"visible": False, "range": [-0.45, 1.45], "fixedrange": True},
        yaxis={"visible": False, "range": [n - 0.5, -0.5], "fixedrange": True},
        legend={"orientation": "h", "y": -0.02, "yanchor": "top", "x": 0.5, "xanchor": "center"},
        plot_bgcolor="white",
        dragmode=False,
        clickmode="event+select",
    )
    return fig


def focus_rows(focus: int | Sequence[int] | None, n: int) -> list[int]:
    """Focus token(s) as a sorted list of valid indices (None: none)."""
    if focus is None:
        return []
    items = [focus] if isinstance(focus, int | np.integer) else list(focus)
    return sorted({int(i) for i in items if 0 <= int(i) < n})


# Cells the model view sends at most (issue 32: at the 2,000-character limit, 1.5 M cells
# were an 11.8 MB message that took 70-285 s to draw). 150 k float32 cells are ~0.8 MB.
MODEL_VIEW_MAX_CELLS = 150_000


def model_view_figure(
    amap: AttentionMap,
    selected: tuple[int, int] | None = None,
    max_cells: int = MODEL_VIEW_MAX_CELLS,
) -> go.Figure:
    """All layers × heads as small heatmaps, layer 1 at the top, head 0 at the left.

    The tiles are one heatmap with blank gaps rather than layers × heads subplots: it draws
    the same picture, builds in milliseconds and stays small for BERT-large's 24 × 16 heads,
    where hundreds of subplots take seconds. When layers · heads · n² would exceed
    ``max_cells``, each tile is reduced to k × k blocks of consecutive tokens
    (:func:`block_mean`, said in the subtitle), which keeps a long input on a big model from
    sending hundreds of MB to the browser.
    ``selected`` = (layer, head) is outlined.
    """
    n_layers, n_heads = amap.n_attention_layers, amap.n_heads
    tiles = amap.weights
    side = max(1, math.isqrt(max_cells // max(1, n_layers * n_heads)))
    if amap.n_tokens > side:
        tiles = block_mean(tiles, side)
    n = tiles.shape[-1]
    gap = max(1, round(n * 0.12))
    step = n + gap
    z = np.full((n_layers * step - gap, n_heads * step - gap), np.nan, np.float32)
    for layer in range(n_layers):
        for head in range(n_heads):
            z[layer * step : layer * step + n, head * step : head * step + n] = tiles[layer, head]
    centres = [i * step + (n - 1) / 2 for i in range(max(n_layers, n_heads))]
    fig = go.Figure(
        go.Heatmap(
            z=z,
            zmin=0,
            zmax=1,
            colorscale=HEATMAP_SCALE,
            hoverinfo="skip",
            colorbar={"title": {"text": "weight", "side": "right"}, "thickness": 12},
        )
    )
    if selected is not None:
        layer, head = selected
        y0, x0 = (layer - 1) * step - 0.5, head * step - 0.5
        fig.add_shape(
            type="rect",
            x0=x0 - gap / 3,
            x1=x0 + n + gap / 3,
            y0=y0 - gap / 3,
            y1=y0 + n + gap / 3,
            line={"color": "#d62728", "width": 2},
        )
    notes = [f"{amap.level} level"]
    if amap.special_hidden:
        notes.append("special tokens hidden")
    if n < amap.n_tokens:
        notes.append(f"{amap.n_tokens} tokens grouped into {n} blocks per tile")
    notes.append("rows attend to columns")
    # A fixed size whose plot area has the grid's aspect, so square tiles fill it (a page-wide
    # figure would leave the grid floating in white space); ~680 px of tiles across.
    tile_px = max(24, min(80, 680 // max(n_heads, 1)))
    margin = {"l": 70, "r": 90, "t": 100, "b": 20}
    fig.update_layout(
        title={
            "text": f"Model view: {n_layers} layers × {n_heads} heads<br><sup>{'; '.join(notes)}</sup>"
        },
        width=n_heads * tile_px + margin["l"] + margin["r"],
        height=n_layers * tile_px + margin["t"] + margin["b"],
        margin=margin,
        xaxis={
            "tickvals": centres[:n_heads],
            "ticktext": [f"head {h}" for h in range(n_heads)],
            "side": "top",
            "showgrid": False,
            "zeroline": False,
            "constrain": "domain",
        },
        yaxis={
            "tickvals": centres[:n_layers],
            "ticktext": [f"layer {i + 1}" for i in range(n_layers)],
            "autorange": "reversed",
            "showgrid": False,
            "zeroline": False,
            "scaleanchor": "x",
            "constrain": "domain",
        },
        plot_bgcolor="white",
    )
    _tile_targets(fig, n_layers, n_heads, centres, tile_px)
    return fig


def _tile_targets(fig: go.Figure, n_layers: int, n_heads: int, centres: list, tile_px: int) -> None:
    """One invisible, clickable marker over each tile; its customdata is (layer, head), so a
    click on a tile can open that head (the page listens for point selections)."""
    layers, heads = np.meshgrid(np.arange(1, n_layers + 1), np.arange(n_heads), indexing="ij")
    fig.add_trace(
        go.Scatter(
            x=[centres[h] for h in heads.ravel()],
            y=[centres[layer - 1] for layer in layers.ravel()],
            mode="markers",
            showlegend=False,
            marker={"symbol": "square", "size": max(8, tile_px - 4), "color": "rgba(0,0,0,0.01)"},
            customdata=np.stack([layers.ravel(), heads.ravel()], axis=1),
            hovertemplate="layer %{customdata[0]}, head %{customdata[1]}: click to open<extra></extra>",
        )
    )


def block_mean(weights: np.ndarray, side: int) -> np.ndarray:
    """(..., n, n) → (..., side, side) over near-equal blocks of consecutive tokens.

    Like piece → word aggregation: the mean over a block's query rows, the sum over its key
    columns, so rows still sum to 1 and a block that draws attention stays visible.
    """
    n = weights.shape[-1]
    starts = np.linspace(0, n, side + 1).astype(int)[:-1]
    counts = np.diff(np.append(starts, n))
    rows = np.add.reduceat(weights, starts, axis=-2) / counts[:, None]
    return np.add.reduceat(rows, starts, axis=-1)


def attention_heatmap_figure(
    amap: AttentionMap, layer: int, head: int, focus: int | None = None
) -> go.Figure:
    """One head's (n, n) matrix with the tokens on both axes; ``focus`` row outlined."""
    n = amap.n_tokens
    text = _token_text(amap)
    # Every token labelled up to MAX_TICKS; past that every k-th (433 rotated labels a side
    # took Chromium ~30 s to lay out on this machine; 60 take ~1 s).
    step = max(1, math.ceil(n / MAX_TICKS))
    ticks = list(range(0, n, step))
    labelled = f"; every {step}th token labelled" if step > 1 else ""
    w = amap.head(layer, head)
    # Token names in the hover text cost 2 strings a cell: only for inputs of modest length.
    hover = (
        {
            "customdata": np.array([[(q, k) for k in text] for q in text], dtype=object),
            "hovertemplate": "%{customdata[0]} → %{customdata[1]}: %{z:.3f}<extra></extra>",
        }
        if n <= 160
        else {"hovertemplate": "#%{y} → #%{x}: %{z:.3f}<extra></extra>"}
    )
    fig = go.Figure(
        go.Heatmap(
            z=w,
            zmin=0,
            zmax=1,
            colorscale=HEATMAP_SCALE,
            colorbar={"title": {"text": "weight", "side": "right"}, "thickness": 12},
            **hover,
        )
    )
    if focus is not None:
        fig.add_shape(
            type="rect",
            x0=-0.5,
            x1=n - 0.5,
            y0=focus - 0.5,
            y1=focus + 0.5,
            line={"color": "#d62728", "width": 2},
        )
    side = max(420, min(900, n * ROW_PX + 160))
    # Tick labels at -60° rise ~sin(60°) × their length above the plot: the top margin grows
    # with the longest token so that they never run into the subtitle.
    top = 120 + max(60, round(max((len(t) for t in text), default=0) * 8))
    fig.update_layout(
        title={
            "text": f"Layer {layer}, head {head}"
            f"<br><sup>{amap.level} level{', special tokens hidden (rows renormalised)' if amap.special_hidden else ''}; "
            f"row = attending token, column = attended token{labelled}</sup>"
        },
        height=side + 110 + top - 180,
        width=side + 120,
        margin={"l": 110, "r": 20, "t": top, "b": 20},
        xaxis={
            "tickvals": ticks,
            "ticktext": [text[t] for t in ticks],
            "side": "top",
            "tickangle": -60,
            "showgrid": False,
        },
        yaxis={
            "tickvals": ticks,
            "ticktext": [text[t] for t in ticks],
            "autorange": "reversed",
            "showgrid": False,
            "scaleanchor": "x",
            "constrain": "domain",
        },
        plot_bgcolor="white",
    )
    return fig


def statistics_figure(
    stats: HeadStatistics, names: Sequence[str] | None = None, title: str = "", cols: int = 2
) -> go.Figure:
    """One layer × head heatmap per statistic (rows = layers from 1, columns = heads from 0).

    Shares use a fixed 0–1 scale so that heads can be compared across panels; entropy gets
    its own scale (0 … ln n, in nats). Cell values are printed when the grid is small enough
    to read them.
    """
    names = [k for k in (names or STATISTICS) if k in stats.values]
    n_layers, n_heads = stats.shape
    cols = max(1, min(cols, len(names)))
    rows = math.ceil(len(names) / cols)
    # Fixed pixel sizes (plotly's spacing is a fraction of the plot): a cell ~26 px high.
    panel_px, gap_px = max(170, n_layers * 26), 90
    plot_px = rows * panel_px + (rows - 1) * gap_px
    fig = make_subplots(
        rows=rows,
        cols=cols,
        subplot_titles=[STATISTICS[k] for k in names],
        horizontal_spacing=0.08,
        vertical_spacing=gap_px / plot_px if rows > 1 else 0.0,
    )
    show_text = n_layers * n_heads <= 200
    for k, name in enumerate(names):
        r, c = divmod(k, cols)
        values = stats.values[name]
        zmax = float(values.max()) if name == "entropy" else 1.0
        fig.add_trace(
            go.Heatmap(
                z=values,
                x=list(range(n_heads)),
                y=list(range(1, n_layers + 1)),
                zmin=0,
                zmax=zmax or 1.0,
                colorscale="Viridis" if name == "entropy" else HEATMAP_SCALE,
                texttemplate="%{z:.2f}" if show_text else None,
                textfont={"size": 9},
                hovertemplate=f"layer %{{y}}, head %{{x}}: %{{z:.3f}}<extra>{name}</extra>",
                showscale=False,
            ),
            row=r + 1,
            col=c + 1,
        )
        fig.update_xaxes(
            title_text="head" if r == rows - 1 else None, dtick=1, row=r + 1, col=c + 1
        )
        fig.update_yaxes(
            title_text="layer" if c == 0 else None,
            dtick=1,
            autorange="reversed",
            row=r + 1,
            col=c + 1,
        )
    fig.update_layout(
        title={
            "text": title
            or f"Head statistics: {stats.model}"
            f"<br><sup>means over {stats.n_queries} query positions in {stats.n_sentences} "
            "input(s); piece level, special tokens included; cell colour 0–1 for shares, "
            "0–max for entropy</sup>"
        },
        height=plot_px + 150,
        margin={"l": 60, "r": 20, "t": 100, "b": 50},
    )
    return fig
