"""AlterRep (issue 45): counterfactual pushes of the subject's number, on minilm-l6-mlm and
real UD-EWT agreement cases."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from probing.interventions.agreement import ud_cases
from probing.interventions.alterrep import (
    RandomDraws,
    by_length,
    locate,
    push,
    pushed_margins,
    random_push,
    random_push_along,
    subject_states,
    subject_vectors,
)
from probing.interventions.erasure import fit_leace


@pytest.fixture(scope="module")
def setup():
    import probing

    encoder = probing.load_encoder("minilm-l6-mlm")
    located = locate(encoder, ud_cases(("dev",))[:80])
    X = subject_vectors(encoder, located, 3)
    eraser = fit_leace(X, located.numbers)
    return encoder, located, X, eraser


def test_subject_positions_point_at_the_subject_word(setup):
    encoder, located, _, _ = setup
    assert len(located.numbers) >= 40 and set(located.numbers.tolist()) == {0, 1}
    batch = located.cases.batches[0]
    tok = encoder.tokenizer
    for row, pos in enumerate(located.subject_pos[0][:10].tolist()):
        piece = tok.convert_ids_to_tokens(int(batch["input_ids"][row, pos]))
        assert piece not in (tok.cls_token, tok.sep_token, tok.pad_token, tok.mask_token)


def test_a_push_of_zero_length_changes_nothing_bit_for_bit(setup):
    encoder, located, _, eraser = setup
    for layout in (located, by_length(encoder, located)):
        clean = pushed_margins(encoder, layout, 3, None)
        for where in ("subject", "all"):
            same = pushed_margins(encoder, layout, 3, lambda h, b: push(h, eraser, -1.0), where)
            assert np.array_equal(same, clean), where


def test_length_sorted_batches_give_each_case_its_own_results(setup):
    """The run's passes go over length-sorted batches (fewer padded positions): a case's
    subject vector and margins, clean and pushed, are its file-order ones up to float
    rounding, back in kept-case order; and the sorted batches do run fewer positions."""
    encoder, located, X, eraser = setup
    sorted_ = by_length(encoder, located, batch_size=16)
    assert sorted(torch.cat(sorted_.batch_rows()).tolist()) == list(range(len(located.numbers)))

    def positions(loc):
        return sum(b["input_ids"].numel() for b in loc.cases.batches)

    assert positions(by_length(encoder, located)) < positions(located)
    np.testing.assert_allclose(subject_vectors(encoder, sorted_, 3), X, atol=1e-4)
    mirror = lambda h, b: push(h, eraser, 1.0)  # noqa: E731
    for move, where in ((None, "subject"), (mirror, "subject"), (mirror, "all")):
        a = pushed_margins(encoder, located, 3, move, where)
        b = pushed_margins(encoder, sorted_, 3, move, where)
        np.testing.assert_allclose(b, a, atol=1e-3)
        assert np.abs(a).max() > 0.5  # real margins, not zeros


def test_a_stopped_pass_records_the_layers_of_a_full_one(setup):
    """subject_states stops each pass after the deepest layer asked for; the vectors are the
    full pass's (bit for bit: the layers below run the same)."""
    encoder, located, X, _ = setup
    states = subject_states(encoder, located, [1, 3])
    assert np.array_equal(states[3], X)
    full = subject_states(encoder, located, [1, 6])
    assert np.array_equal(states[1], full[1]) and not np.allclose(full[6], X)


def test_random_draws_are_the_per_batch_draws_whatever_the_batching(setup):
    """A case's random direction is drawn per batch of locate()'s layout (seed·100003 + b),
    as random_push draws it, so the length-sorted passes push along the same directions."""
    encoder, located, X, eraser = setup
    dim = X.shape[1]
    for where in ("subject", "all"):
        draws = RandomDraws.of(located, 0, where, dim)
        for b, (inputs, rows) in enumerate(
            zip(located.cases.batches, located.batch_rows(), strict=True)
        ):
            shape = (len(rows), dim) if where == "subject" else (*inputs["input_ids"].shape, dim)
            g = torch.Generator().manual_seed(b)
            expected = torch.randn(shape, generator=g)
            got = draws.at(rows, torch.Size(shape))
            if where == "subject":
                assert torch.equal(got, expected)
            else:
                real = inputs["attention_mask"].bool()
                assert torch.equal(got[real], expected[real])
    # the run's random push of batch 0's subjects is random_push with that batch's seed
    rows = located.batch_rows()[0]
    h = torch.as_tensor(X[rows.numpy()])
    draws = RandomDraws.of(located, 0, "subject", dim)
    assert torch.equal(
        random_push_along(h, eraser, 1.0, draws.at(rows, h.shape)),
        random_push(h, eraser, 1.0, seed=0),
    )
    with pytest.raises(ValueError, match="layout"):
        RandomDraws.of(by_length(encoder, located), 0, "subject", dim)


