"""Minimal pairs: PLL against an explicit masking loop, within_word_l2r vs original, ELMo's
bi-LM score against its next-word log-probabilities, BLiMP JSONL, paradigm rules on a
written CoNLL-U, accuracy intervals and the paired comparison, the CLI's guards."""

from __future__ import annotations

import json
import warnings

import conllu
import numpy as np
import pytest
import torch

from probing.errors import DataFormatError, InvalidArgumentError
from probing.minimal_pairs import paradigms as P
from probing.minimal_pairs.evaluate import (
    PairScores,
    accuracy_table,
    compare_runs,
    score_pairs,
)
from probing.minimal_pairs.pairs import (
    FewPairsWarning,
    MinimalPair,
    few_pair_warnings,
    read_blimp_jsonl,
)
from probing.minimal_pairs.pll import mask_sets, pll_scores
from probing.models.registry import load_encoder
from probing.probes.compare import Engine


@pytest.fixture(scope="module")
def tiny_mlm(tmp_path_factory):
    from tests.library.test_fill_mask import save_tiny_bert

    return load_encoder(str(save_tiny_bert(tmp_path_factory.mktemp("tiny-mlm"))))


@pytest.fixture(scope="module")
def minilm_mlm():
    return load_encoder("minilm-l6-mlm")


def hand_pll(encoder, words: list[str], metric: str) -> tuple[float, list[float]]:
    """PLL by an explicit loop: one forward pass of the whole ``…ForMaskedLM`` per piece."""
    tok = encoder.tokenizer
    enc = tok(words, is_split_into_words=True, return_tensors="pt")
    word_ids = enc.word_ids()
    out = []
    for p, w in enumerate(word_ids):
        if w is None:
            continue
        ids = enc["input_ids"].clone()
        target = int(ids[0, p])
        ids[0, p] = tok.mask_token_id
        if metric == "within_word_l2r":
            for q in range(p + 1, len(word_ids)):
                if word_ids[q] == w:
                    ids[0, q] = tok.mask_token_id
        with torch.inference_mode():
            logits = encoder.mlm(**{**enc, "input_ids": ids}).logits[0, p]
        out.append(float(torch.log_softmax(logits, -1)[target]))
    return sum(out), out


SENTENCES = [["the", "cat", "sat", "on", "the", "mat", "."], ["i", "went", "unables", "words"]]


@pytest.mark.parametrize("metric", ["original", "within_word_l2r"])
def test_pll_is_the_sum_of_masked_log_probs_on_a_tiny_model(tiny_mlm, metric):
    scores = pll_scores(tiny_mlm, SENTENCES, metric, max_tokens=40)  # several passes
    for words, got in zip(SENTENCES, scores, strict=True):
        total, per_piece = hand_pll(tiny_mlm, words, metric)
        np.testing.assert_allclose(got.log_probs, per_piece, atol=1e-4)
        assert got.total == pytest.approx(total, abs=1e-4)


def test_pll_is_the_sum_of_masked_log_probs_on_minilm(minilm_mlm):
    words = ["The", "souvenirs", "are", "here", "."]
    (got,) = pll_scores(minilm_mlm, [words])
    total, per_piece = hand_pll(minilm_mlm, words, "original")
    assert len(got.units) == 7  # souvenirs: so ##uven ##irs
    np.testing.assert_allclose(got.log_probs, per_piece, atol=1e-4)
    assert got.total == pytest.approx(total, abs=1e-3)


def test_within_word_l2r_differs_exactly_on_multi_piece_words(tiny_mlm):
    single, multi = pll_scores(tiny_mlm, SENTENCES, "original")
    single_l2r, multi_l2r = pll_scores(tiny_mlm, SENTENCES, "within_word_l2r")
    np.testing.assert_array_equal(single.log_probs, single_l2r.log_probs)  # one piece each
    ids = np.array(multi.word_ids)
    assert list(multi.units[2:]) == ["un", "##able", "##s", "word", "##s"]
    # A piece with a later piece of its word is scored differently; the others are the same.
    has_later = np.array([np.any(ids[k + 1 :] == w) for k, w in enumerate(ids)])
    assert has_later.sum() == 3
    assert np.all(multi.log_probs[has_later] != multi_l2r.log_probs[has_later])
    np.testing.assert_allclose(multi.log_probs[~has_later], multi_l2r.log_probs[~has_later],
                               atol=1e-5)  # fmt: skip
    assert multi.total != multi_l2r.total


