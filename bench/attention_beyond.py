"""Issue 30 / 32 timings: the Attention model view's message at the input limit, the
Attention and Fill Mask pages' warm interactions, attention flow at its length limit.

    OMP_WAIT_POLICY=PASSIVE python bench/attention_beyond.py

Prints one Markdown table row per measurement (docs/benchmarks.md); every time is the
median of ``--repeat`` runs after one warm-up.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
LONG = " ".join(["The quick brown fox jumps over the lazy dog near the river bank."] * 40)


def median_seconds(fn: Callable[[], object], repeat: int) -> float:
    fn()  # warm
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def row(what: str, value: str, note: str = "") -> None:
    print(f"| {what} | {value} | {note} |")


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--browser", action="store_true", help="also time the model view in Chromium")
    args = p.parse_args(argv)
    os.environ.pop("CONTEXTLENS_DEMO", None)

    import numpy as np
    from streamlit.testing.v1 import AppTest

    import probing
    from probing.analyses.attention import attention_view, encode_attention
    from probing.analyses.attention_norms import norm_weighted, value_norms_of
    from probing.analyses.rollout import flow_weights, rollout
    from probing.figures.attention import model_view_figure

    print(f"load average at start: {os.getloadavg()[0]:.1f}")
    print("| measurement | median | notes |\n|---|---|---|")
    enc = probing.load_encoder("minilm-l6")
    amap = encode_attention(enc, LONG[:2000])
    for name, m in (
        ("raw", amap),
        ("norm-weighted", norm_weighted(amap, value_norms_of(enc, amap))),
        ("rollout", rollout(amap)),
    ):
        view = attention_view(m, "piece")
        for cells, label in ((1_500_000, "before (1.5 M cells)"), (None, "now (150 k cells)")):
            fig = lambda v=view, c=cells: (  # noqa: E731
                model_view_figure(v, (1, 0)) if c is None else model_view_figure(v, (1, 0), c)
            )
            secs = median_seconds(lambda f=fig: f().to_json(), args.repeat)
            size = len(fig().to_json())
            row(
                f"model view, 2,000 chars ({view.n_tokens} pieces), {name}, {label}",
                f"{size / 1e6:.2f} MB, {secs:.2f} s to build + serialise",
            )
    weights = np.random.default_rng(0).random((6, 12, 24, 24))
    weights /= weights.sum(-1, keepdims=True)
    row(
        "attention flow, 24 tokens, layer 6, whole map (576 max-flows)",
        f"{median_seconds(lambda: flow_weights(weights, 6), args.repeat):.2f} s",
    )
    row(
        "attention flow, 24 tokens, layer 6, one token (24 max-flows)",
        f"{median_seconds(lambda: flow_weights(weights, 6, query=3), args.repeat):.3f} s",
    )

    page = AppTest.from_file(str(REPO / "pages" / "3_Attention.py"), default_timeout=300).run()
    steps = [
        ("weights -> norm-weighted", lambda: page.radio(key="attn_weights").set_value("norm-weighted")),
        ("weights -> rollout", lambda: page.radio(key="attn_weights").set_value("rollout")),
        ("weights -> raw", lambda: page.radio(key="attn_weights").set_value("raw")),
        ("view -> Rollout & flow", lambda: page.radio(key="attn_view").set_value("Rollout & flow")),
        ("Rollout & flow: layer 3", lambda: page.selectbox(key="attn_rf_layer").set_value(3)),
        ("view -> Head view", lambda: page.radio(key="attn_view").set_value("Head view")),
        ("head view: two focus tokens", lambda: page.multiselect(key="attn_focus").set_value([2, 6])),
    ]  # fmt: skip
    for _label, action in steps:
        action().run()  # warm this state once
    for label, action in steps:
        start = time.perf_counter()
        action().run()
        row(f"Attention page (AppTest, warm): {label}", f"{time.perf_counter() - start:.2f} s")
    fill = AppTest.from_file(str(REPO / "pages" / "2_Fill_Mask.py"), default_timeout=300).run()
    text = "The capital of France is [MASK] and it is very [MASK]."
    fill.text_area(key="fill_mask_text").input(text).run()
    start = time.perf_counter()
    fill.text_area(key="fill_mask_text").input(text.replace("very", "quite")).run()
    row(
        "Fill Mask page (AppTest, warm): new text, 2 masks, with both lenses",
        f"{time.perf_counter() - start:.2f} s",
    )
    if args.browser:
        browser_model_view()
    print(f"load average at end: {os.getloadavg()[0]:.1f}")


def browser_model_view() -> None:
    """Seconds from opening the Attention page's model view on a 2,000-character input (a
    permalink) until both figures are drawn and the app is idle, in Debian's Chromium."""
    from urllib.parse import quote

    from playwright.sync_api import sync_playwright

    from tests.browser import CHROMIUM, CHROMIUM_ARGS, streamlit_server, wait_for_app

    with streamlit_server() as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.set_default_timeout(600_000)
        link = f"{url}/Attention?view=Model%20view&sentence={quote(LONG[:2000])}"
        for attempt in ("cold", "warm"):
            start = time.perf_counter()
            page.goto(link)
            wait_for_app(page, timeout_ms=600_000)
            page.wait_for_function("document.querySelectorAll('.js-plotly-plot').length >= 2")
            row(
                f"browser: model view at 2,000 characters, {attempt} (page open to drawn)",
                f"{time.perf_counter() - start:.1f} s",
                "includes 1.5 s of idle wait",
            )
        browser.close()


if __name__ == "__main__":
    main()
