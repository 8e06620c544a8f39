"""Progress bars of the CLI commands: one tqdm bar per stage, on stderr."""

from __future__ import annotations

import sys
from collections.abc import Callable


def progress_bars(quiet: bool) -> tuple[dict, Callable[[str, int, int], None]]:
    """(the open tqdm bars, a ``(stage, done, total)`` callback that draws them)."""
    from tqdm.auto import tqdm

    bars: dict[str, tqdm] = {}

    def progress(stage: str, done: int, total: int) -> None:
        if quiet:
            return
        bar = bars.get(stage)
        if bar is None:
            unit = "fit" if stage == "fit" else "sent"
            bar = bars[stage] = tqdm(total=total, desc=stage, unit=unit, file=sys.stderr)
        bar.total = total
        bar.update(done - bar.n)
        if done >= total:
            bar.close()

    return bars, progress
