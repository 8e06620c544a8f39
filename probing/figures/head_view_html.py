"""A self-contained, BertViz-style head view: focus follows the mouse in the browser.

The plotly head view re-runs the page to change focus (1–3 s); here the attention arrays go
into the page as JSON and a few lines of JavaScript redraw on hover, as BertViz's
``head_view`` does. No network: no scripts or fonts are fetched.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import numpy as np

from probing.analyses.attention import AttentionMap
from probing.figures.attention import head_colour

ROW_PX = 22
MIN_WEIGHT = 0.02  # lighter lines are invisible anyway; leaving them out bounds the page size

_TEMPLATE = """<!doctype html><html><head><meta charset="utf-8"><style>
body{margin:0;font:13px system-ui,-apple-system,'Segoe UI',sans-serif;color:#262730}
svg text{cursor:pointer;user-select:none}
svg text.on{font-weight:700;fill:#d62728}
#hint{font-size:12px;color:#6b6b7b;margin:2px 0 6px}
</style></head><body>
<div id="hint">Hover a token to see only its attention (left: what it attends to; right: what
attends to it).</div><svg id="hv"></svg>
<script>
const D = __DATA__;
const n = D.tokens.length, W = 520, left = 150, right = W - 150, row = __ROW__, pad = 10;
const svg = document.getElementById('hv');
svg.setAttribute('width', W); svg.setAttribute('height', pad * 2 + n * row);
const NS = 'http://www.w3.org/2000/svg';
const y = (i) => pad + i * row + row / 2;
const lines = [];
D.lines.forEach(([h, i, j, w]) => {
  const l = document.createElementNS(NS, 'line');
  l.setAttribute('x1', left + 6); l.setAttribute('x2', right - 6);
  l.setAttribute('y1', y(i)); l.setAttribute('y2', y(j));
  l.setAttribute('stroke', D.colours[h]); l.setAttribute('stroke-width', 2);
  l.setAttribute('stroke-opacity', w);
  svg.appendChild(l); lines.push({l, i, j});
});
const labels = [[], []];
D.tokens.forEach((t, i) => [0, 1].forEach((side) => {
  const e = document.createElementNS(NS, 'text');
  e.textContent = t; e.setAttribute('y', y(i) + 4);
  e.setAttribute('x', side ? right : left);
  e.setAttribute('text-anchor', side ? 'start' : 'end');
  e.dataset.i = i; e.dataset.side = side;
  e.addEventListener('mouseenter', () => focus(i, side));
  e.addEventListener('mouseleave', () => focus(D.focus, 0));
  svg.appendChild(e); labels[side].push(e);
}));
function focus(i, side) {
  lines.forEach(({l, i: a, j: b}) => {
    l.style.display = i === null || (side ? b === i : a === i) ? '' : 'none';
  });
  labels.forEach((col, s) => col.forEach((e, k) => e.classList.toggle('on', i !== null && s === side && k === i)));
}
focus(D.focus, 0);
</script></body></html>"""


def head_view_html(
    amap: AttentionMap,
    layer: int,
    heads: Sequence[int],
    focus: int | None = None,
    min_weight: float = MIN_WEIGHT,
) -> str:
    """The head view of ``layer`` (1-based) for ``heads`` as one HTML page with its data.

    Lines are (head, from, to, weight) for weights ≥ ``min_weight``; ``focus`` is the token
    shown alone when the mouse is elsewhere (None: all tokens).
    """
    heads = [h for h in heads if 0 <= h < amap.n_heads]
    w = amap.weights[layer - 1]  # (heads, n, n)
    lines = []
    for k, h in enumerate(heads):
        i, j = np.nonzero(w[h] >= min_weight)
        lines += [
            [k, int(a), int(b), round(float(w[h, a, b]), 3)] for a, b in zip(i, j, strict=True)
        ]
    data = {
        "tokens": list(amap.tokens),
        "colours": [head_colour(h) for h in heads],
        "lines": lines,
        "focus": focus,
    }
    # "</" would end the script element early whatever the JSON says
    text = json.dumps(data).replace("</", "<\\/")
    return _TEMPLATE.replace("__DATA__", text).replace("__ROW__", str(ROW_PX))


def head_view_height(amap: AttentionMap) -> int:
    """Pixels the HTML head view needs (rows plus the hint line)."""
    return amap.n_tokens * ROW_PX + 60
