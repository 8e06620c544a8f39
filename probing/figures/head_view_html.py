"""A self-contained, BertViz-style head view: focus follows the mouse in the browser.

The plotly head view re-runs the page to change focus (1–3 s); here the attention arrays go
into the page as JSON and a few lines of JavaScript redraw on hover, as BertViz's
``head_view`` does. No network: no scripts or fonts are fetched.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from probing.analyses.attention import AttentionMap
from probing.figures.attention import focus_rows, head_colour

ROW_PX = 22
MIN_WEIGHT = 0.02  # lighter lines are invisible anyway; leaving them out bounds the page size
# Tokens drawn at once: beyond this the page offers a window (a 500-piece input would be an
# 11,000-pixel frame with ~100,000 lines, slow to draw and impossible to read).
MAX_TOKENS = 80

_TEMPLATE = """<!doctype html><html><head><meta charset="utf-8"><style>
body{margin:0;font:13px system-ui,-apple-system,'Segoe UI',sans-serif;color:#262730}
svg text{cursor:pointer;user-select:none}
svg text.on{font-weight:700;fill:#d62728}
svg text.sel{font-weight:700}
#hint{font-size:12px;color:#6b6b7b;margin:2px 0 6px}
#key{font-size:12px;margin:0 0 2px}
#key span{margin-right:12px;white-space:nowrap}
#key i{display:inline-block;width:14px;height:4px;margin:0 4px 3px 0;vertical-align:middle}
</style></head><body>
<div id="key"></div><div id="hint"></div><svg id="hv"></svg>
<script>
const D = __DATA__;
const n = D.tokens.length, W = 600, left = 150, right = W - 230, row = __ROW__, pad = 10;
const svg = document.getElementById('hv');
svg.setAttribute('width', W); svg.setAttribute('height', pad * 2 + Math.max(n, 1) * row);
const NS = 'http://www.w3.org/2000/svg';
const y = (i) => pad + i * row + row / 2;
document.getElementById('hint').textContent = D.hint;
// The key: which colour is which head (the lines carry no other name).
const key = document.getElementById('key');
D.key.forEach(([name, colour]) => {
  const s = document.createElement('span'), i = document.createElement('i');
  i.style.background = colour; s.appendChild(i); s.appendChild(document.createTextNode(name));
  key.appendChild(s);
});
// Summed attention of the selected tokens: a bar behind each attended token.
if (D.summed) D.summed.forEach((v, j) => {
  const r = document.createElementNS(NS, 'rect');
  r.setAttribute('x', right - 4); r.setAttribute('y', y(j) - row / 2 + 2);
  r.setAttribute('width', Math.max(0, v) * 150); r.setAttribute('height', row - 4);
  r.setAttribute('fill', '#d62728'); r.setAttribute('fill-opacity', 0.18);
  const t = document.createElementNS(NS, 'title'); t.textContent = v.toFixed(3); r.appendChild(t);
  svg.appendChild(r);
});
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
  e.addEventListener('mouseenter', () => focus([i], side));
  e.addEventListener('mouseleave', () => focus(D.focus, 0));
  svg.appendChild(e); labels[side].push(e);
}));
function focus(sel, side) {
  const on = new Set(sel);
  lines.forEach(({l, i: a, j: b}) => {
    l.style.display = on.size === 0 || on.has(side ? b : a) ? '' : 'none';
  });
  labels.forEach((col, s) => col.forEach((e, k) => e.classList.toggle('on', s === side && on.has(k))));
}
focus(D.focus, 0);
</script></body></html>"""


def head_view_html(
    amap: AttentionMap,
    layer: int,
    heads: Sequence[int],
    focus: int | Sequence[int] | None = None,
    min_weight: float = MIN_WEIGHT,
    head_names: Sequence[str] | None = None,
) -> str:
    """The head view of ``layer`` (1-based) for ``heads`` as one HTML page with its data.

    Lines are (head, from, to, weight) for weights ≥ ``min_weight``; ``focus`` is the token
    or tokens shown when the mouse is elsewhere (None or empty: all tokens). With focus
    tokens, a bar behind each attended token shows their attention summed (over the focus
    tokens; mean over the chosen heads). A key above names each line colour: ``head h``, or
    ``head_names[h]`` where given (a rollout map's one "head" is no head).
    """
    heads = [h for h in heads if 0 <= h < amap.n_heads]
    chosen = focus_rows(focus, amap.n_tokens)
    w = amap.weights[layer - 1]  # (heads, n, n)
    lines = []
    for k, h in enumerate(heads):
        i, j = np.nonzero(w[h] >= min_weight)
        lines += [
            [k, int(a), int(b), round(float(w[h, a, b]), 3)] for a, b in zip(i, j, strict=True)
        ]
    summed = None
    if chosen and heads:
        summed = [round(float(v), 4) for v in w[heads][:, chosen].sum(axis=1).mean(axis=0)]
    names = ", ".join(amap.tokens[i] for i in chosen[:6]) + (" …" if len(chosen) > 6 else "")
    hint = (
        f"Selected: {names}. Bars on the right: their attention summed (mean over the heads "
        "shown). Hover a token to see only its attention."
        if chosen
        else "Hover a token to see only its attention (left: what it attends to; right: what "
        "attends to it)."
    )
    data = {
        "tokens": list(amap.tokens),
        "colours": [head_colour(h) for h in heads],
        "key": [
            [head_names[h] if head_names and h < len(head_names) else f"head {h}", head_colour(h)]
            for h in heads
        ],
        "lines": lines,
        "focus": chosen,
        "summed": summed,
        "hint": hint,
    }
    # "</" would end the script element early whatever the JSON says
    text = json.dumps(data).replace("</", "<\\/")
    return _TEMPLATE.replace("__DATA__", text).replace("__ROW__", str(ROW_PX))


def token_window(amap: AttentionMap, start: int, size: int = MAX_TOKENS) -> AttentionMap:
    """Tokens ``start`` … ``start + size − 1`` of ``amap`` with the attention among them.

    Rows are not renormalised: attention to tokens outside the window is simply not drawn.
    """
    start = max(0, min(start, max(0, amap.n_tokens - size)))
    keep = slice(start, start + size)
    return replace(
        amap,
        tokens=amap.tokens[keep],
        weights=np.ascontiguousarray(amap.weights[..., keep, keep]),
        word_ids=amap.word_ids[keep],
        segments=amap.segments[keep],
        token_type_ids=None if amap.token_type_ids is None else amap.token_type_ids[keep],
    )


def head_view_height(amap: AttentionMap) -> int:
    """Pixels the HTML head view needs (rows, the hint line and up to two lines of key)."""
    return max(1, amap.n_tokens) * ROW_PX + 105
