"""Piece-count batching, the bf16 compute dtype, the torch linear probe and device choice,
all on the embedded models and real UD EWT sentences."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from probing.encoders import batching
from probing.errors import InvalidArgumentError
from probing.features import extract_features, read_sentences
from probing.probes.linear import LinearProbe


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    """One feature cache for this module (tests reuse each other's entries), never the user's."""
    path = tmp_path_factory.mktemp("cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CONTEXTLENS_CACHE_DIR", str(path))
        yield path


@pytest.fixture(scope="module")
def ewt_dev() -> list[list[str]]:
    """60 real sentences of very different lengths (UD EWT dev, data-set order)."""
    sents = [s.words for s in read_sentences("ud-ewt", "dev")]
    return sents[:60]


@pytest.fixture(scope="module")
def elmo_fixture():
    import os
    from pathlib import Path

    from probing.encoders.elmo import load_elmo

    folder = Path(os.environ["CONTEXTLENS_DATA_DIR"]) / "allennlp-elmo-fixture"
    return load_elmo((folder / "options.json", folder / "lm_weights.hdf5"), name="elmo-fixture")


# -- batching ------------------------------------------------------------------------------


def test_plan_covers_every_item_once_longest_first_within_budgets():
    counts = [5, 40, 12, 40, 3, 100, 7, 12]
    plan = batching.plan_batches(counts, batch_size=3, max_tokens=90)
    flat = np.concatenate(plan)
    assert sorted(flat.tolist()) == list(range(len(counts)))
    assert [counts[i] for i in flat] == sorted(counts, reverse=True)
    assert flat.tolist()[:3] == [5, 1, 3]  # ties (the two 40s) keep input order
    for b in plan:
        assert len(b) <= 3
        assert len(b) == 1 or len(b) * max(counts[i] for i in b) <= 90
    assert batching.padded_positions(counts, plan) >= sum(counts)


@pytest.mark.parametrize("bad", [0, -1, 2.5, True])
def test_bad_batch_size_is_a_typed_error_not_an_empty_result(minilm, bad):
    with pytest.raises(InvalidArgumentError, match="batch_size"):
        minilm.encode(["A short sentence ."], batch_size=bad)
    with pytest.raises(InvalidArgumentError, match="batch_size"):
        batching.plan_batches([3, 4], batch_size=bad)


def test_bad_max_tokens_and_dtype_are_typed_errors(minilm, cache):
    with pytest.raises(InvalidArgumentError, match="max_tokens"):
        minilm.encode(["A short sentence ."], max_tokens=0)
    with pytest.raises(InvalidArgumentError, match="dtype"):
        minilm.with_dtype("float8")
    with pytest.raises(InvalidArgumentError, match="batch_size"):
        extract_features(minilm, "ud-ewt", "dev", "upos", max_sentences=3, batch_size=0)


def test_piece_counts_are_the_tokenizers_lengths(minilm, ewt_dev):
    counts = minilm.piece_counts(ewt_dev)
    assert counts == [len(minilm.tokenize(words)[0]) for words in ewt_dev]
    # A word the tokenizer drops becomes [UNK]: still one piece.
    assert minilm.piece_counts([["a", "\u200b", "b"]]) == [
        len(minilm.tokenize(["a", "\u200b", "b"])[0])
    ]


def test_piece_sorted_batches_pad_far_less_than_input_or_word_order(minilm):
    sents = [s.words for s in read_sentences("ud-ewt", "dev")]  # all 2,001
    counts = minilm.piece_counts(sents)
    by_pieces = batching.plan_batches(counts, batch_size=64, max_tokens=4096)
    words = [len(w) for w in sents]
    by_words = [b for b in batching.plan_batches(words, batch_size=64, max_tokens=None)]
    in_order = [np.arange(s, min(s + 64, len(counts))) for s in range(0, len(counts), 64)]
    pieces = batching.padded_positions(counts, by_pieces)
    assert pieces < 1.1 * sum(counts)  # measured 1.084 (sentences differ most when short)
    assert batching.padded_positions(counts, by_words) > pieces
    assert batching.padded_positions(counts, in_order) > 1.5 * sum(counts)


def test_bert_encode_keeps_input_order_and_equals_one_at_a_time(minilm, ewt_dev):
    sents = ewt_dev[:24]
    batched = minilm.encode(sents, batch_size=5, max_tokens=200)
    single = [minilm.encode([words], batch_size=1)[0] for words in sents]
    for b, s, words in zip(batched, single, sents, strict=True):
        assert b.words == words == s.words
        assert b.pieces == s.pieces
        np.testing.assert_allclose(b.layers, s.layers, atol=2e-4, rtol=0)
        np.testing.assert_allclose(b.static, s.static, atol=1e-6, rtol=0)


@pytest.mark.parametrize("pooling", ["first", "last", "mean"])
def test_feature_path_vectors_are_encodes_bit_for_bit(minilm, ewt_dev, pooling):
    # The feature path gathers and converts a whole batch at once (word_vectors); it must
    # store exactly what encode() returns, also where it falls back to encode(): a word
    # without pieces (a zero-width space) and a sentence longer than the model takes.
    # In both dtypes (bf16 hidden states pass through float32 before the float16 clip).
    sents = [*ewt_dev[:10], ["a", "\u200b", "word"], ["long"] * (minilm.max_pieces + 20)]
    for encoder, batch in itertools.product(
        (minilm, minilm.with_dtype("bfloat16")), (sents[:10], sents[:11], sents)
    ):
        lean = encoder.word_vectors(batch, pooling)
        full = encoder.encode(
            batch, pooling=pooling, windowed=True, batch_size=len(batch), max_tokens=None
        )
        for (layers, static), e in zip(lean, full, strict=True):
            assert layers.dtype == static.dtype == np.float16
            want = np.clip(e.layers, -65504, 65504).astype(np.float16)
            assert np.array_equal(layers.view(np.uint16), want.view(np.uint16))
            want = np.clip(e.static, -65504, 65504).astype(np.float16)
            assert np.array_equal(static.view(np.uint16), want.view(np.uint16))


def test_bf16_weights_rounded_once_give_autocasts_vectors(minilm, ewt_dev):
    # The bf16 encoder keeps its linear weights in bf16 (autocast would round them on every
    # pass); the products, hence the vectors, must be the ones autocast gives.
    bf16 = minilm.with_dtype("bfloat16")
    twin = bf16._bf16_twin()
    assert twin is bf16._bf16_twin() and twin is not minilm.model
    assert twin.get_input_embeddings().weight is minilm.model.get_input_embeddings().weight
    lean = bf16.encode(ewt_dev[:16])
    bf16.__dict__["_twin"] = (minilm.model, minilm.model)  # autocast over the fp32 weights
    try:
        auto = bf16.encode(ewt_dev[:16])
    finally:
        del bf16.__dict__["_twin"]
    for a, b in zip(lean, auto, strict=True):
        assert np.array_equal(a.layers, b.layers) and np.array_equal(a.static, b.static)
    # …and leave the fp32 encoder it shares modules with untouched.
    assert str(minilm.model.encoder.layer[0].attention.self.query.weight.dtype) == "torch.float32"


def test_elmo_encode_shares_the_batching_and_keeps_input_order(elmo_fixture, ewt_dev):
    sents = ewt_dev[:12]
    batched = elmo_fixture.encode(sents, batch_size=4, max_tokens=120)
    single = [elmo_fixture.encode([words])[0] for words in sents]
    for b, s, words in zip(batched, single, sents, strict=True):
        assert b.words == words
        np.testing.assert_allclose(b.layers, s.layers, atol=1e-5, rtol=0)
    with pytest.raises(InvalidArgumentError):
        elmo_fixture.encode(sents, batch_size=0)


# -- bf16 ----------------------------------------------------------------------------------


@pytest.mark.skipif(
    not batching.cpu_has_fast_bf16(),
    reason="this CPU has neither AVX512-BF16 nor AMX-BF16, so bf16 is not offered by 'auto' "
    "and its agreement is not what users would get",
)
def test_bf16_vectors_and_probe_accuracy_agree_with_float32(minilm, cache):
    bf16 = minilm.with_dtype("auto")
    assert bf16.dtype == "bfloat16" and minilm.dtype == "float32"
    feats = {}
    for enc in (minilm, bf16):
        tr = extract_features(enc, "ud-ewt", "train", "upos", max_sentences=400)
        te = extract_features(enc, "ud-ewt", "dev", "upos", max_sentences=300)
        feats[enc.dtype] = (tr, te)
    # bf16 is part of the cache key: two entries.
    assert feats["float32"][0].path != feats["bfloat16"][0].path
    for layer in (1, 3, 6):
        a, b = feats["float32"][0].layer(layer), feats["bfloat16"][0].layer(layer)
        cos = (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)
        assert cos.mean() >= 0.9999 and np.percentile(cos, 1) >= 0.9999, (layer, cos.min())
        acc = {
            dtype: LinearProbe(C=0.1)
            .fit(tr.layer(layer), tr.labels)
            .score(te.layer(layer), te.labels)
            for dtype, (tr, te) in feats.items()
        }
        assert abs(acc["float32"] - acc["bfloat16"]) <= 0.002, acc


def test_float32_cache_key_is_unchanged_by_the_dtype_option(minilm, cache):
    same = minilm.with_dtype("float32")
    assert same is minilm
    a = extract_features(minilm, "ud-ewt", "dev", "upos", max_sentences=5)
    other = minilm.with_dtype("bfloat16")
    b = extract_features(other, "ud-ewt", "dev", "upos", max_sentences=5)
    assert a.path != b.path and other.dtype == "bfloat16" and minilm.dtype == "float32"


# -- the torch probe -------------------------------------------------------------------------


def _objective(
    X: np.ndarray, y_idx: np.ndarray, W: np.ndarray, b: np.ndarray, C: float
) -> float:  # sklearn's, in float64
    Z = X @ W.T + b
    Z = Z - Z.max(axis=1, keepdims=True)
    lse = np.log(np.exp(Z).sum(axis=1))
    return float(np.mean(lse - Z[np.arange(len(y_idx)), y_idx]) + (W * W).sum() / (2 * C * len(X)))


@pytest.mark.parametrize("C", [0.01, 1.0])
def test_torch_probe_reaches_sklearns_objective_and_accuracy(minilm, cache, C):
    tr = extract_features(minilm, "ud-ewt", "train", "upos", max_sentences=250)
    te = extract_features(minilm, "ud-ewt", "dev", "upos", max_sentences=200)
    X, y = tr.layer(4), tr.labels
    # Tight tol: the objective itself must be sklearn's (at the default tol=1e-4, like
    # sklearn's own default, L-BFGS stops earlier; its accuracy is checked below).
    probe = LinearProbe(C=C, tol=1e-6, max_iter=1000, device="auto").fit(X, y)
    Xs = probe.standardise(X).astype(np.float64)
    ref = LogisticRegression(C=C, tol=1e-8, max_iter=10_000).fit(Xs, y)
    assert list(ref.classes_) == list(probe.classes_)
    y_idx = np.searchsorted(probe.classes_, y)
    ours = _objective(Xs, y_idx, probe.coef_.astype(np.float64), probe.intercept_, C)
    best = _objective(Xs, y_idx, ref.coef_, ref.intercept_, C)
    assert abs(ours - best) / best <= 1e-4, (ours, best)
    acc_ref = ref.score(probe.standardise(te.layer(4)), te.labels)
    assert abs(probe.score(te.layer(4), te.labels) - acc_ref) <= 0.002
    default = LinearProbe(C=C).fit(X, y)
    assert abs(default.score(te.layer(4), te.labels) - acc_ref) <= 0.002
    proba = probe.predict_proba(te.layer(4))
    np.testing.assert_allclose(proba.sum(1), 1.0, atol=1e-5)
    assert (probe.classes_[proba.argmax(1)] == probe.predict(te.layer(4))).all()


def test_warm_started_grid_matches_separate_fits(minilm, cache):
    tr = extract_features(minilm, "ud-ewt", "train", "upos", max_sentences=150)
    dev = extract_features(minilm, "ud-ewt", "dev", "upos", max_sentences=100)
    X, y = tr.layer(2), tr.labels
    grid = LinearProbe(Cs=(0.01, 0.1, 1.0), tol=1e-6, max_iter=500)
    grid.fit(X, y, dev.layer(2), dev.labels)
    cold = LinearProbe(C=grid.C_, tol=1e-6, max_iter=500).fit(X, y)
    assert grid.objective_ == pytest.approx(cold.objective_, rel=1e-4)
    assert grid.dev_scores_[grid.C_] == max(grid.dev_scores_.values())


def test_auto_device_is_cuda_when_present_else_cpu():
    import torch

    expect = "cuda" if torch.cuda.is_available() else "cpu"
    assert batching.resolve_device("auto").type == expect
    assert batching.resolve_device(None).type == expect
    assert batching.resolve_device("cpu").type == "cpu"