def test_mask_sets():
    ids = [None, 0, 1, 1, 1, 2, None]
    assert mask_sets(ids) == [[1], [2], [3], [4], [5]]
    assert mask_sets(ids, "within_word_l2r") == [[1], [2, 3, 4], [3, 4], [4], [5]]
    with pytest.raises(InvalidArgumentError, match="within_word_l2r"):
        mask_sets(ids, "l2r")


def test_elmo_score_is_forward_plus_backward_log_likelihood():
    from probing.minimal_pairs.bilm_score import bilm_scores, next_word_log_probs

    elmo = load_encoder("elmo-mini")
    sm = elmo.softmax
    sents = [["the", "author", "is", "here", "."], ["the", "authors", "qqzzqx"]]
    got = bilm_scores(elmo, sents, batch_size=1) + bilm_scores(elmo, sents)[1:]
    for words, score in zip([*sents, sents[1]], got, strict=True):
        fwd, bwd = next_word_log_probs(elmo, words)
        ids = [sm.word_id(w) for w in words]
        want = sum(float(fwd[i, t]) + float(bwd[i + 1, t]) for i, t in enumerate(ids))
        want += float(fwd[len(words), sm.word_id("</S>")]) + float(bwd[0, sm.word_id("<S>")])
        assert score.total == pytest.approx(want, abs=1e-3)
    assert got[1].out_of_vocabulary == ("qqzzqx",)
    # A pair whose changed word is outside the vocabulary is left out, not scored.
    pairs = [MinimalPair(("the", "cat", "sat"), ("the", "qqzzqx", "sat"), "x", "0"),
             MinimalPair(("the", "cat", "is"), ("the", "cat", "are"), "x", "1")]  # fmt: skip
    ps, _ = score_pairs(elmo, pairs)
    assert ps.kept.tolist() == [False, True]


def test_blimp_jsonl_reader(tmp_path):
    path = tmp_path / "anaphor_number_agreement.jsonl"
    lines = [
        {"sentence_good": "Many girls hurt themselves.", "sentence_bad": "Many girls hurt "
         "herself.", "UID": "anaphor_number_agreement", "linguistics_term": "anaphor_agreement",
         "pairID": "0"},
        {"sentence_good": "Bob sees himself.", "sentence_bad": "Bob sees themselves."},
    ]  # fmt: skip
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n\n", encoding="utf-8")
    pairs = read_blimp_jsonl(path)
    assert [p.paradigm for p in pairs] == ["anaphor_number_agreement"] * 2  # UID, else stem
    assert pairs[0].good == ("Many", "girls", "hurt", "themselves", ".")
    assert pairs[0].phenomenon == "anaphor_agreement" and pairs[0].group != pairs[1].group
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(lines[0]) + "\n" + json.dumps({"sentence_good": "A b."}) + "\n")
    with pytest.raises(DataFormatError, match=r"bad\.jsonl, line 2 has no sentence_bad"):
        read_blimp_jsonl(bad)
    bad.write_text("not json\n")
    with pytest.raises(DataFormatError, match="line 1 is not JSON"):
        read_blimp_jsonl(bad)


def test_few_pairs_warn():
    pairs = [MinimalPair(("a",), ("b",), "small", str(i)) for i in range(5)]
    pairs += [MinimalPair(("a",), ("b",), "big", str(i)) for i in range(25)]
    with pytest.warns(FewPairsWarning, match="'small' has 5 pairs"):
        msgs = few_pair_warnings(pairs)
    assert len(msgs) == 1


CONLLU = """# sent_id = s1
1	These	this	DET	DT	Number=Plur|PronType=Dem	2	det	_	_
2	books	book	NOUN	NNS	Number=Plur	3	nsubj	_	_
3	went	go	VERB	VBD	Mood=Ind|Tense=Past|VerbForm=Fin	0	root	_	_
4	far	far	ADV	RB	_	3	advmod	_	_

# sent_id = s2
1	She	she	PRON	PRP	Case=Nom|Gender=Fem|Number=Sing|Person=3|PronType=Prs	3	nsubj	_	_
2	has	have	AUX	VBZ	Mood=Ind|Number=Sing|Person=3|Tense=Pres|VerbForm=Fin	3	aux	_	_
3	hurt	hurt	VERB	VBN	Tense=Past|VerbForm=Part	0	root	_	_
4	herself	herself	PRON	PRP	Case=Acc|Gender=Fem|Number=Sing|Person=3|PronType=Prs|Reflex=Yes	3	obj	_	_
5	and	and	CCONJ	CC	_	7	cc	_	_
6	has	have	AUX	VBZ	_	7	aux	_	_
7	gone	go	VERB	VBN	Tense=Past|VerbForm=Part	3	conj	_	_

"""


