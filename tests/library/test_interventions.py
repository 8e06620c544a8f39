"""Interventions on the real embedded models and UD-EWT: erasure, agreement, patching, head
ablation, and their typed errors."""

from __future__ import annotations

import conllu
import numpy as np
import pytest
import torch

from probing.errors import (
    LayerOutOfRangeError,
    MinimalPairLengthError,
    NoLMHeadError,
    RankTooLargeError,
    TaskLabelsMissingError,
)
from probing.interventions import agreement as ag
from probing.interventions.data import labelled_sample, task_field
from probing.interventions.erasure import fit_inlp, fit_leace, random_eraser
from probing.interventions.hooks import head_mask, mlm_logits, model_parts
from probing.interventions.recompute import layers_after
from probing.probes.linear import LinearProbe


@pytest.fixture(scope="module")
def mlm():
    import probing

    return probing.load_encoder("minilm-l6-mlm")


@pytest.fixture(scope="module")
def elmo():
    import probing

    return probing.load_encoder("elmo-mini")


@pytest.fixture(scope="module")
def pos_layer3(mlm):
    """Layer-3 word vectors and UPOS labels of 150 train / 60 test UD-EWT sentences."""
    out = {}
    for split, n in (("train", 150), ("test", 60)):
        data = labelled_sample("ud-ewt", split, "upos", n)
        y, s, w = data.flat()
        layers = layers_after(mlm, data.sentences, 0, lambda h: h)
        out[split] = (np.stack([layers[i][3, j] for i, j in zip(s, w, strict=False)]), y)
    return out


def _acc(X, y, Xt, yt) -> float:
    return float(np.mean(LinearProbe(C=0.1, device="cpu").fit(X, y).predict(Xt) == yt))


def test_leace_erased_probe_at_majority_and_random_control_unchanged(pos_layer3):
    X, y = pos_layer3["train"]
    Xt, yt = pos_layer3["test"]
    values, counts = np.unique(y, return_counts=True)
    majority = float(np.mean(yt == values[np.argmax(counts)]))
    before = _acc(X, y, Xt, yt)
    eraser = fit_leace(X, y)
    assert 1 <= eraser.rank < X.shape[1]
    assert _acc(eraser(X), y, eraser(Xt), yt) <= majority + 0.02
    assert before > majority + 0.5  # the probe had something to lose
    draws = [random_eraser(X.shape[1], eraser.rank, seed, eraser.bias) for seed in range(3)]
    for r in draws:
        assert abs(_acc(r(X), y, r(Xt), yt) - before) <= 0.02


def test_inlp_reaches_majority_on_dev(pos_layer3):
    X, y = pos_layer3["train"]
    Xt, yt = pos_layer3["test"]
    eraser, accs = fit_inlp(X, y, Xt, yt, max_iter=40)
    values, counts = np.unique(y, return_counts=True)
    majority = float(np.mean(yt == values[np.argmax(counts)]))
    assert accs[0] > majority + 0.5 and accs[-1] <= majority + 0.01
    assert eraser.rank > 0


def test_identity_recompute_equals_encode(mlm, elmo):
    words = ["The", "keys", "to", "the", "cabinet", "are", "here", "."]
    for enc in (mlm, elmo):
        ref = enc.encode([words])[0].layers
        for layer in (0, enc.info.n_contextual_layers):
            got = layers_after(enc, [words], layer, lambda h: h)[0]
            np.testing.assert_allclose(got, ref, atol=2e-4)


def test_erasing_changes_only_later_layers(elmo):
    words = ["The", "dogs", "run", "."]
    got = layers_after(elmo, [words], 1, lambda h: h * 0)[0]
    ref = elmo.encode([words])[0].layers
    np.testing.assert_allclose(got[0], ref[0], atol=1e-5)
    assert np.all(got[1] == 0) and not np.allclose(got[2], ref[2])


