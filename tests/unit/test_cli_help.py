"""`python -m probing --help` speaks to a user, lists every probing task, and a command's
--help parses before anything heavy is imported (issue 33: 10.5 s for `probe --help`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from probing.probes.tasks import TASKS

HEAVY = ("sklearn", "torch", "pandas", "transformers", "scipy")


def _help(*command: str) -> tuple[str, list[str]]:
    """The help text of ``python -m probing COMMAND --help`` and the heavy modules it loaded."""
    code = (
        "import contextlib, io, json, sys\n"
        "from probing.cli.main import main\n"
        "out = io.StringIO()\n"
        "with contextlib.redirect_stdout(out):\n"
        "    try:\n"
        f"        main({list(command)!r} + ['--help'])\n"
        "    except SystemExit:\n"
        "        pass\n"
        f"heavy = [m for m in {HEAVY!r} if m in sys.modules]\n"
        "print(json.dumps({'text': out.getvalue(), 'heavy': heavy}))\n"
    )
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=True,
    )
    result = json.loads(done.stdout.strip().splitlines()[-1])
    return result["text"], result["heavy"]


def test_top_level_help_is_for_users_and_lists_every_task():
    text, heavy = _help()
    assert "ContextLens from the command line" in text
    assert "only dispatches" not in text and "add_arguments" not in text  # no developer notes
    flat = " ".join(text.split())
    for task in TASKS:
        assert task in flat, task
    assert not heavy, heavy


def test_probe_help_parses_before_heavy_imports():
    text, heavy = _help("probe")
    assert "--sentence-pooling" in text and "--overwrite" in text
    assert not heavy, f"`probe --help` imported {heavy}"


def test_training_help_parses_before_torch_is_imported():
    text, heavy = _help("train-elmo")
    assert "--max-tokens" in text and "--export-dir" in text
    assert not heavy, f"`train-elmo --help` imported {heavy}"
    text, heavy = _help("train-mlm-head")
    assert "--unfreeze-top" in text and "--eval-masks" in text
    assert not heavy, f"`train-mlm-head --help` imported {heavy}"
