"""A followed token's rank and probability per layer at one mask (see analyses.token_track)."""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from probing.analyses.token_track import TokenTrack


def token_track_figure(track: TokenTrack, mask: int, title: str = "") -> go.Figure:
    """Rank (log scale, 1 at the top) and probability of the followed token, per layer."""
    x = list(range(len(track.layer_names)))
    fig = make_subplots(specs=[[{"secondary_y": True}]])
    fig.add_trace(
        go.Scatter(
            x=x,
            y=track.rank[mask],
            mode="lines+markers",
            name="rank",
            customdata=list(track.layer_names),
            hovertemplate="%{customdata}: rank %{y}<extra></extra>",
        ),
        secondary_y=False,
    )
    fig.add_trace(
        go.Scatter(
            x=x,
            y=track.probability[mask],
            mode="lines+markers",
            name="probability",
            line={"dash": "dot"},
            customdata=list(track.layer_names),
            hovertemplate="%{customdata}: p %{y:.1%}<extra></extra>",
        ),
        secondary_y=True,
    )
    # Both axes are logarithmic with one labelled tick per decade: plotly's own log ticks
    # read "5, 10, 2, 5, 100 …" and a ".0%" linear axis "1%, 1%, … 0%" for small probabilities.
    rank_ticks = decade_ticks(1, float(np.max(track.rank[mask])))
    fig.update_yaxes(
        type="log",
        range=[math.log10(rank_ticks[-1]), 0],
        title_text="rank (1 = top)",
        secondary_y=False,
        tickvals=rank_ticks,
        ticktext=[f"{int(v):,}" for v in rank_ticks],
        minor={"showgrid": False},
    )
    probs = np.clip(track.probability[mask], 1e-12, 1)
    prob_ticks = decade_ticks(float(np.min(probs)), 1.0)
    fig.update_yaxes(
        type="log",
        title_text="probability (log)",
        secondary_y=True,
        showgrid=False,
        tickvals=prob_ticks,
        ticktext=[percent(v) for v in prob_ticks],
        range=[np.log10(prob_ticks[0]), 0.05],
    )
    fig.update_xaxes(tickvals=x, ticktext=[str(i) for i in x], title_text="layer (0 = embeddings)")
    fig.update_layout(
        title=title or f"“{track.token}” by layer",
        template="plotly_white",
        height=320,
        margin={"l": 60, "r": 60, "t": 50, "b": 90},
        legend={"orientation": "h", "yanchor": "top", "y": -0.3},
    )
    return fig


def decade_ticks(low: float, high: float) -> list[float]:
    """Powers of ten from the one at or below ``low`` to the one at or above ``high``."""
    lo, hi = math.floor(math.log10(low)), math.ceil(math.log10(max(high, low)))
    return [10.0**e for e in range(lo, max(hi, lo + 1) + 1)]


def percent(p: float) -> str:
    """A probability as a percentage with as many decimals as it needs: 10%, 0.01%."""
    return f"{p * 100:.{max(0, -math.floor(math.log10(p * 100)))}f}%"
