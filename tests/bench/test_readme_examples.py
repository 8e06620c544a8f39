"""The README's command-line examples write outside the checkout (or into ignored folders),
and bench/readme_examples.py finds and runs exactly them."""

from __future__ import annotations

import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench"))

import readme_examples  # noqa: E402

WRITERS = ("probe", "contextuality", "attention-stats", "probing.analyses.elmo_directions")


def _ignored(path: str) -> bool:
    out = subprocess.run(["git", "check-ignore", "-q", path], cwd=REPO, check=False)
    return out.returncode == 0


def test_every_example_that_writes_names_a_folder_outside_the_checkout():
    commands = [c for c in readme_examples.readme_commands() if readme_examples.runnable(c)]
    assert len(commands) >= 10
    for command in commands:
        argv = shlex.split(command)[2:]
        if not any(w in argv[:2] for w in WRITERS):
            continue
        assert "--out" in argv, f"{command}: writes into the repository's results/ by default"
        out = Path(argv[argv.index("--out") + 1])
        inside = out.is_absolute() and out.resolve().is_relative_to(REPO)
        assert out.is_absolute() and (not inside or _ignored(str(out))), command


def test_the_sweep_example_writes_into_an_ignored_folder():
    spec = tomllib.loads((REPO / "docs" / "examples" / "sweep.toml").read_text("utf-8"))
    out = Path(spec["out"])
    assert out.is_absolute() or _ignored(str(out / "results.csv")), spec["out"]


def test_optional_parts_and_comments_are_left_out():
    commands = readme_examples.readme_commands()
    assert "python -m probing sweep docs/examples/sweep.toml" in commands
    assert all("#" not in c for c in commands)
    assert any("[MASK]" in c for c in commands)
