"""Freed heap memory goes back to the system between sweep steps (glibc's malloc_trim)."""

from __future__ import annotations

import ctypes.util
from pathlib import Path

import numpy as np
import pytest

from probing.heap import release_free_memory


def _anon_mib() -> int:
    for line in Path("/proc/self/status").read_text(encoding="ascii").splitlines():
        if line.startswith("RssAnon:"):
            return int(line.split()[1]) // 1024
    raise LookupError("no RssAnon")


@pytest.mark.skipif(
    not Path("/proc/self/status").exists() or not ctypes.util.find_library("c"),
    reason="Linux with a C library: where the sweep's memory was measured",
)
def test_freed_mid_sized_arrays_stop_counting_after_release():
    # What a sweep does: many mid-sized arrays (a probe's logits and gradients) freed while
    # small objects stay alive between them; glibc keeps the freed pages resident.
    np.ones(4 << 20, np.uint8)  # a freed 4 MB map raises glibc's map threshold above 4 MB
    big, small = [], []
    for _ in range(50):
        big.append(np.ones(4 << 20, np.uint8))
        small.append(np.ones(64, np.uint8).tobytes() * 16)
    del big
    held = _anon_mib()
    assert release_free_memory() is True
    assert _anon_mib() < held - 100, (held, _anon_mib())
