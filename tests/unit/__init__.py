"""Fast tests of pure functions and small objects: the fast subset (no marker to skip)."""
