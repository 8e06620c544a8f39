"""Scalar mixes against their best member on the same training words, seeds folded in
(issue 27; results/mix_members.py, committed under results/mixes/)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from probing import config
from probing.probes.compare import Engine, mix_vs_best_member
from probing.probes.reapply import load_counts

if TYPE_CHECKING:
    from probing.features import Features
    from probing.probes.compare import Replicates

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


def test_a_one_layer_mix_with_the_members_penalty_matches_its_member(minilm):
    """Issue 27's "a mix is never below its best member": on real vectors (minilm-l6 layer
    3, 400 UD-EWT training sentences, 150 test sentences) the unpenalised mix lets γ grow
    out of the classifier's L2 (γ > 1) and scores below the linear probe; with the members'
    C, γ is held at 1 and the one-layer mix scores what its member scores, paired."""
    import itertools

    import numpy as np

    from probing.datasets import read_sentences
    from probing.features import features_of_sentences
    from probing.probes.compare import SentenceCounts
    from probing.probes.linear import LinearProbe
    from probing.probes.mix import ScalarMixProbe

    def split(name: str, n: int) -> Features:
        sents = list(itertools.islice(read_sentences("ud-ewt", name), n))
        return features_of_sentences(minilm, sents, "upos", layers=[3])

    train, dev, test = split("train", 400), split("dev", 100), split("test", 150)
    X, Xd, Xt = (np.asarray(f.layer(3), np.float32) for f in (train, dev, test))
    C = 0.01
    member = LinearProbe(C=C, max_train_words=None).fit(X, train.labels).predict(Xt)
    free = ScalarMixProbe(max_train_words=None).fit(X[None], train.labels, Xd[None], dev.labels)
    held = ScalarMixProbe(max_train_words=None, C=C).fit(
        X[None], train.labels, Xd[None], dev.labels
    )
    assert free.gamma_ > 1.05 and held.gamma_ == 1.0
    assert held.epochs_ > 8  # a small sample gets more epochs (2,000 steps at least)
    engine = Engine(n_boot=1000, seed=0)

    def reps(pred: np.ndarray, name: str) -> Replicates:
        counts = SentenceCounts.from_predictions(
            "accuracy", test.labels, [pred], test.sentence_index, len(test.sent_ids)
        )
        return engine.replicates(name, counts, "t")

    gap = engine.compare(reps(held.predict(Xt[None]), "held"), reps(member, "member"))
    assert abs(gap.value) <= 0.004 and gap.ci_low <= 0 <= gap.ci_high, gap
    with pytest.raises(ValueError, match="C must be > 0"):
        ScalarMixProbe(C=0.0).fit(X[None][:, :50], train.labels[:50])


def _committed_runs_with_mix_checks() -> list:
    out = []
    for path in sorted((config.REPO_ROOT / "results").glob("*__*__*.json")):
        doc = json.loads(path.read_text(encoding="utf-8"))
        meta = doc.get("meta", {}) if isinstance(doc, dict) else {}
        if meta.get("mix_vs_best_member"):
            out.append(path)
    return out


@pytest.mark.parametrize("path", _committed_runs_with_mix_checks(), ids=lambda p: p.stem)
def test_a_committed_mix_below_its_best_member_says_why(path: Path) -> None:
    """Issue 27: "a mix is never below its best member beyond noise, or say why". Every
    committed run that checked its mixes either has none below beyond noise or names the
    reason; a run whose mixes had the members' L2 (``scalar_mix.C``) keeps every gap
    within one point (unpenalised, on the same arcs, minilm-l6's deprel mixes were 1.3-1.8
    points below; docs/methods.md, "Probing: how the numbers are made")."""
    doc = json.loads(path.read_text(encoding="utf-8"))
    meta, mix = doc["meta"], doc.get("scalar_mix") or {}
    rows = meta["mix_vs_best_member"]
    below = [r for r in rows if r["below_beyond_noise"]]
    if below:
        assert "trainer" in meta.get("mix_below_best_member_note", ""), path.name
    if "C" in mix:
        assert min(r["diff"] for r in rows) >= -0.01, [(r["a"], r["diff"]) for r in below]
