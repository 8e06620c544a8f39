"""ELMo-mini's fitted LM softmax and the interventions that use it (issue 29): held-out
perplexity against a unigram model, forward-LM agreement, bi-LM loss under erasure,
patching, and the typed errors of a folder without the softmax. Real model, real data."""

from __future__ import annotations

import math
import shutil

import numpy as np
import pytest
import torch

from probing.errors import NoLMHeadError
from probing.interventions import agreement as ag
from probing.interventions.erasure import block_eraser, fit_leace, random_eraser
from probing.interventions.hooks import replaced_hidden
from probing.interventions.masked_words import next_word_batches, score_masked
from probing.interventions.patching import (
    make_batches,
    patch_all_positions,
    patch_pairs,
    templated_pairs,
)
from probing.minimal_pairs.bilm_score import next_word_log_probs
from probing.models.registry import ELMO_MINI_DIR


@pytest.fixture(scope="module")
def elmo():
    import probing

    return probing.load_encoder("elmo-mini")


def test_shipped_softmax_is_small_fp16_safetensors(elmo):
    from safetensors import safe_open

    path = ELMO_MINI_DIR / "softmax.safetensors"
    assert path.stat().st_size < 5e6  # well under the ~15 MB the encoder itself takes
    with safe_open(str(path), framework="pt") as f:
        assert {f.get_tensor(k).dtype for k in f.keys()} == {torch.float16}  # noqa: SIM118
    assert elmo.softmax is not None and len(elmo.softmax.vocab) == 50_003


def test_fitted_softmax_beats_a_unigram_model_on_brown_heldout_text(elmo):
    """Both directions' perplexity on Brown test-split text (never read in training) is far
    below add-one unigram counts of the Brown training split over the same vocabulary."""
    from probing.datasets.brown import brown_words
    from probing.training.elmo_bilm import (
        MINI_CONFIG,
        BiLanguageModel,
        TypeTable,
        build_corpus,
        evaluate,
    )

    softmax = elmo.softmax
    held = [w for w in brown_words(split="test") if len(w) <= 40][:120]
    table = TypeTable()
    corpus = build_corpus(held, table, 60, softmax.ids)
    model = BiLanguageModel(MINI_CONFIG, len(softmax.vocab), dropout=0.0)
    model.bilm = elmo.model
    model.softmax = softmax.module
    ppl = evaluate(model, corpus, batch_tokens=2048)

    counts = np.ones(len(softmax.vocab))
    for words in brown_words(split="train"):
        for w in words:
            counts[softmax.word_id(w)] += 1
        counts[1] += 1  # </S>
    logp = np.log(counts / counts.sum())
    targets = [softmax.word_id(w) for words in held for w in words] + [1] * len(held)
    unigram = math.exp(-float(np.mean(logp[targets])))
    assert ppl["predictions"] == len(targets)
    assert ppl["ppl_forward"] < 0.6 * unigram, (ppl, unigram)
    assert ppl["ppl_backward"] < 0.6 * unigram, (ppl, unigram)


def test_bilm_scores_match_the_model_and_a_no_op_erasure_changes_nothing(elmo):
    sentences = [
        ["The", "dog", "barked", "at", "the", "postman", "."],
        ["Prices", "rose", "sharply", "in", "March"],
    ]
    batches = next_word_batches(elmo, sentences)
    clean = score_masked(elmo, batches)
    # By hand, from ElmoBiLm itself: word i is predicted from forward state i, backward i+2.
    from probing.encoders.elmo import batch_to_char_ids

    with torch.inference_mode():
        out = elmo.model(batch_to_char_ids(sentences))
    expect, where = [], []
    for b, words in enumerate(sentences):
        for i, w in enumerate(words):
            if w.isalpha() and elmo.softmax.in_vocab(w):
                t = torch.tensor([elmo.softmax.word_id(w)])
                with torch.inference_mode():
                    f = elmo.softmax.target_log_prob(out.forward[-1][b, i : i + 1], t)
                    bw = elmo.softmax.target_log_prob(out.backward[-1][b, i + 2 : i + 3], t)
                expect.append(-float(f + bw) / 2)
                where.append(b)
    np.testing.assert_allclose(clean.loss, expect, rtol=1e-5)
    assert clean.sentence.tolist() == where and len(where) >= 9
    # The public next-word API gives the same numbers (forward row i and backward row i + 1
    # both predict word i).
    fwd, bwd = next_word_log_probs(elmo, sentences[1])
    assert fwd.shape == bwd.shape == (len(sentences[1]) + 1, len(elmo.softmax.vocab))
    mine = [
        -(float(fwd[i, t]) + float(bwd[i + 1, t])) / 2
        for i, w in enumerate(sentences[1])
        if elmo.softmax.in_vocab(w) and (t := elmo.softmax.word_id(w)) >= 0
    ]
    np.testing.assert_allclose(
        mine, [e for e, b in zip(expect, where, strict=True) if b == 1], rtol=1e-5
    )
    no_op = random_eraser(elmo.info.dim, 0, seed=0)
    parts = elmo.layer_parts()
    for layer in range(3):

        def erase(batch, L=layer):
            pos = batch.word_pos[..., None]
            return replaced_hidden(parts, L, lambda h: torch.where(pos, no_op.torch_apply(h), h))

        same = score_masked(elmo, batches, erase)
        np.testing.assert_array_equal(same.loss, clean.loss)
        np.testing.assert_array_equal(same.correct, clean.correct)


