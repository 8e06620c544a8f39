"""The MLP probe beside the linear one: its own control task and selectivity (issue 27)."""

from __future__ import annotations

import itertools

import numpy as np

from probing.probes.control import ControlTask, model_type_keys
from probing.probes.linear import LinearProbe
from probing.probes.mlp import MLPProbe, capacity_selectivity


def test_selectivity_falls_as_capacity_grows(minilm):
    """Hewitt & Liang's observation on real vectors: on the same words, an MLP-1 probe
    memorises more of the control task than the linear probe, so its selectivity is lower;
    the drop is a paired difference of paired differences with its own interval."""
    from probing.datasets import read_sentences
    from probing.features import features_of_sentences

    def split(name: str, n: int):  # noqa: ANN202
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
