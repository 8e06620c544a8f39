"""A followed token's rank and probability per layer at one mask (see analyses.token_track)."""

from __future__ import annotations

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from probing.analyses.token_track import TokenTrack


def token_track_figure(track: TokenTrack, mask: int, title: str = "") -> go.Figure:
    """Rank (log scale, 1 at the top) and probability of the followed token, per layer."""
    x = list(range(len(track.layer_names)))
    fig = make_subplots(specs=[[{"secondary_y": True}]])
    fig.add_trace(
        go.Scatter(
            x=x, y=track.rank[mask], mode="lines+markers", name="rank",
            customdata=list(track.layer_names),
            hovertemplate="%{customdata}: rank %{y}<extra></extra>",
        ),
        secondary_y=False,
    )  # fmt: skip
    fig.add_trace(
        go.Scatter(
            x=x, y=track.probability[mask], mode="lines+markers", name="probability",
            line={"dash": "dot"}, customdata=list(track.layer_names),
            hovertemplate="%{customdata}: p %{y:.1%}<extra></extra>",
        ),
        secondary_y=True,
    )  # fmt: skip
    fig.update_yaxes(
        type="log", autorange="reversed", title_text="rank (1 = top)", secondary_y=False
    )
    fig.update_yaxes(
        tickformat=".0%", title_text="probability", rangemode="tozero", secondary_y=True
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
