"""The MLP probe beside the linear one: its own control task and selectivity (issue 27)."""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING

import numpy as np
import pytest

from probing.probes.control import ControlTask, model_type_keys
from probing.probes.linear import LinearProbe
from probing.probes.mlp import MLPProbe, capacity_selectivity, selectivity_by_capacity

if TYPE_CHECKING:
    from probing.features import Features


def test_selectivity_falls_as_capacity_grows(minilm):
    """Hewitt & Liang's observation on real vectors: on the same words, an MLP-1 probe
    memorises more of the control task than the linear probe, so its selectivity is lower;
    the drop is a paired difference of paired differences with its own interval."""
    from probing.datasets import read_sentences
    from probing.features import features_of_sentences

    def split(name: str, n: int) -> Features:
        sents = list(itertools.islice(read_sentences("ud-ewt", name), n))
        return features_of_sentences(minilm, sents, "upos", layers=[6])

    train, test = split("train", 150), split("test", 80)
    control = ControlTask(seed=0, type_keys=model_type_keys(minilm)).fit(train.words, train.labels)
    out = capacity_selectivity(
        train.layer(6),
        train.labels,
        control.transform(train.words),
        test.layer(6),
        test.labels,
        control.transform(test.words),
        test.sentence_index,
        len(test.sent_ids),
        linear=lambda: LinearProbe(C=0.01, max_train_words=None),
        mlp=lambda: MLPProbe(random_state=0),
    )
    assert out["mlp"]["control"] > out["linear"]["control"]
    drop = out["selectivity_drop"]
    assert drop["diff"] > 0 and drop["ci_low"] > 0 and drop["called"]
    for family in ("linear", "mlp"):
        s = out[family]["selectivity"]
        assert s["ci_low"] <= s["diff"] <= s["ci_high"]
        assert np.isclose(s["diff"], out[family]["accuracy"] - out[family]["control"])


def test_a_drop_that_flips_with_the_seed_is_not_called():
    """Seeds folded in: two seeds whose drops have opposite signs give an interval that
    holds 0 and no call, although each seed alone is far from 0."""
    rng = np.random.default_rng(0)
    n, n_sent = 2000, 200
    sentence = np.arange(n) // 10
    task = [rng.random(n) < 0.9, rng.random(n) < 0.9]
    low_ctl, high_ctl = rng.random(n) < 0.5, rng.random(n) < 0.7
    flipped = {
        "linear": {"task": task, "control": [low_ctl, high_ctl]},
        "mlp": {"task": task, "control": [high_ctl, low_ctl]},
    }
    out = selectivity_by_capacity(flipped, sentence, n_sent, (0, 1))
    drop = out["selectivity_drop"]
    assert drop["per_seed"][0] > 0.1 and drop["per_seed"][1] < -0.1
    assert not drop["called"] and drop["ci_low"] < 0 < drop["ci_high"]
    steady = {
        "linear": {"task": task, "control": [low_ctl, low_ctl]},
        "mlp": {"task": task, "control": [high_ctl, high_ctl]},
    }
    drop = selectivity_by_capacity(steady, sentence, n_sent, (0, 1))["selectivity_drop"]
    assert drop["called"] and drop["ci_low"] > 0.1


def test_only_two_families_are_compared():
    ok = [np.ones(10, bool)]
    three = {f: {"task": ok, "control": ok} for f in ("linear", "mlp", "mlp-2")}
    with pytest.raises(ValueError, match="two probe families"):
        selectivity_by_capacity(three, np.zeros(10, int), 1, (0,))
