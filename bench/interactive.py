"""Latency of the interactive paths, as a user of each page feels them.

- Attention: a 60-word input through the default model, word-level view, head view and
  model view figures, and the whole page script (streamlit AppTest, model already loaded).
- Fill-mask: one two-mask sentence, top-k and the layer-by-layer view.
- UMAP: 2,000 points × 384 dims, cold (numba compiles) and warm, plus PCA.
- ``--pages N``: every page's whole script with its default inputs, N warm AppTest runs
  after one cold run each: p50 and p95 (what "no page gets slower" is checked against);
  ``--model NAME`` picks that model in the sidebar first (e.g. ``mpnet-base``, 144 heads on
  the Attention page), ``--only TEXT`` times only the pages whose file name contains it.

Prints a markdown table for docs/benchmarks.md.

    OMP_WAIT_POLICY=PASSIVE python bench/interactive.py [--pages 20] [--only-pages]
        [--model mpnet-base] [--only Attention]
"""

from __future__ import annotations

import os
import platform
import statistics
import sys
import time
from datetime import date
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

SENTENCE_60 = (
    "The committee said on Friday that the new bridge across the river would open next "
    "spring , after two years of delays caused by floods , funding disputes and a long "
    "argument about whether the old stone bank on the east side should be kept as it was "
    "or rebuilt to carry the heavier traffic that the city now expects ."
)


def timed(fn, repeat: int = 3) -> tuple[float, object]:
    """Median wall seconds over ``repeat`` calls, and the last result."""
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def _pages() -> tuple[str, ...]:
    """The home page and every page the sidebar lists (read from the app's own list, so a
    new page is timed without editing this file)."""
    from ui.navigation import PAGES as APP_PAGES

    return ("app.py", *(page.script for page in APP_PAGES))


def page_latencies(
    n: int, model: str | None = None, only: str | None = None
) -> list[tuple[str, str]]:
    """p50 / p95 wall seconds of each page's script over ``n`` warm AppTest runs, with
    ``model`` picked in the sidebar (None: each page's default); ``only``: pages whose file
    name contains it."""
    from streamlit.testing.v1 import AppTest

    rows = []
    picked = f", model {model}" if model else ""
    for page in _pages():
        if only and only not in page:
            continue
        path = ROOT / page
        if not path.exists():
            continue
        times = []
        for i in range(n + 1):  # run 0 is cold (imports, model loads): not counted
            t0 = time.perf_counter()
            at = AppTest.from_file(str(path), default_timeout=600)
            if model:
                at.session_state["models"] = [model]
            at.run()
            if i:
                times.append(time.perf_counter() - t0)
            assert not at.exception, (page, at.exception)
        p50, p95 = np.percentile(times, [50, 95])
        rows.append(
            (
                f"page `{page}` (AppTest, warm, {n} runs{picked})",
                f"p50 {p50:.2f} s, p95 {p95:.2f} s",
            )
        )
        print(rows[-1], flush=True)
    return rows


def main() -> int:
    args = sys.argv[1:]
    n_pages = int(args[args.index("--pages") + 1]) if "--pages" in args else 0
    model = args[args.index("--model") + 1] if "--model" in args else None
    only = args[args.index("--only") + 1] if "--only" in args else None
    rows: list[tuple[str, str]] = page_latencies(n_pages, model, only) if n_pages else []
    if "--only-pages" not in args:
        rows += component_latencies()
    load = os.getloadavg()[0]
    print(
        f"\n{date.today()} · {os.cpu_count()} cores, {platform.machine()}, no GPU · load avg {load:.1f}\n"
    )
    print("| what | median of 3 (pages: p50, p95) |\n|---|---|")
    for what, value in rows:
        print(f"| {what} | {value} |")
    return 0


def component_latencies() -> list[tuple[str, str]]:
    """The attention, fill-mask and UMAP paths, median of 3 each."""
    import probing
    from probing.analyses.attention import attention_view, encode_attention
    from probing.analyses.fill_mask import fill_mask, fill_mask_by_layer
    from probing.analyses.sense_geometry import project, warm_up_umap
    from probing.figures.attention import head_view_figure, model_view_figure

    rows: list[tuple[str, str]] = []
    n_words = len(SENTENCE_60.split())
    enc = probing.load_encoder("minilm-l6")
    enc.encode("warm up")

    t, amap = timed(lambda: encode_attention(enc, SENTENCE_60))
    rows.append((f"attention: encode {n_words} words with attentions", f"{t:.2f} s"))
    t, view = timed(lambda: attention_view(amap, "word"))
    rows.append(("attention: word-level aggregation", f"{t * 1000:.0f} ms"))
    t, _ = timed(lambda: head_view_figure(view, layer=3, heads=[0, 1, 2, 3], focus=8))
    rows.append(("attention: head-view figure", f"{t * 1000:.0f} ms"))
    t, _ = timed(lambda: model_view_figure(view))
    rows.append(("attention: model-view figure (6 × 12 heads)", f"{t * 1000:.0f} ms"))

    from streamlit.testing.v1 import AppTest

    def attention_page():
        at = AppTest.from_file(str(ROOT / "pages" / "3_Attention.py"), default_timeout=300)
        at.session_state["attn_text"] = SENTENCE_60
        return at.run()

    attention_page()  # first run loads the page's imports
    t, at = timed(attention_page)
    assert not at.exception, at.exception
    rows.append((f"attention page script, {n_words}-word input (AppTest)", f"{t:.2f} s"))

    mlm = probing.load_encoder("minilm-l6-mlm")
    text = "I went [MASK] the store to buy some [MASK] ."
    fill_mask(mlm, text)
    t, _ = timed(lambda: fill_mask(mlm, text, top_k=10))
    rows.append(("fill-mask: 2 masks, top-10", f"{t * 1000:.0f} ms"))
    t, _ = timed(lambda: fill_mask_by_layer(mlm, text, top_k=5))
    rows.append(("fill-mask: layer-by-layer view", f"{t * 1000:.0f} ms"))

    x = np.random.default_rng(0).normal(size=(2000, 384)).astype(np.float32)
    t0 = time.perf_counter()
    warm_up_umap()
    rows.append(("UMAP: one-off numba warm-up", f"{time.perf_counter() - t0:.1f} s"))
    t, _ = timed(lambda: project(x, "umap"))
    rows.append(("UMAP: 2,000 × 384 points, warm", f"{t:.2f} s"))
    t, _ = timed(lambda: project(x, "pca"))
    rows.append(("PCA: 2,000 × 384 points", f"{t:.2f} s"))
    return rows


if __name__ == "__main__":
    sys.exit(main())
