"""Pair heads on the real frozen minilm-l6: a head trained on a handful of pairs separates
them, and the exported head gives the same answers through BertForPreTraining and the NSP
view's code path."""

from __future__ import annotations

import argparse
import json

import pytest
import torch

from probing.analyses.nsp import NspModel, next_sentence_probability
from probing.errors import ModelUnavailableError
from probing.models.pair_heads import (
    HEAD_FILE,
    MANIFEST_FILE,
    base_pretraining_model,
    load_pair_head,
    save_pair_head,
)
from probing.training.pair_features import cached_cls, encode_cls
from probing.training.pair_heads import train_head
from probing.training.sentence_pairs import Document, anchor_pairs, sample_anchors

DOCS = [
    Document("kitchen", ["She opened the fridge.", "It was empty.", "She sighed loudly.",
                         "Then she went to the shop."]),
    Document("match", ["The striker took the penalty.", "The keeper dived the wrong way.",
                       "The crowd roared.", "The referee blew the whistle."]),
    Document("court", ["The judge read the verdict.", "The defendant stood still.",
                       "His lawyer said nothing.", "The jury left the room."]),
]  # fmt: skip


@pytest.fixture(scope="module")
def base():
    return base_pretraining_model()


def _args(**kw) -> argparse.Namespace:
    d = dict(seed=0, lr=5e-3, weight_decay=0.0, batch_size=4, epochs=60, max_steps=None,
             checkpoint_minutes=60.0, fresh=True)  # fmt: skip
    return argparse.Namespace(**{**d, **kw})


def _handful():
    anchors = sample_anchors(DOCS, None, seed=0)
    pairs = [p for a in anchors for p in anchor_pairs(a, DOCS, 0, ("next", "other_doc"))]
    return pairs


def test_a_head_trained_on_a_handful_of_pairs_separates_them(base, tmp_path):
    model, tokenizer = base
    pairs = _handful()
    assert len(pairs) == 18 and {p.label for p in pairs} == {0, 1}
    x = cached_cls(model, tokenizer, pairs, tmp_path / "f", "toy", log=lambda _m: None)
    y = torch.tensor([p.label for p in pairs])
    head, state = train_head("nsp", x, y, x, y, _args(), tmp_path)
    with torch.no_grad():
        pred = head(x).argmax(-1)
    assert (pred == y).all(), state["history"][-1]
    # the export loads into BertForPreTraining and gives the same answers from raw text
    save_pair_head(head, tmp_path / "minilm-l6-nsp", {"task": "nsp", "training": {}})
    model2, tok2, manifest = load_pair_head(tmp_path / "minilm-l6-nsp")
    assert manifest["task"] == "nsp"
    nsp = NspModel("toy", model2, tok2)
    for p, want in zip(pairs, y.tolist(), strict=True):
        res = next_sentence_probability(nsp, p.a, p.b)
        assert (res.not_next > res.is_next) == bool(want), (p, res)


def test_the_cache_returns_what_the_encoder_computes(base, tmp_path):
    model, tokenizer = base
    pairs = _handful()[:5]
    fresh = encode_cls(model, tokenizer, pairs)
    cached = cached_cls(model, tokenizer, pairs, tmp_path, "x", log=lambda _m: None)
    again = cached_cls(model, tokenizer, pairs, tmp_path, "x", log=lambda _m: None)
    torch.testing.assert_close(cached, fresh)
    torch.testing.assert_close(again, fresh)
    one = encode_cls(model, tokenizer, pairs[:1], batch=1)  # padding changes nothing
    torch.testing.assert_close(one[0], fresh[0], atol=1e-5, rtol=1e-5)


def test_a_damaged_export_is_refused(base, tmp_path):
    from probing.models.pair_heads import PairHead

    folder = tmp_path / "minilm-l6-sop"
    save_pair_head(PairHead(384), folder, {"task": "sop", "training": {}})
    (folder / HEAD_FILE).write_bytes((folder / HEAD_FILE).read_bytes()[:-10])
    with pytest.raises(ModelUnavailableError, match="does not match"):
        load_pair_head(folder)
    save_pair_head(PairHead(384), folder, {"task": "sop", "training": {}})
    manifest = json.loads((folder / MANIFEST_FILE).read_text())
    manifest["base_sha256"] = "0" * 64
    (folder / MANIFEST_FILE).write_text(json.dumps(manifest))
    with pytest.raises(ModelUnavailableError, match="trained on minilm-l6"):
        load_pair_head(folder)
