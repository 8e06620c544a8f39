"""Float16 feature storage against float32, paired, with the committed probes (issue 27)."""

from __future__ import annotations

import itertools

import numpy as np

from probing import config
from probing.datasets import read_sentences
from probing.encoding import to_float16
from probing.probes.compare import Engine, SentenceCounts
from probing.probes.saved import SavedProbes


def test_float16_rounding_changes_the_upos_probe_inside_its_bound(minilm):
    """The cache's float16 vectors vs the encoder's float32 ones, re-scored with the
    committed minilm-l6 UPOS probe on 120 test sentences: at every layer the paired
    difference stays inside ±0.5 points with an interval around 0, and no value reaches
    float16's range. Layer 6 has a near-constant dimension; the committed probe, re-made
    after the scale floor (docs/benchmarks.md "Float16 features, measured"), reads it alike in
    both precisions."""
    sents = list(itertools.islice(read_sentences("ud-ewt", "test"), 120))
    saved = SavedProbes.load(config.REPO_ROOT / "results" / "probes" / "minilm-l6__ud-ewt__pos")
    encs = minilm.encode([list(s.words) for s in sents], pooling="first", windowed=True)
    y = np.concatenate([s.labels["upos"] for s in sents])
    sentence = np.concatenate([np.full(len(s.words), i) for i, s in enumerate(sents)])
    engine = Engine(n_boot=500, seed=0)
    for layer in range(7):
        x32 = np.concatenate([np.asarray(e.layers[layer], np.float32) for e in encs])
        assert np.abs(x32).max() < 65504  # nothing clipped
        x16 = to_float16(x32).astype(np.float32)
        assert np.abs(x32 - x16).max() <= np.abs(x32).max() * 2**-10  # float16 rounding
        c32, c16 = (
            SentenceCounts.from_predictions(
                "accuracy", y, [saved.predict(layer, x)], sentence, len(sents)
            )
            for x in (x32, x16)
        )
        d = engine.compare(engine.replicates("f32", c32, "t"), engine.replicates("f16", c16, "t"))
        assert abs(d.value) <= 0.005 and d.ci_low <= 0 <= d.ci_high, (layer, d)


def test_a_probe_fitted_on_float16_reads_float32_alike_at_the_near_constant_layer(minilm):
    """minilm-l6's layer 6 has a near-constant dimension (about -1e-7, sd 2e-8 after float16
    rounding). A probe fitted on the cache's float16 vectors floors that scale to 1 (as
    sklearn's StandardScaler does), so it predicts the same on float32 vectors: paired
    float32 − float16 difference inside ±0.2 points with an interval around 0, at most 0.1 %
    of predictions changed; and storing float16 end to end (float32-trained probe on
    float32 vectors vs float16 on float16) stays inside ±0.5 points, interval around 0.
    Without the floor the probe divided that dimension's rounding by 2e-8."""
    from probing.probes.linear import LinearProbe

    def layer6(split: str, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
        sents = list(itertools.islice(read_sentences("ud-ewt", split), n))
        encs = minilm.encode([list(s.words) for s in sents], pooling="first", windowed=True)
        x = np.concatenate([np.asarray(e.layers[6], np.float32) for e in encs])
        y = np.concatenate([s.labels["upos"] for s in sents])
        sentence = np.concatenate([np.full(len(s.words), i) for i, s in enumerate(sents)])
        return x, y, sentence, len(sents)

    x_tr, y_tr, _, _ = layer6("train", 300)
    x_te, y_te, sentence, n_sent = layer6("test", 150)
    rounded = lambda x: to_float16(x).astype(np.float32)  # noqa: E731 - as the cache stores
    p16 = LinearProbe(C=0.03, max_train_words=None).fit(rounded(x_tr), y_tr)
    p32 = LinearProbe(C=0.03, max_train_words=None).fit(x_tr, y_tr)
    floored = np.flatnonzero(p16.scale_.cpu().numpy() == 1.0)
    assert floored.size >= 1 and np.abs(rounded(x_tr)[:, floored]).max() < 1e-5
    preds = {
        "f32": p16.predict(x_te),
        "f16": p16.predict(rounded(x_te)),
        "f32 end to end": p32.predict(x_te),
    }
    assert np.mean(preds["f32"] != preds["f16"]) <= 0.001
    engine = Engine(n_boot=500, seed=0)
    reps = {
        k: engine.replicates(
            k, SentenceCounts.from_predictions("accuracy", y_te, [p], sentence, n_sent), "t"
        )
        for k, p in preds.items()
    }
    d = engine.compare(reps["f32"], reps["f16"])
    assert abs(d.value) <= 0.002 and d.ci_low <= 0 <= d.ci_high, d
    e2e = engine.compare(reps["f32 end to end"], reps["f16"])
    assert abs(e2e.value) <= 0.005 and e2e.ci_low <= 0 <= e2e.ci_high, e2e
