"""The committed elmo-mini agreement and patching results (results/interventions/, made by
the forward-LM code that lived in ``probing/interventions/bilm.py`` before ELMo got its
surface) are re-made value for value by the one implementation of agreement and patching
(``agreement.prepare``/``margins``, ``patching.make_batches``/``patch_pairs``) through
``probing.encoders.elmo_surface``: every number the committed file holds is equal, float
for float, after the JSON round trip."""

from __future__ import annotations

import json

from probing.config import REPO_ROOT

STEM = "elmo-mini__ud-ewt+templates__agreement"


def _common(old: object, new: object, where: str = "") -> None:
    """Every key of ``old`` is in ``new`` with an equal value (``new`` may add keys: the
    patching grid's ``moved`` columns came after the committed run)."""
    if isinstance(old, dict):
        assert isinstance(new, dict), where
        for k, v in old.items():
            assert k in new, f"{where}.{k} missing"
            _common(v, new[k], f"{where}.{k}")
    else:
        assert old == new, where


def test_the_committed_agreement_and_patching_are_re_made_value_for_value(tmp_path):
    from probing.cli.main import main

    # the command results/regenerate.sh records for this step
    argv = ["agreement", "--model", "elmo-mini", "--patch", "--quiet", "--overwrite"]
    assert main([*argv, "--out", str(tmp_path)]) == 0
    committed = REPO_ROOT / "results" / "interventions"
    old = json.loads((committed / f"{STEM}.json").read_text())
    new = json.loads((tmp_path / f"{STEM}.json").read_text())
    assert old["patching"]["heads"] is None and len(old["patching"]["roles"]["z"]) == 3
    _common(old, new)
    assert (tmp_path / f"{STEM}.csv").read_text() == (committed / f"{STEM}.csv").read_text()


def test_the_committed_paired_agreement_differences_are_re_made(tmp_path):
    """results/agreement_paired.py (elmo-mini's forward LM against minilm-l6-mlm on the same
    cases) through the new path: both files equal the committed ones."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    script = REPO_ROOT / "results" / "agreement_paired.py"
    subprocess.run([sys.executable, str(script), "--out", str(tmp_path)], check=True, env=env)
    committed = REPO_ROOT / "results" / "interventions"
    stem = "elmo-mini_vs_minilm-l6-mlm__agreement-paired"
    for ext in ("json", "csv"):
        assert (tmp_path / f"{stem}.{ext}").read_text() == (committed / f"{stem}.{ext}").read_text()
