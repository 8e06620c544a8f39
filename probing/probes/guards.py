"""Size checks made before a probe is fitted, so that an oversized request fails in
milliseconds with a clear message instead of holding the server for minutes.

A linear probe has ``n_labels x dim`` weights and its fit time and memory grow with both: a
file with 20,000 distinct tags would make a 20,000-way classifier on every layer.
The caps are ``config.limits().max_labels`` and ``max_probe_params``.
"""

from __future__ import annotations

from collections.abc import Iterable

from probing import config
from probing.errors import ResourceLimitError


def check_probe_size(labels: Iterable[str] | int, dim: int, what: str = "The probe") -> int:
    """Raise unless a linear probe over ``labels`` (or that many) distinct labels on
    ``dim``-dimensional vectors fits the limits in force; return the label count.

    Raises:
        ResourceLimitError: too many labels or weights; the message gives both numbers.
    """
    n = labels if isinstance(labels, int) else len(set(labels))
    lim = config.limits()
    if n > lim.max_labels:
        raise ResourceLimitError(
            f"{what} would have to tell {n:,} different labels apart; this server allows at "
            f"most {lim.max_labels:,}. Use a tag set with fewer labels (e.g. UPOS has 17)."
        )
    params = n * int(dim)
    if params > lim.max_probe_params:
        raise ResourceLimitError(
            f"{what} would have {params:,} weights ({n:,} labels x {dim} dimensions); this "
            f"server allows at most {lim.max_probe_params:,}. Use fewer labels."
        )
    return n
