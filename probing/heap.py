"""Give freed heap memory back to the operating system (glibc), between big steps.

glibc keeps memory that Python, numpy and torch free in its arenas for reuse, and returns
it only from the top of the heap. A probing sweep allocates and frees many mid-sized
arrays (a probe's logits and gradients, 14 MB each at 200k words x 17 tags), which leaves a
few hundred MB free but resident: measured 270-320 MB in a full UD-EWT sweep, at the
stage where the scalar mix makes its largest allocation. ``malloc_trim`` hands it back.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
from collections.abc import Callable


@functools.cache
def _trim() -> Callable[[int], int] | None:  # None where there is no glibc
    name = ctypes.util.find_library("c")
    if not name:
        return None
    try:
        fn = ctypes.CDLL(name).malloc_trim
    except (OSError, AttributeError):  # musl, macOS, Windows: nothing to trim
        return None
    fn.argtypes, fn.restype = [ctypes.c_size_t], ctypes.c_int
    return fn


def release_free_memory() -> bool:
    """Return the heap's free pages to the system; False where the C library cannot."""
    fn = _trim()
    return bool(fn(0)) if fn is not None else False
