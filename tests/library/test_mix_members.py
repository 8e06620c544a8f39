"""Scalar mixes against their best member on the same training words, seeds folded in
(issue 27; results/mix_members.py, committed under results/mixes/)."""

from __future__ import annotations

import json

import pytest

from probing import config
from probing.probes.compare import Engine, mix_vs_best_member
from probing.probes.reapply import load_counts

MIXES = config.REPO_ROOT / "results" / "mixes"
STEMS = ("minilm-l6__ud-ewt__pos", "elmo-mini__ud-ewt__pos")


@pytest.mark.parametrize("stem", STEMS)
def test_the_mix_over_every_layer_is_not_below_its_best_member(stem: str) -> None:
    """Paired with the engine from the stored per-seed, per-sentence counts (3 seeds, each
    its own training words, the same for members and mixes): the mix over all layers is
    not below its best single layer beyond noise, and the committed table is the engine's."""
    counts = load_counts(MIXES / f"{stem}.safetensors")
    table = json.loads((MIXES / f"{stem}.json").read_text(encoding="utf-8"))
    assert table["settings"]["seeds"] == [0, 1, 2]
    engine = Engine(n_boot=1000, seed=0)
    reps = {name: engine.replicates(name, c, counts.unit) for name, c in counts.cells.items()}
    layers = sorted(int(n.split()[1]) for n in reps if n.startswith("layer "))
    assert all(len(r.points) == 3 for r in reps.values())
    for row in table["mix_vs_best_member"]:
        top = row["layers"][-1]
        members = {la: reps[f"layer {la}"] for la in layers if la <= top}
        d = mix_vs_best_member(reps[f"mix 0..{top}"], members)
        assert (d.b, round(d.value, 6)) == (row["b"], round(row["diff"], 6))
        assert bool(d.called and d.value < 0) == row["below_beyond_noise"]
    full = mix_vs_best_member(
        reps[f"mix 0..{layers[-1]}"], {la: reps[f"layer {la}"] for la in layers}
    )
    assert not (full.called and full.value < 0), full
