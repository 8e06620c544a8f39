"""Liu et al. 2019's edge input [head; dependent; head ∘ dependent] (issue 27, ``deprel-hd``)."""

from __future__ import annotations

import itertools

import numpy as np

from probing.probes.edge import arc_features, arc_rows
from probing.probes.tasks import get_task


def test_the_product_input_is_head_dependent_and_their_product(minilm):
    from probing.datasets import read_sentences
    from probing.features import features_of_sentences

    sents = list(itertools.islice(read_sentences("ud-ewt", "dev"), 6))
    feats = features_of_sentences(minilm, sents, "deprel", layers=[0, 3])
    plain, liu = arc_features(feats), arc_features(feats, product=True)
    dep, head = arc_rows(feats)
    h, d = feats.layer(3)[head], feats.layer(3)[dep]
    X = liu.layer(3)
    assert X.shape == (len(dep), 3 * feats.dim) and liu.dim == 3 * feats.dim
    np.testing.assert_array_equal(X[:, : 2 * feats.dim], plain.layer(3))
    np.testing.assert_allclose(X[:, 2 * feats.dim :], h * d, rtol=1e-6)
    assert liu.layers.shape == (2, len(dep), 3 * feats.dim)
    assert liu.static.shape == (len(dep), 3 * feats.dim)
    # Selections and subsamples keep the input kind (the run subsamples training arcs).
    assert liu.subsample(5, seed=0).layer(0).shape == (5, 3 * feats.dim)
    assert get_task("deprel-hd").kind == "edge"
