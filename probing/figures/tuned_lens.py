"""Logit lens vs tuned lens at one mask: the final answer's rank and the KL to the final
distribution, layer by layer (a :class:`~probing.analyses.tuned_lens.LensReadout`)."""

from __future__ import annotations

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from probing.analyses.tuned_lens import LensReadout

COLOURS = {"logit lens": "#7f7f7f", "tuned lens": "#d62728"}


def lens_comparison_figure(readout: LensReadout, mask: int, title: str = "") -> go.Figure:
    """Two panels over the layers: rank of the final top-1 token (log scale, 1 at the top
    = already the answer) and KL(final ‖ layer) in nats, for both lenses."""
    names = readout.layer_names
    x = list(range(len(names)))
    fig = make_subplots(
        rows=1,
        cols=2,
        horizontal_spacing=0.14,
        subplot_titles=("rank of the final answer", "KL to the final distribution"),
    )
    series = {
        "logit lens": (readout.logit_rank[:, mask], readout.logit_kl[:, mask]),
        "tuned lens": (readout.tuned_rank[:, mask], readout.tuned_kl[:, mask]),
    }
    for lens, (rank, kl) in series.items():
        style = {
            "color": COLOURS[lens],
            "width": 2,
            "dash": "dot" if lens == "logit lens" else "solid",
        }
        fig.add_trace(
            go.Scatter(
                x=x,
                y=rank,
                mode="lines+markers",
                name=lens,
                line=style,
                legendgroup=lens,
                hovertemplate="%{text}: rank %{y}<extra>" + lens + "</extra>",
                text=names,
            ),
            row=1,
            col=1,
        )
        fig.add_trace(
            go.Scatter(
                x=x,
                y=kl,
                mode="lines+markers",
                name=lens,
                line=style,
                legendgroup=lens,
                showlegend=False,
                text=names,
                hovertemplate="%{text}: %{y:.2f} nats<extra>" + lens + "</extra>",
            ),
            row=1,
            col=2,
        )
    fig.update_yaxes(
        type="log", autorange="reversed", dtick=1, title_text="rank (1 = top guess)", row=1, col=1
    )
    fig.update_yaxes(title_text="nats", rangemode="tozero", row=1, col=2)
    fig.update_xaxes(tickvals=x, ticktext=names, tickangle=-40)
    fig.update_layout(
        title={
            "text": title
            or f"Logit lens vs tuned lens: “{readout.final_tokens[mask]}”"
            "<br><sup>the MLM head read at every layer, straight (logit lens) or after the "
            "layer's trained translator (tuned lens)</sup>"
        },
        height=420,
        width=760,
        margin={"l": 70, "r": 20, "t": 100, "b": 110},
        legend={"orientation": "h", "y": -0.38, "x": 0.5, "xanchor": "center"},
        plot_bgcolor="white",
    )
    fig.update_xaxes(showgrid=True, gridcolor="#eee")
    fig.update_yaxes(showgrid=True, gridcolor="#eee")
    return fig