def _pair_batches(mlm):
    from probing.interventions.patching import pair_batches

    return pair_batches(mlm, ag.templated_cases(every=200))


def test_patching_every_position_at_last_layer_gives_source_logits(mlm):
    from probing.interventions.patching import patch_all_positions

    batch = _pair_batches(mlm)[0]
    patched, source = patch_all_positions(mlm, batch, mlm.info.n_contextual_layers)
    assert torch.equal(patched, source)
    patched0, source0 = patch_all_positions(mlm, batch, 0)  # layer 0: the whole input moved
    assert torch.allclose(patched0, source0, atol=1e-4)


def test_patching_grid_subject_carries_the_effect_at_layer_0(mlm):
    from probing.interventions.patching import patch_pairs

    out = patch_pairs(mlm, _pair_batches(mlm), n_boot=50)
    roles = out["roles"]
    z = dict(zip(roles["x"], roles["z"][0], strict=False))
    assert z["subject"] > 0.8 and abs(z["verb"]) < 0.2  # at the input, number is in the subject
    assert np.isfinite(np.asarray(out["heads"]["z"])).all()


def test_ablating_no_head_is_bit_for_bit(mlm):
    prepared = ag.prepare(mlm, ag.templated_cases(every=300))
    inputs, pos = prepared.batches[0], prepared.mask_pos[0]
    rows = torch.arange(len(pos))
    with torch.inference_mode():
        plain = mlm_logits(mlm, inputs, rows, pos)
        parts = model_parts(mlm)
        with head_mask(parts, torch.ones(parts.n_layers, parts.n_heads)):
            gated = mlm_logits(mlm, inputs, rows, pos)
        off = torch.ones(parts.n_layers, parts.n_heads)
        off[0, 0] = 0.0
        with head_mask(parts, off):
            ablated = mlm_logits(mlm, inputs, rows, pos)
    assert torch.equal(plain, gated)
    assert not torch.equal(plain, ablated)


HAND = """\
# sent_id = h1
1\tThe\tthe\tDET\tDT\t_\t2\tdet\t_\t_
2\tkeys\tkey\tNOUN\tNNS\tNumber=Plur\t6\tnsubj\t_\t_
3\tto\tto\tADP\tIN\t_\t5\tcase\t_\t_
4\tthe\tthe\tDET\tDT\t_\t5\tdet\t_\t_
5\tcabinet\tcabinet\tNOUN\tNN\tNumber=Sing\t2\tnmod\t_\t_
6\tare\tbe\tAUX\tVBP\tMood=Ind|Tense=Pres|VerbForm=Fin\t0\troot\t_\t_
7\there\there\tADV\tRB\t_\t6\tadvmod\t_\t_

# sent_id = h2
1\tThe\tthe\tDET\tDT\t_\t2\tdet\t_\t_
2\tdog\tdog\tNOUN\tNN\tNumber=Sing\t3\tnsubj\t_\t_
3\truns\trun\tVERB\tVBZ\tMood=Ind|Number=Sing|Person=3|Tense=Pres|VerbForm=Fin\t0\troot\t_\t_
4\tfast\tfast\tADV\tRB\t_\t3\tadvmod\t_\t_

# sent_id = h3
1\tThe\tthe\tDET\tDT\t_\t2\tdet\t_\t_
2\tauthors\tauthor\tNOUN\tNNS\tNumber=Plur\t4\tnsubj\t_\t_
3\tare\tbe\tAUX\tVBP\tMood=Ind|Tense=Pres|VerbForm=Fin\t4\tcop\t_\t_
4\thappy\thappy\tADJ\tJJ\t_\t0\troot\t_\t_

# sent_id = h4
1\tI\tI\tPRON\tPRP\tNumber=Sing|Person=1\t2\tnsubj\t_\t_
2\tlike\tlike\tVERB\tVBP\tMood=Ind|Tense=Pres|VerbForm=Fin\t0\troot\t_\t_
3\tit\tit\tPRON\tPRP\tNumber=Sing|Person=3\t2\tobj\t_\t_

"""


