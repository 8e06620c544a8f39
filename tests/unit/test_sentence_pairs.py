"""The NSP/SOP pair builder on the real Brown and UD-EWT documents: pairs never cross the
document split, and each kind of pair is what it says."""

from __future__ import annotations

import pytest

from probing.training.sentence_pairs import (
    KINDS,
    anchor_pairs,
    pairs_of,
    read_documents,
    sample_anchors,
)


@pytest.fixture(scope="module")
def splits():
    return {s: read_documents(s) for s in ("train", "dev", "test")}


def test_documents_are_split_whole(splits):
    ids = {s: {d.doc_id for d in docs} for s, docs in splits.items()}
    assert ids["train"] and ids["dev"] and ids["test"]
    assert not ids["train"] & ids["test"] and not ids["train"] & ids["dev"]
    assert not ids["dev"] & ids["test"]
    # both corpora on both sides of the split
    for s in ("train", "test"):
        assert {i.split(":")[0] for i in ids[s]} == {"brown", "ewt"}


def test_test_pairs_never_use_a_training_sentence(splits):
    docs = splits["test"]
    test_sents = {t for d in docs for t in d.sentences}
    train_only = {t for d in splits["train"] for t in d.sentences} - test_sents
    pairs = list(pairs_of(sample_anchors(docs, 3, seed=0), docs, seed=0))
    assert len(pairs) > 1000 and {p.kind for p in pairs} == set(KINDS)
    for p in pairs:
        assert p.a in test_sents and p.b in test_sents
        assert p.a not in train_only and p.b not in train_only


def test_each_kind_is_what_it_says(splits):
    docs = splits["test"]
    by_id = {d.doc_id: d for d in docs}
    anchors = sample_anchors(docs, 2, seed=1)
    for anchor in anchors[:300]:
        nxt, other, same, swapped = anchor_pairs(anchor, docs, seed=1)
        s, i = docs[anchor.doc].sentences, anchor.index
        assert (nxt.a, nxt.b, nxt.label) == (s[i], s[i + 1], 0)
        assert (swapped.a, swapped.b, swapped.label) == (s[i + 1], s[i], 1)
        assert same.label == other.label == 1 and same.a == other.a == s[i]
        far = [j for j, t in enumerate(s) if t == same.b]
        assert any(abs(j - i) >= 2 for j in far)  # same document, not adjacent
        assert other.b not in by_id[nxt.doc_id].sentences  # from another document


def test_pairs_do_not_depend_on_which_kinds_or_anchors_are_asked(splits):
    docs = splits["dev"]
    anchors = sample_anchors(docs, 2, seed=0)
    full = anchor_pairs(anchors[5], docs, seed=0)
    alone = anchor_pairs(anchors[5], docs, seed=0, kinds=("same_doc",))
    assert alone[0] == full[KINDS.index("same_doc")]
    assert list(pairs_of(anchors[5:6], docs, seed=0)) == full
