"""GloVe / word2vec text-format loading: both layouts, gzip, caps and clear errors."""

from __future__ import annotations

import gzip

import numpy as np
import pytest

from probing.analyses.static_vectors import load_static_vectors
from probing.errors import DataFormatError, DatasetNotFoundError

GLOVE = (
    "the 0.1 0.2 0.3\nbank 1.0 0.0 0.5\nriver 0.9 0.1 0.4\n2010 0.0 1.0 0.0\nmoney -1.0 0.5 0.5\n"
)


def write(tmp_path, name: str, text: str):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_glove_without_header(tmp_path):
    vecs = load_static_vectors(write(tmp_path, "glove.txt", GLOVE))
    assert len(vecs) == 5 and vecs.dim == 3
    assert vecs.words[:2] == ["the", "bank"]
    np.testing.assert_array_equal(vecs.vector("bank"), np.array([1.0, 0.0, 0.5], np.float32))
    assert vecs.vectors.dtype == np.float32
    assert "2010" in vecs  # a word that is a number is still a word


def test_word2vec_header_and_gzip(tmp_path):
    text = "5 3\n" + GLOVE
    plain = load_static_vectors(write(tmp_path, "w2v.txt", text))
    gz = tmp_path / "w2v.txt.gz"
    with gzip.open(gz, "wt", encoding="utf-8") as f:
        f.write(text)
    packed = load_static_vectors(gz)
    assert plain.words == packed.words == ["the", "bank", "river", "2010", "money"]
    np.testing.assert_array_equal(plain.vectors, packed.vectors)


def test_max_words_keeps_the_first(tmp_path):
    vecs = load_static_vectors(write(tmp_path, "w2v.txt", "5 3\n" + GLOVE), max_words=2)
    assert vecs.words == ["the", "bank"]


def test_lookup_is_case_tolerant_and_says_what_is_missing(tmp_path):
    vecs = load_static_vectors(write(tmp_path, "glove.txt", GLOVE))
    assert vecs.key("Bank") == "bank" and "BANK" in vecs
    found, missing = vecs.lookup(["Bank", "river", "embankment"])
    assert found.shape == (2, 3) and missing == ["embankment"]
    with pytest.raises(KeyError, match="embankment"):
        vecs.vector("embankment")
    neighbours = vecs.most_similar("bank", k=2)
    assert neighbours[0][0] == "river" and "bank" not in [w for w, _ in neighbours]


def test_missing_file(tmp_path):
    with pytest.raises(DatasetNotFoundError, match="not found"):
        load_static_vectors(tmp_path / "nope.txt")


@pytest.mark.parametrize(
    ("text", "pattern"),
    [
        ("the 0.1 0.2 0.3\nbank 1.0 0.0\n", "line 2: expected a word and 3 numbers"),
        ("the 0.1 0.2 0.3\nriver 1.0 0.0 0.5\nbank 1.0 x 0.5\n", "line 3: a value is not a number"),
        ("just words here\n", "line 1: expected a word followed by numbers"),
        ("3 3\nthe 0.1 0.2 0.3\n", "header says 3 vectors but the file has 1"),
        ("", "holds no vectors"),
        (
            "the 0.1 0.2 0.3\n0.5 0.1 0.2 0.3 0.4\n",
            "line 2: expected 3 numbers after the word, found more",
        ),
    ],
)
def test_malformed_files_name_the_line(tmp_path, text, pattern):
    with pytest.raises(DataFormatError, match=pattern):
        load_static_vectors(write(tmp_path, "bad.txt", text))


def test_binary_file_is_refused_clearly(tmp_path):
    path = tmp_path / "vectors.bin"
    path.write_bytes(b"3 2\nthe \xff\xfe\x00\x01\x80\x81\x82\x83\n")
    with pytest.raises(DataFormatError, match="binary word2vec"):
        load_static_vectors(path)
