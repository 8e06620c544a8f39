"""Attribution of a fill-mask guess on the embedded minilm-l6-mlm: IG's completeness, gradient
× input against a finite difference, the deletion curve's end point against the all-masked
sentence run through the model's own forward, and the typed errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import probing
from probing.attribution.case import prepare_case, target_logprob
from probing.attribution.faithfulness import curves, importance_order, removed_ids
from probing.attribution.gradient_input import gradient_x_input
from probing.attribution.integrated_gradients import BASELINES, integrated_gradients
from probing.attribution.methods import METHODS, score_case
from probing.encoders import call_hooks
from probing.errors import (
    InputTooLongError,
    InvalidArgumentError,
    MultiPieceTargetError,
    NoMLMHeadError,
)

WORDS = [
    "The",
    "capital",
    "of",
    "France",
    "is",
    "Paris",
    ",",
    "and",
    "its",
    "largest",
    "river",
    "is",
    "the",
    "Seine",
    ".",
]


@pytest.fixture(scope="module")
def mlm():
    return probing.load_encoder("minilm-l6-mlm")


@pytest.fixture(scope="module")
def case(mlm):
    return prepare_case(mlm, WORDS, 5)  # "Paris" masked and explained


@torch.inference_mode()
def test_f_is_the_models_own_log_probability(mlm, case):
    logits = mlm.mlm(**case.inputs).logits[0, case.mask_position]
    want = torch.log_softmax(logits.float(), -1)[case.target_id]
    emb = mlm.model.get_input_embeddings()(case.inputs["input_ids"])
    got = target_logprob(mlm, case, emb)[0][0]
    assert case.target == "paris" and case.pieces[case.mask_position] == "[MASK]"
    assert abs(float(got) - float(want)) < 1e-5


@pytest.mark.parametrize("baseline", BASELINES)
def test_integrated_gradients_is_complete_within_one_percent(mlm, case, baseline):
    r = integrated_gradients(mlm, case, baseline=baseline, steps=50)
    assert not call_hooks.has_foreign_hooks(mlm.mlm)  # Captum hooked its own lookup only
    gap = r.f_input - r.f_baseline
    assert abs(gap) > 0.5  # the baseline changes the prediction: completeness is not 0 = 0
    assert abs(r.pieces.sum() - gap) <= 0.01 * abs(gap)
    assert abs((r.pieces.sum() - gap) - r.delta) < 1e-3  # Captum's delta is that gap
    # Pieces the baseline keeps ([CLS], [SEP], the mask) get nothing: x = x' there.
    kept = [p for p in range(case.n_pieces) if p not in case.context_positions()]
    assert np.all(r.pieces[kept] == 0)
    assert np.isnan(r.words[case.mask_word])
    assert np.isclose(np.nansum(r.words), r.pieces.sum())  # words sum their pieces


def test_gradient_x_input_is_the_directional_derivative(mlm, case):
    """Σ_j x_j · ∂f/∂x_j = d/dt f(t·x) at t = 1 (central difference over every piece's
    word embedding)."""
    got = gradient_x_input(mlm, case).sum()
    emb = mlm.model.get_input_embeddings()(case.inputs["input_ids"]).detach()
    eps = 1e-2  # float32: the rounding of f (~1e-6) stays far below the difference
    with torch.inference_mode():
        hi = target_logprob(mlm, case, emb * (1 + eps))[0]
        lo = target_logprob(mlm, case, emb * (1 - eps))[0]
    want = float(hi - lo) / (2 * eps)
    assert abs(want) > 0.1  # the check has teeth
    assert abs(got - want) <= 1e-2 * abs(want)


def test_deleting_every_word_reproduces_the_all_masked_probability(mlm, case):
    scored = score_case(mlm, case, steps=20)
    scores = scored.words
    order = importance_order(scores["integrated_gradients"], case)
    assert sorted(order) == [w for w in range(len(WORDS)) if w != case.mask_word]
    cv = curves(mlm, case, order)
    ids = removed_ids(case, order, mlm.tokenizer.mask_token_id)
    assert int((ids == mlm.tokenizer.mask_token_id).sum()) == len(case.context_positions()) + 1
    with torch.inference_mode():
        logits = mlm.mlm(input_ids=ids[None]).logits[0, case.mask_position].float()
    all_masked = float(torch.softmax(logits, -1)[case.target_id])
    assert abs(cv.deletion[-1] - all_masked) < 1e-5
    assert abs(cv.insertion[0] - all_masked) < 1e-5
    full = float(np.exp(scored.ig.f_input))  # nothing removed / everything restored
    assert abs(cv.deletion[0] - full) < 1e-5 and abs(cv.insertion[-1] - full) < 1e-5
    assert set(scores) == set(METHODS)


def test_typed_errors(mlm):
    with pytest.raises(MultiPieceTargetError):
        prepare_case(mlm, WORDS, 5, target="unbelievableness")
    with pytest.raises(InvalidArgumentError):
        prepare_case(mlm, WORDS, len(WORDS))
    with pytest.raises(InputTooLongError):
        prepare_case(mlm, ["word"] * 600, 3)
    case = prepare_case(mlm, WORDS, 5)
    for steps in (0, 1, 1001, 2.5, True):
        with pytest.raises(InvalidArgumentError):
            integrated_gradients(mlm, case, steps=steps)
    with pytest.raises(InvalidArgumentError):
        integrated_gradients(mlm, case, baseline="unk")


def test_elmo_is_refused_with_the_reason():
    elmo = probing.load_encoder("elmo-mini")
    with pytest.raises(NoMLMHeadError, match="masked-LM head"):
        prepare_case(elmo, WORDS, 5)


def test_a_target_id_outside_the_vocabulary_is_refused(mlm):
    with pytest.raises(InvalidArgumentError):
        prepare_case(mlm, WORDS, 5, target_id=10**7)
    case = prepare_case(mlm, WORDS, 5, target_id=mlm.tokenizer.convert_tokens_to_ids("city"))
    assert case.target == "city"


def test_cli_writes_every_methods_word_scores(tmp_path, capsys):
    import json

    import pandas as pd

    from probing.cli.main import main

    out = tmp_path / "attr"
    argv = ["attribute", "The capital of France is [MASK] .", "--target", "paris"]
    assert main([*argv, "--steps", "10", "--out", str(out)]) == 0
    table = pd.read_csv(out / "attribution.csv")
    assert list(table["word"]) == ["The", "capital", "of", "France", "is", "[MASK]", "."]
    assert set(METHODS) <= set(table.columns) and table.loc[5, METHODS].isna().all()
    meta = json.loads((out / "attribution.json").read_text())
    assert meta["target"] == "paris" and meta["ig"]["steps"] == 10
    ig_sum = table["integrated_gradients"].sum()
    assert abs(ig_sum - (meta["ig"]["f_input"] - meta["ig"]["f_baseline"])) < 0.02 * abs(ig_sum)
    assert (out / "attribution.html").stat().st_size > 1000
    with pytest.raises(SystemExit) as stop:  # refused while parsing, before any model work
        main([*argv[:2], "--out", str(out), "--steps", "5000"])
    assert stop.value.code == 2 and "2 to 1,000" in capsys.readouterr().err
