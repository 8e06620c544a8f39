"""Run one test case in a fresh pytest process (for cases that set process-wide state)."""

from __future__ import annotations

import os
import subprocess
import sys


def run_case_alone(path: str, case: str, flag: str) -> None:
    """Run ``path::case`` in a child pytest with ``flag`` set (the case skips without it);
    assert that it passed."""
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"{path}::{case}"],
        env={**os.environ, flag: "1"},
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert "1 passed" in proc.stdout
