"""Sweeps: models × tasks × seeds × layers from one TOML spec, on a process pool or Ray.

``python -m probing sweep SPEC`` (:mod:`probing.cli.sweep`) or :func:`run_sweep`; read a
sweep folder back with :func:`load_sweep`. Ray is imported only for ``executor="ray"``.
"""

from probing.sweep.merge import load_sweep, merge
from probing.sweep.runner import SweepReport, run_sweep
from probing.sweep.spec import SweepSpec, load_spec, parse_spec

__all__ = [
    "SweepReport",
    "SweepSpec",
    "load_spec",
    "load_sweep",
    "merge",
    "parse_spec",
    "run_sweep",
]
