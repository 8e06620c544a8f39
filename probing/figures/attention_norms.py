"""Raw vs norm-weighted shares of attention per layer (a :class:`ShareComparison`)."""

from __future__ import annotations

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from probing.analyses.attention_norms import ShareComparison

TITLES = {"sep": "to [SEP]", "punct": 'to punctuation ("." ",")', "cls": "to [CLS]"}
COLOURS = {"raw": "#1f77b4", "norm": "#d62728"}
LABELS = {"raw": "raw weight α", "norm": "norm-weighted ‖αf(x)‖"}


def _band(colour: str) -> str:
    r, g, b = (int(colour[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgba({r},{g},{b},0.18)"


def share_comparison_figure(result: ShareComparison, dataset: str = "UD-EWT dev") -> go.Figure:
    """One panel per statistic: layer on x, share (mean over heads) on y, raw and
    norm-weighted lines with their 95 % document-bootstrap bands."""
    t = result.table
    stats = [s for s in TITLES if s in set(t.statistic)]
    fig = make_subplots(
        rows=1, cols=len(stats), subplot_titles=[TITLES[s] for s in stats], horizontal_spacing=0.08
    )
    for c, stat in enumerate(stats, start=1):
        part = t[t.statistic == stat]
        x = part.layer.tolist()
        for kind in ("raw", "norm"):
            colour = COLOURS[kind]
            fig.add_trace(
                go.Scatter(
                    x=x + x[::-1],
                    y=part[f"{kind}_hi"].tolist() + part[f"{kind}_lo"].tolist()[::-1],
                    mode="lines",
                    fill="toself",
                    fillcolor=_band(colour),
                    line={"width": 0},
                    hoverinfo="skip",
                    showlegend=False,
                ),
                row=1,
                col=c,
            )
            fig.add_trace(
                go.Scatter(
                    x=x,
                    y=part[kind],
                    mode="lines+markers",
                    name=LABELS[kind],
                    line={"color": colour, "width": 2},
                    legendgroup=kind,
                    showlegend=c == 1,
                    hovertemplate=f"layer %{{x}}: %{{y:.3f}}<extra>{LABELS[kind]}</extra>",
                ),
                row=1,
                col=c,
            )
        fig.update_xaxes(title_text="layer", dtick=1, row=1, col=c)
        fig.update_yaxes(rangemode="tozero", row=1, col=c)
    fig.update_yaxes(title_text="share of the layer's attention (mean over heads)", row=1, col=1)
    fig.update_layout(
        title={
            "text": f"Where attention goes, raw vs norm-weighted: {result.model}"
            f"<br><sup>{result.n_sentences} {dataset} sentences in {result.n_documents} documents;"
            f" bands: 95 % document bootstrap ({result.n_boot} draws)</sup>"
        },
        height=430,
        width=max(640, 330 * len(stats)),
        margin={"l": 70, "r": 20, "t": 100, "b": 90},
        legend={"orientation": "h", "y": -0.2, "x": 0.5, "xanchor": "center"},
        plot_bgcolor="white",
    )
    fig.update_xaxes(showgrid=True, gridcolor="#eee")
    fig.update_yaxes(showgrid=True, gridcolor="#eee")
    return fig
