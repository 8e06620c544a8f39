"""Uploaded CoNLL-U files: parsing, line-numbered errors for malformed input, the 80/20
split, and a tiny real probe run on an upload."""

from __future__ import annotations

import math

import pytest

from probing.datasets.upload import check_conllu, read_conllu_upload, split_train_test
from probing.errors import DataFormatError
from probing.probes import COLUMNS
from probing.probes.upload import probe_upload

CAP = 1024 * 1024

# Two sentences: comments, a multi-word token (3-4), an empty node (5.1), no final blank line.
GOOD = """# sent_id = s1
# text = I don't know.
1\tI\tI\tPRON\tPRP\t_\t4\tnsubj\t_\t_
2-3\tdon't\t_\t_\t_\t_\t_\t_\t_\t_
2\tdo\tdo\tAUX\tVBP\t_\t4\taux\t_\t_
3\tn't\tnot\tPART\tRB\t_\t4\tadvmod\t_\t_
4\tknow\tknow\tVERB\tVB\t_\t0\troot\t_\t_
5\t.\t.\tPUNCT\t.\t_\t4\tpunct\t_\t_

# sent_id = s2
1\tDogs\tdog\tNOUN\tNNS\t_\t2\tnsubj\t_\t_
2\tbark\tbark\tVERB\tVBP\t_\t0\troot\t_\t_
2.1\tloudly\tloudly\tADV\tRB\t_\t_\t_\t2:advmod\t_
3\t!\t!\tPUNCT\t.\t_\t2\tpunct\t_\t_"""


def test_good_file_parses_with_the_right_counts():
    sentences = read_conllu_upload(GOOD.encode(), CAP, name="mine.conllu")
    assert len(sentences) == 2
    first, second = sentences
    # syntactic words only: the 2-3 range and the 2.1 empty node are not words
    assert first.words == ["I", "do", "n't", "know", "."]
    assert first.labels["upos"] == ["PRON", "AUX", "PART", "VERB", "PUNCT"]
    assert first.labels["xpos"][0] == "PRP" and first.sent_id == "s1"
    assert first.doc_id == "mine.conllu" and first.meta["text"] == "I don't know."
    assert second.words == ["Dogs", "bark", "!"] and second.labels["upos"][-1] == "PUNCT"


def test_windows_line_endings_and_bom_are_fine():
    data = ("\ufeff" + GOOD.replace("\n", "\r\n") + "\r\n").encode()
    assert [len(s) for s in read_conllu_upload(data, CAP)] == [5, 3]


def test_the_real_ud_dev_file_reads_like_the_data_set_reader(data_dir):
    from probing.datasets import read_ud

    path = data_dir / "ud-english-ewt" / "en_ewt-ud-dev.conllu"
    mine = read_conllu_upload(path.read_bytes(), 50 * CAP)
    theirs = list(read_ud("dev", data_dir))
    assert len(mine) == len(theirs) == 2001
    assert sum(len(s) for s in mine) == sum(len(s) for s in theirs)
    assert mine[17].words == theirs[17].words
    assert mine[17].labels["upos"] == theirs[17].labels["upos"]


def _broken(line: int, replacement: str) -> bytes:
    """GOOD with 1-based ``line`` replaced."""
    lines = GOOD.split("\n")
    lines[line - 1] = replacement
    return "\n".join(lines).encode()


@pytest.mark.parametrize(
    ("data", "line", "words"),
    [
        (
            _broken(3, "1\tI\tI\tPRON"),
            3,
            "columns (ID FORM LEMMA UPOS XPOS FEATS HEAD DEPREL DEPS MISC), found 4",
        ),
        (_broken(7, "5  .  .  PUNCT  .  _  4  punct  _  _"), 7, "tabs, not spaces"),
        (_broken(3, "one\tI\tI\tPRON\tPRP\t_\t4\tnsubj\t_\t_"), 3, "not a word number"),
        (_broken(11, "1\tDogs\tdog\t_\tNNS\t_\t2\tnsubj\t_\t_"), 11, "no UPOS tag"),
        (_broken(12, "2\tbark\tbark\t\tVBP\t_\t0\troot\t_\t_"), 12, "no UPOS tag"),
        (_broken(5, "3\tdo\tdo\tAUX\tVBP\t_\t4\taux\t_\t_"), 5, "where 2 was expected"),
        (_broken(9, "# sent_id = s2 (blank line lost)"), 11, "blank line missing"),
        (_broken(6, "3\t \tnot\tPART\tRB\t_\t4\tadvmod\t_\t_"), 6, "empty FORM"),
    ],
    ids=[
        "too-few-columns",
        "spaces",
        "non-integer-id",
        "upos-underscore",
        "upos-empty",
        "id-out-of-order",
        "missing-blank-line",
        "empty-form",
    ],
)
def test_malformed_lines_name_the_line(data, line, words):
    with pytest.raises(DataFormatError) as info:
        read_conllu_upload(data, CAP)
    message = str(info.value)
    assert message.startswith(f"Line {line}:"), message
    assert words in message
    assert info.value.line == line


