"""What ``probe`` checks after parsing and before reading any data: the model loads, the
layers asked for exist in it, and a long run says how long (the cost model's estimate)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from probing.errors import ContextLensError, InvalidArgumentError
from probing.probes.settings import ProbeSettings
from probing.user_paths import read_text

if TYPE_CHECKING:
    from probing.encoders.base import Encoder

LONG_RUN_S = 120.0  # runs estimated longer than this are announced before they start


def check_layers(layers: list[int] | None, n_layers: int, model: str) -> None:
    """Raise when a layer is not one of the model's ``0..n_contextual_layers`` (or ``-1`` … from the top).

    Raises:
        InvalidArgumentError: naming the argument, the model and its valid range.
    """
    n_all = n_layers + 1
    bad = [x for x in layers or [] if not -n_all <= x < n_all]
    if bad:
        raise InvalidArgumentError(
            f"--layers: {model} has layers 0 to {n_layers} (or -{n_all} to -1 counted from "
            f"the top), not {bad[0]}."
        )


def estimate(encoder: Encoder, settings: ProbeSettings) -> tuple[float, float] | None:
    """(extraction s, fitting s) of the run of ``settings``, from ``results/run_costs.json``
    (None when the model and task were never measured): :func:`probing.probes.cost.estimate_seconds`."""
    from probing.probes.cost import estimate_seconds

    return estimate_seconds(encoder, settings)


def config_layers(model: str) -> int | None:
    """The model's layer count read from its config file without loading it (embedded
    models and local folders), or None when only loading it would tell."""
    from probing.models.embedded import ELMO_MINI_DIR, minilm_dir

    try:
        folder = {
            "minilm-l6": minilm_dir,
            "minilm-l6-mlm": minilm_dir,
            "elmo-mini": lambda: ELMO_MINI_DIR,
        }.get(model, lambda: Path(model))()
        # read_text: a FIFO or device named config.json is refused, not read (it would block)
        if (folder / "options.json").is_file():  # ELMo: the token layer + the LSTM layers
            options = json.loads(read_text(folder / "options.json", "The options file"))
            return int(options["lstm"]["n_layers"])
        if (folder / "config.json").is_file():
            config = json.loads(read_text(folder / "config.json", "The config file"))
            return int(config["num_hidden_layers"])
    except (OSError, ValueError, KeyError, TypeError, RecursionError, ContextLensError):
        return None  # loading the model says what is wrong
    return None


def preflight(args: argparse.Namespace, settings: ProbeSettings | str) -> None:
    """Check ``--layers`` against the model (from its config when it has one, else loaded),
    load it, and print the estimate of a long run (to stderr); all before any data is read.
    ``settings``: the run's (a data-set name: those of ``args`` on that data set)."""
    if isinstance(settings, str):
        settings = ProbeSettings.from_args(args).replace(dataset=settings)
    if settings.layers and (n := config_layers(settings.model)) is not None:
        check_layers(settings.layers, n, settings.model)
    from probing.models.registry import load_encoder

    encoder = load_encoder(settings.model)
    check_layers(settings.layers, int(encoder.info.n_contextual_layers), encoder.info.name)
    try:
        est = estimate(encoder, settings)
    except Exception:  # an estimate is a courtesy; the run says what is wrong
        return
    if est is not None and sum(est) > LONG_RUN_S:
        print(
            f"note: this run takes about {_duration(sum(est))} on 2 CPU cores "
            f"({_duration(est[0])} extracting features, {_duration(est[1])} fitting; estimate "
            "from results/run_costs.json, longer on a busy machine). Ctrl-C stops it; "
            "extracted features stay cached.",
            file=sys.stderr,
        )


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"
