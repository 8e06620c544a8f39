"""Probe-run defaults, in a module without heavy imports: ``python -m probing probe --help``
shows them without loading scikit-learn, pandas or torch."""

from __future__ import annotations

DEFAULT_MAX_TRAIN_SENTENCES = 2000
DEFAULT_MAX_TRAIN_WORDS = 20_000
# C grid of the linear probes, from strong to weak regularisation: wide enough that the
# choice on dev is not at an edge for these tasks (reported in meta when it is).
PROBE_CS: tuple[float, ...] = (0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1.0)
