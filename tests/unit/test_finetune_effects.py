"""What the fine-tuning comparison says is written from the engine (claim_sentences), the
layer shift of a model against itself is none, and the re-make script refuses the shipped
folder without --overwrite."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from probing.analyses.finetune_effects import claim_sentences, doc_groups, stack_seeds, verdict
from probing.probes.compare import Engine, SentenceCounts, with_holm

ROOT = Path(__file__).resolve().parents[2]


def _cell(right: np.ndarray, seeds=(0,)) -> SentenceCounts:
    """Per-sentence (wrong, right) counts, one row per seed."""
    right = np.atleast_2d(right).astype(float)
    return SentenceCounts("accuracy", np.stack([10 - right, right], axis=-1), tuple(seeds))


def test_sentences_say_only_what_the_engine_calls():
    rng = np.random.default_rng(0)
    base = rng.integers(3, 8, size=60)
    engine = Engine(n_boot=500, seed=0)
    rep = lambda name, c: engine.replicates(name, c, "u")  # noqa: E731
    tuned = _cell(np.stack([np.minimum(base + 3, 10)] * 3), seeds=(0, 1, 2))
    same = _cell(np.stack([base, base, base]), seeds=(0, 1, 2))
    diffs = with_holm(
        [
            engine.compare(rep("tuned", tuned), rep("before", _cell(base))),
            engine.compare(rep("same", same), rep("before", _cell(base))),
            engine.compare(rep("before", _cell(base)), rep("tuned", tuned)),
        ]
    )
    assert [verdict(d) for d in diffs] == ["higher", "not distinguishable", "lower"]
    text = claim_sentences(diffs)
    assert text[0].startswith("tuned is higher than before (first − second +")
    assert text[1].startswith("same and before are not distinguishable")
    assert f"{100 * diffs[0].value:+.2f} [{100 * diffs[0].ci_low:+.2f}" in text[0]


def test_seeds_stack_and_documents_group():
    a, b = _cell(np.arange(5)), _cell(np.arange(5)[::-1])
    both = stack_seeds([a, b], (0, 1))
    assert both.counts.shape == (2, 5, 2) and both.seeds == (0, 1)
    group, n = doc_groups(["b", "a", "b", "c"])
    assert n == 3 and list(group) == [1, 0, 1, 2]


def test_the_remake_script_refuses_the_shipped_folder():
    out = subprocess.run(
        [
            sys.executable,
            str(ROOT / "results" / "finetune" / "make.py"),
            "--out",
            "results/finetune",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 2
    assert out.stderr.startswith("error: ") and "--overwrite" in out.stderr
    assert "Traceback" not in out.stderr


def _make_module():
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "finetune_make", ROOT / "results/finetune/make.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_remake_keeps_its_pieces_as_safetensors_and_json(tmp_path):
    """make.py's per-piece checkpoints read back what was kept, written without pickle."""
    make = _make_module()
    cells = {"layer 0": _cell(np.arange(5)), "layer 1": _cell(np.stack([np.arange(5)] * 2), (0, 1))}
    calls = []

    def once(value):
        return lambda: calls.append(1) or value

    for name, value in (("cells", cells), ("cell", cells["layer 1"]), ("shift", ([1.0], [0.5]))):
        first, _ = make.memo(tmp_path, name, once(value))
        again, wall = make.memo(tmp_path, name, once(value))  # read back, fn not called
        assert wall >= 0.0
        for got in (first, again):
            if name == "shift":
                assert got == [[1.0], [0.5]]
                continue
            for k, c in got.items() if name == "cells" else [("", got)]:
                want = cells[k] if k else cells["layer 1"]
                assert np.array_equal(c.counts, want.counts) and c.seeds == want.seeds
    assert len(calls) == 3
    assert sorted(p.suffix for p in tmp_path.iterdir()) == [".json", ".safetensors", ".safetensors"]
    assert "pickle" not in (ROOT / "results/finetune/make.py").read_text(encoding="utf-8")


@pytest.mark.slow
def test_a_model_against_itself_moved_nowhere():
    from probing.analyses.finetune_effects import layer_shift
    from probing.models.registry import load_encoder

    enc = load_encoder("minilm-l6")
    sents = [
        ["The", "bank", "raised", "its", "rates", "."],
        ["We", "sat", "on", "the", "bank", "."],
    ]
    cka, dist = layer_shift(enc, enc, sents)
    assert len(cka) == len(dist) == 7
    np.testing.assert_allclose(cka, 1.0, atol=1e-6)
    np.testing.assert_allclose(dist, 0.0, atol=1e-6)