def test_elmo_erasure_is_per_direction_and_guards_the_whole_layer(elmo):
    from probing.interventions.data import labelled_sample
    from probing.interventions.recompute import layers_after

    data = labelled_sample("ud-ewt", "train", "upos", 80)
    y, s, w = data.flat()
    layers = layers_after(elmo, data.sentences, 0, lambda h: h)
    X = np.stack([layers[i][2, j] for i, j in zip(s, w, strict=True)])
    P = X.shape[1] // 2
    ef, eb = fit_leace(X[:, :P], y), fit_leace(X[:, P:], y)
    e = block_eraser([ef, eb])
    out = e(X)
    np.testing.assert_allclose(out[:, :P], ef(X[:, :P]), atol=1e-5)  # no backward in forward
    np.testing.assert_allclose(out[:, P:], eb(X[:, P:]), atol=1e-5)
    z = (y[:, None] == np.unique(y)[None]).astype(float)
    cov = (out - out.mean(0)).T @ (z - z.mean(0)) / len(y)
    assert np.abs(cov).max() < 1e-3  # no linear information about the labels left


def test_forward_lm_agreement_on_hand_written_sentences(elmo):
    def case(words: str, verb: int, subject: int, number: str, correct: str, wrong: str):
        return ag.AgreementCase(
            tuple(words.split()),
            verb,
            subject,
            number,
            correct,
            wrong,
            0,
            verb - subject,
            "hand",
            words,
        )

    cases = [
        case("the dog is in the garden", 2, 1, "Sing", "is", "are"),
        case("the dogs are in the garden", 2, 1, "Plur", "are", "is"),
        case("the children have gone home", 2, 1, "Plur", "have", "has"),
        case("the man has gone home", 2, 1, "Sing", "has", "have"),
        case("my friends were here", 2, 1, "Plur", "were", "was"),
        case("the student was here", 2, 1, "Sing", "was", "were"),
        case("the zqxv is here", 2, 1, "Sing", "is", "zqxvs"),  # not in the vocabulary
    ]
    prepared = ag.prepare(elmo, cases)
    kept = prepared.kept
    assert kept == [0, 1, 2, 3, 4, 5]
    margins = ag.margins(elmo, prepared)
    assert int((margins > 0).sum()) == 6, margins
    rows = ag.summary(cases, kept, margins > 0, n_boot=50)
    assert rows[0]["n"] == 6 and rows[0]["accuracy"] == 1.0
    # Left context only: what follows the verb cannot change the forward LM's margin.
    longer = [case("the dog is in the garden with three cats", 2, 1, "Sing", "is", "are")]
    assert ag.margins(elmo, ag.prepare(elmo, longer))[0] == pytest.approx(margins[0], abs=1e-5)


def test_patching_every_position_at_the_last_layer_gives_the_source_run(elmo):
    batches = make_batches(elmo, templated_pairs(ag.templated_cases(every=150)))
    assert batches
    top = int(elmo.info.n_contextual_layers)
    for batch in batches:
        patched, source = patch_all_positions(elmo, batch, top)
        torch.testing.assert_close(patched, source, rtol=0, atol=0)
    out = patch_pairs(elmo, batches[:1], n_boot=50)
    assert out["heads"] is None and len(out["roles"]["z"]) == top + 1
    # At the top layer only the last word's state reaches the prediction.
    last = out["roles"]["x"].index("last word")
    row = out["roles"]["z"][top]
    assert sum(row) == pytest.approx(1.0, abs=1e-6) and row[last] >= 0 and row[-1] == 0


def test_a_folder_without_the_softmax_is_an_encoder_only(tmp_path, capsys):
    from probing.cli.main import main
    from probing.encoders.elmo import load_elmo

    for name in ("options.json", "weights.hdf5", "vocab.txt"):
        shutil.copy(ELMO_MINI_DIR / name, tmp_path / name)
    enc = load_elmo(tmp_path, name="bare-elmo")
    assert enc.softmax is None and enc.layers([["a", "b"]])[0].shape == (3, 2, 256)
    with pytest.raises(NoLMHeadError, match="no softmax.safetensors.*bi-LM softmax.*elmo-mini"):
        next_word_batches(enc, [["a", "b"]])
    with pytest.raises(NoLMHeadError, match="masked-LM head"):
        ag.prepare(enc, ag.templated_cases(every=500))
    out = str(tmp_path / "out")
    assert main(["agreement", "--model", str(tmp_path), "--out", out]) == 2
    assert "no softmax.safetensors" in capsys.readouterr().err
    assert main(["ablate-heads", "--model", "elmo-mini", "--out", out]) == 2
    assert "LSTM" in capsys.readouterr().err