def test_agreement_cases_and_counts_on_hand_written_sentences(mlm):
    table = {"be": ("is", "are"), "run": ("runs", "run")}
    cases = ag.cases_from_conllu(conllu.parse(HAND), table)
    got = [(c.group, c.correct, c.wrong, c.attractors, c.distance) for c in cases]
    # h4's subject is 1st person: not a 3rd-person agreement case
    assert got == [
        ("h1", "are", "is", 1, 4),
        ("h2", "runs", "run", 0, 1),
        ("h3", "are", "is", 0, 1),
    ]
    prepared = ag.prepare(mlm, cases)
    correct = ag.margins(mlm, prepared) > 0
    assert prepared.kept == [0, 1, 2] and correct[1] and correct[2]
    rows = ag.summary(cases, prepared.kept, correct, n_boot=50)
    by = {(r["by"], r["value"]): r for r in rows}
    assert by[("all", "all")]["n"] == 3 and by[("attractors", 1)]["n"] == 1
    assert by[("attractors", 0)]["accuracy"] == 1.0


def test_templated_pairs_are_minimal(mlm):
    cases = ag.templated_cases(every=50)
    for a, b in zip(cases[::2], cases[1::2], strict=False):
        assert a.group == b.group and a.number == "Sing" and b.number == "Plur"
        diff = [i for i, (x, y) in enumerate(zip(a.words, b.words, strict=False)) if x != y]
        assert a.subject in diff and a.verb in diff


def test_typed_errors(mlm, elmo):
    from probing.interventions.masked_words import masked_batches

    with pytest.raises(NoLMHeadError, match="minilm-l6-mlm"):  # ELMo's LM is no masked LM
        masked_batches(elmo, [["a", "b"]])
    with pytest.raises(LayerOutOfRangeError, match="0 \\(input\\) to 2"):
        layers_after(elmo, [["a", "b"]], 3, lambda h: h)
    with pytest.raises(TaskLabelsMissingError):
        task_field("pos", "semcor")
    with pytest.raises(TaskLabelsMissingError):
        task_field("wsd")
    with pytest.raises(RankTooLargeError):
        random_eraser(16, 17, 0)
    from probing.interventions.patching import make_batches, user_pair

    with pytest.raises(MinimalPairLengthError):
        user_pair("The dog [MASK] here .", "The big dogs [MASK] here .", ("is", "are"))
    a = ag.AgreementCase(("the", "dog", "is", "here"), 2, 1, "Sing", "is", "are", 0, 1, "x", "g")
    b = ag.AgreementCase(
        ("the", "xylophonists", "are", "here"), 2, 1, "Plur", "are", "is", 0, 1, "x", "g"
    )
    with pytest.raises(MinimalPairLengthError, match="pieces"):
        make_batches(mlm, [(a, b, "g")])


def test_cli_erase_guards_shipped_results_and_says_what_is_wrong(tmp_path, capsys):
    from probing.cli.main import main

    # results/interventions/elmo-mini__ud-ewt__pos__erase-leace.* are committed
    assert main(["erase", "--model", "elmo-mini", "--task", "pos"]) == 2
    assert "--overwrite" in capsys.readouterr().err
    out = ["--out", str(tmp_path)]
    assert main(["erase", "--model", "elmo-mini", "--task", "pos", "--layers", "5", *out]) == 2
    assert "0 (input) to 2" in capsys.readouterr().err
    assert (
        main(["erase", "--model", "elmo-mini", "--task", "pos", "--dataset", "semcor", *out]) == 2
    )
    assert "pos is labelled in" in capsys.readouterr().err
    assert main(["ablate-heads", "--model", "elmo-mini", *out]) == 2
    assert "LSTM" in capsys.readouterr().err  # no heads to ablate (agreement: its forward LM)