def test_not_utf8_names_the_line_of_the_bad_byte():
    data = GOOD.encode().replace(b"know\tknow", b"kn\xf6w\tknow")
    with pytest.raises(DataFormatError, match=r"^Line 7: byte 0xf6 is not UTF-8") as info:
        read_conllu_upload(data, CAP)
    assert info.value.line == 7


@pytest.mark.parametrize("data", [b"", b"\n\n  \n", b"# just a comment\n\n# another\n"])
def test_empty_files_are_refused(data):
    with pytest.raises(DataFormatError, match=r"^Line 1: the file (is empty|has no sentences)"):
        read_conllu_upload(data, CAP)


def test_too_large_names_the_cap():
    with pytest.raises(DataFormatError, match=r"limited to 1\.0 MB \(1,048,576 bytes\)") as info:
        read_conllu_upload(b"x" * (CAP + 1), CAP)
    assert info.value.line is None
    # exactly at the cap is fine (and then parsed)
    padded = GOOD.encode() + b"\n" * (CAP - len(GOOD.encode()))
    assert len(read_conllu_upload(padded, CAP)) == 2


def test_check_returns_normalised_text():
    assert check_conllu("1\ta\ta\tX\t_\t_\t0\troot\t_\t_\r\n   \r\n") == (
        "1\ta\ta\tX\t_\t_\t0\troot\t_\t_\n\n\n"
    )


def _sentences(n: int):
    one = "1\tword{i}\tw\t{tag}\t_\t_\t0\troot\t_\t_\n2\t.\t.\tPUNCT\t.\t_\t1\tpunct\t_\t_\n\n"
    text = "".join(one.format(i=i, tag="NOUN" if i % 2 else "VERB") for i in range(n))
    return read_conllu_upload(text.encode(), CAP)


def test_split_is_every_fifth_sentence_and_deterministic():
    sentences = _sentences(12)
    train, test = split_train_test(sentences)
    assert [s.words[0] for s in test] == ["word4", "word9"]
    assert len(train) == 10 and {s.split for s in train} == {"train"}
    assert {s.split for s in test} == {"test"}
    assert split_train_test(sentences) == (train, test)
    with pytest.raises(DataFormatError, match="at least 5"):
        split_train_test(sentences[:4])


def test_probe_upload_gives_probe_results(minilm, data_dir):
    path = data_dir / "ud-english-ewt" / "en_ewt-ud-dev.conllu"
    sentences = read_conllu_upload(path.read_bytes(), 50 * CAP, name="dev.conllu")[:40]
    stages = set()
    res = probe_upload(
        minilm,
        sentences,
        layers=[0, 3],
        n_boot=100,
        name="dev.conllu",
        progress=lambda stage, done, total: stages.add(stage),
    )
    assert stages == {"extract train", "extract test", "fit"}
    assert list(res.table.columns) == COLUMNS
    assert res.dataset == "upload:dev.conllu" and res.metric == "accuracy"
    scores = res.layer_scores()
    assert list(scores["layer"]) == [0, 3]
    assert ((scores["value"] - scores["control"] - scores["selectivity"]).abs() < 1e-9).all()
    assert (scores["ci_low"] <= scores["value"]).all() and (
        scores["value"] <= scores["ci_high"]
    ).all()
    assert set(res.baselines()["probe"]) == {"majority", "word_type", "static"}
    assert res.meta["n_train_sentences"] == 32 and res.meta["n_test_sentences"] == 8
    assert math.isclose(sum(res.scalar_mix["weights"]), 1.0, rel_tol=1e-6)
    assert res.scalar_mix["layers"] == [0, 3]
    assert res.meta["bootstrap_unit"] == "sentence" and res.meta["n_dev_words"] == 0