def test_paradigm_rules_on_a_written_treebank():
    sents = conllu.parse(CONLLU)
    (det,) = P.determiner_pairs(sents)
    assert det.bad == ("This", "books", "went", "far") and det.group == "s1"
    (refl,) = P.reflexive_pairs(sents)
    assert refl.bad[3] == "themselves"
    past = P.past_form_pairs(sents, {"go": ("went", "gone")})
    assert {p.paradigm: p.bad for p in past} == {
        "ud: past vs participle": ("These", "books", "gone", "far"),
        "ud: participle vs past": ("She", "has", "hurt", "herself", "and", "has", "went"),
    }
    tpl = P.template_reflexive()
    assert len(tpl) == 96 and tpl[0].good[-1] == "himself" and tpl[0].bad[-1] == "themselves"
    with pytest.raises(InvalidArgumentError, match="Unknown paradigm source"):
        P.build(["blimp"])


def _scores(correct: list[bool], paradigm: str = "p", model: str = "m") -> PairScores:
    pairs = [MinimalPair(("a", str(i)), ("b", str(i)), paradigm, f"g{i // 2}")
             for i in range(len(correct))]  # fmt: skip
    good = np.array([1.0 if c else -1.0 for c in correct])
    return PairScores(model, "test", pairs, good, np.zeros(len(pairs)), np.ones(len(pairs), bool))


def test_accuracy_interval_and_paired_comparison():
    engine = Engine(n_boot=400)
    right = [True] * 30 + [False] * 10
    (row,) = accuracy_table(_scores(right), engine)
    assert row["accuracy"] == 0.75 and row["n_groups"] == 20
    assert row["accuracy_lo"] < 0.75 < row["accuracy_hi"] and row["warning"] == ""
    (small,) = accuracy_table(_scores(right[:8]), engine)
    assert "< 20" in small["warning"]
    (same,) = compare_runs(_scores(right, model="a"), _scores(right, model="b"), engine)
    assert same.value == 0 and not same.called
    (worse,) = compare_runs(_scores(right, model="a"), _scores([False] * 40, model="b"), engine)
    assert worse.value == 0.75 and worse.called and worse.paired
    # One model under two scorers: the rows name the scorers.
    l2r = _scores(right, model="a")
    l2r.scorer = "PLL (within_word_l2r)"
    (scorers,) = compare_runs(_scores(right, model="a"), l2r, engine)
    assert scorers.a == "a test: p" and scorers.b == "a PLL (within_word_l2r): p"
    # Stored and read back, the pairs give the same comparison.
    a = _scores(right, model="a")
    back = PairScores.from_rows(a.rows(), "a", "test")
    assert compare_runs(back, _scores([False] * 40, model="b"), engine)[0].value == 0.75


def test_cli_refuses_shipped_folder_and_runs_a_jsonl(tmp_path, capsys):
    from probing.cli.main import main

    path = tmp_path / "tiny.jsonl"
    rows = [{"sentence_good": f"the cat {v}", "sentence_bad": f"the cat {w}", "UID": "sva"}
            for v, w in (("is", "are"), ("sits", "sit"), ("was", "were"))]  # fmt: skip
    path.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    args = ["minimal-pairs", "--jsonl", str(path), "--ppl-sentences", "0", "--quiet"]
    assert main(args) == 2  # the default --out is the shipped results/minimal-pairs
    assert "--overwrite" in capsys.readouterr().err
    out = tmp_path / "out"
    with warnings.catch_warnings():
        warnings.simplefilter("error", FewPairsWarning)  # carried in the results, not raised
        assert main([*args, "--out", str(out), "--scorer", "within_word_l2r"]) == 0
    stem = out / "minilm-l6-mlm__minimal-pairs__within_word_l2r"
    payload = json.loads(stem.with_suffix(".json").read_text())
    assert payload["n_pairs"] == 3 and payload["rows"][0]["n_scored"] == 3
    assert payload["warnings"] and "'sva' has 3 pairs" in payload["warnings"][0]
    assert (out / f"{stem.name}.pairs.csv").is_file()