def test_case_sets_parse_each_file_once_and_match_ud_cases(monkeypatch):
    """ud_case_sets gives ud_cases' cases per group, with every CoNLL-U file parsed once
    (the inflection table from the same parse of train)."""
    from probing.interventions import agreement

    real = agreement._parse("dev")
    parts = {"train": real[:1200], "dev": real[1200:1700], "test": real[1700:]}
    calls = []

    def fake(split):
        calls.append(split)
        return parts[split]

    monkeypatch.setattr(agreement, "_parse", fake)
    fit, held = agreement.ud_case_sets(("train",), ("dev", "test"))
    assert sorted(calls) == ["dev", "test", "train"]
    assert fit == agreement.ud_cases(("train",)) and len(fit) > 50
    assert held == agreement.ud_cases(("dev", "test")) and len(held) > 20


def test_the_push_mirrors_the_number_component_and_keeps_the_rest(setup):
    _, _, X, eraser = setup
    h = torch.as_tensor(X[:20])
    mirrored = push(h, eraser, 1.0)
    erased = eraser.torch_apply(h)
    # r(h') = r(h): only the number component moved, and it is now the opposite one
    torch.testing.assert_close(eraser.torch_apply(mirrored), erased, atol=1e-4, rtol=1e-4)
    torch.testing.assert_close(mirrored - erased, -(h - erased), atol=1e-4, rtol=1e-4)
    # a linear read-out of the number (the LEACE direction) changes sign
    direction = torch.as_tensor(eraser.left[:, 0])
    before, after = (h - erased) @ direction, (mirrored - erased) @ direction
    assert torch.all(torch.sign(before) == -torch.sign(after))


def test_the_random_push_has_the_counterfactual_push_s_length(setup):
    _, _, X, eraser = setup
    h = torch.as_tensor(X[:20])
    cf = (push(h, eraser, 1.0) - h).norm(dim=-1)
    rnd = (random_push(h, eraser, 1.0, seed=7) - h).norm(dim=-1)
    torch.testing.assert_close(rnd, cf, atol=1e-4, rtol=1e-4)
    other = random_push(h, eraser, 1.0, seed=8)
    assert not torch.allclose(other, random_push(h, eraser, 1.0, seed=7))


def test_the_cli_refuses_a_model_without_a_masked_lm_head(tmp_path, capsys):
    from probing.cli.main import main

    code = main(["alterrep", "--model", "minilm-l6", "--out", str(tmp_path / "o")])
    assert code == 2
    assert "masked" in capsys.readouterr().err.lower()
    assert not (tmp_path / "o").exists() or not any((tmp_path / "o").iterdir())


def test_a_typed_sentence_before_and_after_the_push(setup):
    """The user's sentence: no push (α = -1) gives the clean margin bit for bit; the
    counterfactual push at layer 3 moves the margin towards the singular form (the subject
    "keys" is plural), and a typo in the subject is refused by name."""
    from probing.errors import InvalidArgumentError
    from probing.interventions.alterrep import sentence_before_after, sentence_case

    encoder, _, _, eraser = setup
    case = sentence_case("The keys to the cabinet [MASK] on the table.", "keys", ("is", "are"))
    assert case.words[case.subject] == "keys" and case.verb == 5
    none = sentence_before_after(encoder, case, 3, eraser, alpha=-1.0)
    assert none["counterfactual"] == none["clean"] == none["random"]
    out = sentence_before_after(encoder, case, 3, eraser)
    assert out["clean"] == none["clean"] and out["clean"] < 0  # prefers "are"
    assert out["counterfactual"] > out["clean"]
    with pytest.raises(InvalidArgumentError, match="'cats' is not a word before"):
        sentence_case("The keys [MASK] here.", "cats", ("is", "are"))
    with pytest.raises(InvalidArgumentError, match="one \\[MASK\\]"):
        sentence_case("The keys are here.", "keys", ("is", "are"))
