"""Attribution of a saved probe's label (issue 44) on minilm-l6 and its committed UD-EWT
probes, on real UD-EWT test sentences."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest
import torch

import probing
from probing import config
from probing.attribution.probe_attribution import (
    probe_curves,
    probe_gradient_x_input,
    probe_integrated_gradients,
    removed_ids,
)
from probing.attribution.probe_case import label_logit, prepare_probe_case
from probing.attribution.probe_study import best_layer
from probing.errors import (
    InvalidArgumentError,
    LayerOutOfRangeError,
    UnsupportedArchitectureError,
)
from probing.probes.saved import SavedProbes

REPO_PROBES = config.results_dir() / "probes"
LAYER = 3


@pytest.fixture(scope="module")
def pos():
    return SavedProbes.load(REPO_PROBES / "minilm-l6__ud-ewt__pos")


@pytest.fixture(scope="module")
def sentences():
    """UD-EWT test sentences of 8-20 words (the study's rule), the first six."""
    from probing.datasets import read_sentences

    keep = (s for s in read_sentences("ud-ewt", "test") if 8 <= len(s.words) <= 20)
    return list(itertools.islice(keep, 6))


def _content_word(s) -> int:
    """The first noun, verb or proper noun (every EWT sentence of 8+ words has one)."""
    return next(i for i, u in enumerate(s.labels["upos"]) if u in {"NOUN", "VERB", "PROPN"})


@pytest.mark.parametrize("baseline", ["mask", "pad"])
def test_ig_is_complete_on_the_saved_pos_probe(minilm, pos, sentences, baseline):
    s = sentences[0]
    case = prepare_probe_case(minilm, s.words, _content_word(s), pos, LAYER)
    ig = probe_integrated_gradients(minilm, case, baseline=baseline, steps=50)
    gap = ig.f_input - ig.f_baseline
    assert abs(gap) > 0.5  # a real difference to be complete about
    assert abs(ig.words.sum() - gap) <= 0.01 * abs(gap)
    assert abs(ig.pieces.sum() - ig.words.sum()) < 1e-9  # special tokens get nothing
    # f is the saved probe's own logit on the encoder's own word vector at that layer.
    vec = minilm.encode([s.words])[0].layers[LAYER][case.word]
    want = pos.decision_function(LAYER, vec[None])[0, case.label_index]
    assert ig.f_input == pytest.approx(float(want), rel=1e-4, abs=1e-4)
    assert case.label == pos.predict(LAYER, vec[None])[0]  # the prediction is explained


def test_gradient_x_input_is_the_directional_derivative(minilm, pos, sentences):
    s = sentences[1]
    case = prepare_probe_case(minilm, s.words, _content_word(s), pos, LAYER)
    gxi = probe_gradient_x_input(minilm, case)
    emb = minilm.model.get_input_embeddings()(case.inputs["input_ids"]).detach()
    # eps 1e-2: the central difference's error is O(eps²); at 1e-3 float32 rounding of the
    # two logits (over 2·eps) moved the estimate by 5 % with 2 threads instead of 1
    eps = 1e-2
    with torch.no_grad():
        up = label_logit(minilm, case, emb * (1 + eps))
        down = label_logit(minilm, case, emb * (1 - eps))
    numeric = float((up - down)[0]) / (2 * eps)
    assert gxi.sum() == pytest.approx(numeric, rel=2e-2, abs=1e-3)


def test_attributions_depend_on_the_context_above_the_embeddings(minilm, pos, sentences):
    for s in sentences[:3]:
        w = _content_word(s)
        others = np.arange(len(s.words)) != w
        # Layer 0 (the embedding layer's output) reads each piece alone: no other word can
        # contribute, exactly.
        at0 = prepare_probe_case(minilm, s.words, w, pos, 0)
        assert np.all(probe_integrated_gradients(minilm, at0).words[others] == 0)
        assert np.all(at0.to_words(probe_gradient_x_input(minilm, at0))[others] == 0)
        # At layer 3 the label rests partly on the other words.
        case = prepare_probe_case(minilm, s.words, w, pos, LAYER)
        words = probe_integrated_gradients(minilm, case).words
        assert np.abs(words[others]).sum() > 0.05 * np.abs(words).sum()
    # The same word in two real sentences: its own attribution differs with its context.
    a, b = sentences[0], sentences[1]
    shared = (
        next((x for x in a.words if x.isalpha() and x in b.words and len(x) > 1), None)
        or a.words[_content_word(a)]
    )
    other = list(b.words) if shared in b.words else [*b.words[:-1], shared, b.words[-1]]
    case_a = prepare_probe_case(minilm, a.words, a.words.index(shared), pos, LAYER)
    case_b = prepare_probe_case(
        minilm, other, other.index(shared), pos, LAYER, label=case_a.label, target="given"
    )
    own_a = probe_integrated_gradients(minilm, case_a).words[case_a.word]
    own_b = probe_integrated_gradients(minilm, case_b).words[case_b.word]
    assert abs(own_a - own_b) > 1e-3 * max(abs(own_a), abs(own_b))


def test_deleting_every_word_reproduces_the_all_masked_probability(minilm, pos, sentences):
    s = sentences[2]
    case = prepare_probe_case(minilm, s.words, _content_word(s), pos, LAYER)
    order = list(range(len(s.words)))[::-1]
    cv = probe_curves(minilm, case, order)
    assert cv.deletion[-1] == pytest.approx(cv.insertion[0], abs=1e-6)
    assert cv.insertion[-1] == pytest.approx(cv.deletion[0], abs=1e-6)
    # The all-masked probability by the model's own full forward and the saved probe (numpy).
    ids = removed_ids(case, order, minilm.tokenizer.mask_token_id)[None]
    with torch.no_grad():
        out = minilm.model(input_ids=ids, output_hidden_states=True)
    h = out.hidden_states[LAYER][0, case.pooled].mean(0).numpy()
    want = pos.predict_proba(LAYER, h[None])[0, case.label_index]
    assert cv.deletion[-1] == pytest.approx(float(want), abs=1e-4)


def test_bad_requests_are_typed(minilm, pos, sentences):
    s = sentences[0]
    with pytest.raises(LayerOutOfRangeError):
        prepare_probe_case(minilm, s.words, 0, pos, 9)
    with pytest.raises(InvalidArgumentError, match="not a label"):
        prepare_probe_case(minilm, s.words, 0, pos, LAYER, label="NOT-A-TAG")
    with pytest.raises(InvalidArgumentError, match="is not in the sentence"):
        prepare_probe_case(minilm, s.words, len(s.words), pos, LAYER)
    deprel = SavedProbes.load(REPO_PROBES / "minilm-l6__ud-ewt__deprel")
    with pytest.raises(InvalidArgumentError, match="edge probe"):
        prepare_probe_case(minilm, s.words, 0, deprel, LAYER)
    with pytest.raises(UnsupportedArchitectureError, match="char-CNN"):
        prepare_probe_case(probing.load_encoder("elmo-mini"), s.words, 0, pos, LAYER)


def test_best_layer_breaks_ties_low():
    assert best_layer({0: 0.5, 1: 0.9, 2: 0.9, 3: 0.7}) == 1


def test_cli_writes_the_probe_attribution(tmp_path):
    import pandas as pd

    from probing.cli.main import main

    out = tmp_path / "why"
    argv = ["attribute", "They book a flight to Boston .", "--probe", "pos", "--word", "1"]
    assert main([*argv, "--layer", "3", "--steps", "20", "--quiet", "--out", str(out)]) == 0
    table = pd.read_csv(out / "probe_attribution.csv")
    meta = json.loads((out / "probe_attribution.json").read_text())
    assert list(table["word"]) == ["They", "book", "a", "flight", "to", "Boston", "."]
    gap = meta["ig"]["f_input"] - meta["ig"]["f_baseline"]
    assert abs(table["integrated_gradients"].sum() - gap) <= 0.01 * abs(gap)
    assert meta["probe"] == {"task": "pos", "layer": 3, "pooling": "first"}
    assert (out / "probe_attribution.html").stat().st_size > 1000
    assert main([*argv[:4], "--out", str(out)]) == 2  # no --word: refused, typed


def test_the_study_follows_its_rule_and_keeps_the_probed_word_in_the_context_scope(minilm, pos):
    from probing.attribution.probe_study import dev_accuracy, run_probe_study, study_cases
    from probing.datasets import read_sentences

    cases, ids, gold = study_cases(minilm, read_sentences("ud-ewt", "test"), pos, LAYER, n=2)
    again, _, _ = study_cases(minilm, read_sentences("ud-ewt", "test"), pos, LAYER, n=2)
    assert [c.word for c in cases] == [c.word for c in again]  # seeded, not drawn anew
    for c, g in zip(cases, gold, strict=True):
        assert 8 <= len(c.words) <= 20 and c.words[c.word].isalpha()
        assert c.target == "predicted" and g in pos.classes
    everything, context = run_probe_study(minilm, cases, ids, gold, steps=10, n_random=2)
    methods = {"integrated_gradients", "integrated_gradients_pad", "gradient_x_input", "random"}
    for rows in (everything.curves, context.curves):
        assert len(rows) == 2 * len(methods) and {r["method"] for r in rows} == methods
    for r in context.curves:  # the probed word never removed: m = n_words - 1 steps
        assert len(r["deletion"]) == r["n_words"] and r["scope"] == "context"
    for r in everything.curves:
        assert len(r["deletion"]) == r["n_words"] + 1 and r["scope"] == "all"
    assert {r["baseline"] for r in everything.ig} == {"mask", "pad"}
    supersense = SavedProbes.load(REPO_PROBES / "minilm-l6__semcor__supersense")
    with pytest.raises(InvalidArgumentError, match="--layer"):
        dev_accuracy(minilm, supersense, read_sentences("ud-ewt", "dev"), n_dev=5)
