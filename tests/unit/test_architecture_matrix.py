"""Every analysis on every `transformers` encoder architecture: tiny random masked LMs
(hidden 32, 2 layers, 2 heads) of BERT, RoBERTa, DistilBERT, ELECTRA, ALBERT, DeBERTa-v2 and
MPNet, with tokenizers built here (WordPiece, byte-level BPE, SentencePiece), run through
attention (raw, norm-weighted, rollout, flow, head statistics), fill-mask and its logit and
tuned lenses, the erasure LM effect, agreement, activation patching (layer and head) and head
ablation. Random weights: the assertions are shapes and exact identities (no-op hooks
reproduce the clean pass bit for bit; patching every position from run B into run A gives
run B), never values. Architectures the surface cannot hook get their typed reason.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pytest
import torch

from probing.analyses.attention import encode_attention, head_statistics
from probing.analyses.attention_norms import encode_norm_attention, value_norms_of
from probing.analyses.fill_mask import fill_mask, fill_mask_by_layer, piece_note
from probing.analyses.rollout import flow, rollout
from probing.analyses.tuned_lens import collect_states, read_masks, train_tuned_lens
from probing.encoders.bert import TransformersEncoder
from probing.encoding import ModelInfo
from probing.errors import NoAttentionError, UnsupportedArchitectureError
from probing.interventions.agreement import AgreementCase, margins, prepare
from probing.interventions.erasure import random_eraser
from probing.interventions.heads import ablate_heads, importance
from probing.interventions.hooks import (
    head_mask,
    head_outputs,
    mlm_logits,
    model_parts,
    replaced_hidden,
)
from probing.interventions.masked_words import (
    masked_batches,
    score_above,
    score_clean,
    score_masked,
)
from probing.interventions.patching import make_batches, patch_all_positions, patch_pairs

if TYPE_CHECKING:
    from transformers import PreTrainedModel, PreTrainedTokenizerFast, RobertaTokenizerFast

    from probing.interventions.masked_words import MaskedBatch

WORDS = [
    "the",
    "author",
    "authors",
    "pilot",
    "pilots",
    "doctor",
    "doctors",
    "is",
    "are",
    "has",
    "have",
    "near",
    "here",
    "time",
    "that",
    "like",
    "likes",
    "cat",
    "sat",
    "on",
    "mat",
    "a",
    "dog",
    "left",
    "room",
]
SENTENCES = [
    "the author is here",
    "the authors are here",
    "the pilot near the doctors has time",
    "the pilots near the doctor have time",
    "the cat sat on the mat",
    "a dog left the room",
    "the doctor that the pilots like is here",
    "the doctors that the author likes are here",
]
SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "<s>", "</s>", "<pad>", "<mask>"]
SIZES = {
    "hidden_size": 32,
    "num_hidden_layers": 2,
    "num_attention_heads": 2,
    "intermediate_size": 48,
    "max_position_embeddings": 64,
}
ARCHITECTURES = ["bert", "roberta", "distilbert", "electra", "albert", "deberta-v2", "mpnet"]
CONVENTION = {
    "bert": "wordpiece",
    "distilbert": "wordpiece",
    "electra": "wordpiece",
    "mpnet": "wordpiece",
    "roberta": "bpe",
    "albert": "sentencepiece",
    "deberta-v2": "sentencepiece",
}


# -- tokenizers, built from the words above ---------------------------------------------------


def _wordpiece(family: str) -> PreTrainedTokenizerFast:
    import transformers as tf

    pieces = [*SPECIALS, *WORDS, "##s", *"abcdefghijklmnopqrstuvwxyz"]
    vocab = {p: i for i, p in enumerate(dict.fromkeys(pieces))}
    if family == "mpnet":
        return tf.MPNetTokenizerFast(vocab=vocab, unk_token="[UNK]")
    cls = {
        "bert": tf.BertTokenizerFast,
        "distilbert": tf.DistilBertTokenizerFast,
        "electra": tf.ElectraTokenizerFast,
    }[family]
    return cls(vocab=vocab)


def _bpe(folder: Path) -> RobertaTokenizerFast:
    from tokenizers import ByteLevelBPETokenizer
    from transformers import RobertaTokenizerFast

    bpe = ByteLevelBPETokenizer(add_prefix_space=True)
    bpe.train_from_iterator(
        [*SENTENCES, "un café"] * 4,
        vocab_size=400,
        min_frequency=1,
        special_tokens=["<s>", "<pad>", "</s>", "<unk>", "<mask>"],
    )
    bpe.save_model(str(folder))
    # As the registry loads byte-level tokenizers: with a prefix space.
    return RobertaTokenizerFast.from_pretrained(str(folder), add_prefix_space=True)


def _sentencepiece(family: str) -> PreTrainedTokenizerFast:
    """A SentencePiece-style Unigram tokenizer: "▁word" for the words above (a word start),
    "s" and single letters to spell the rest, Metaspace splitting as in ALBERT/DeBERTa-v2."""
    import transformers as tf
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from tokenizers.processors import TemplateProcessing

    special = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    pieces = [(p, 0.0) for p in special] + [("▁" + w, -1.0) for w in WORDS]
    pieces += [(c, -5.0) for c in "▁abcdefghijklmnopqrstuvwxyz"]
    backend = Tokenizer(models.Unigram(pieces, unk_id=1, byte_fallback=False))
    backend.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always")
    backend.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always")
    backend.post_processor = TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", 2), ("[SEP]", 3)],
    )
    cls = tf.AlbertTokenizerFast if family == "albert" else tf.DebertaV2TokenizerFast
    return cls(
        tokenizer_object=backend,
        unk_token="[UNK]",
        pad_token="[PAD]",
        cls_token="[CLS]",
        sep_token="[SEP]",
        mask_token="[MASK]",
    )


def _model(family: str, tok: PreTrainedTokenizerFast) -> PreTrainedModel:
    import transformers as tf

    common = {**SIZES, "vocab_size": len(tok), "pad_token_id": tok.pad_token_id}
    torch.manual_seed(0)
    if family == "bert":
        return tf.BertForMaskedLM(tf.BertConfig(**common))
    if family == "roberta":
        return tf.RobertaForMaskedLM(tf.RobertaConfig(**common))
    if family == "distilbert":
        cfg = tf.DistilBertConfig(
            dim=32, n_layers=2, n_heads=2, hidden_dim=48, vocab_size=len(tok),
            max_position_embeddings=64, pad_token_id=tok.pad_token_id,
        )  # fmt: skip
        return tf.DistilBertForMaskedLM(cfg)
    if family == "electra":
        return tf.ElectraForMaskedLM(tf.ElectraConfig(embedding_size=16, **common))
    if family == "albert":
        return tf.AlbertForMaskedLM(tf.AlbertConfig(embedding_size=16, **common))
    if family == "deberta-v2":
        cfg = tf.DebertaV2Config(relative_attention=True, pos_att_type=["p2c", "c2p"], **common)
        return tf.DebertaV2ForMaskedLM(cfg)
    if family == "mpnet":
        return tf.MPNetForMaskedLM(tf.MPNetConfig(**common))
    raise ValueError(family)


def tiny_encoder(family: str, folder: Path) -> TransformersEncoder:
    """A tiny random masked LM of ``family`` with its own kind of tokenizer."""
    if CONVENTION[family] == "wordpiece":
        tok = _wordpiece(family)
    elif CONVENTION[family] == "bpe":
        tok = _bpe(folder)
    else:
        tok = _sentencepiece(family)
    info = ModelInfo(f"tiny-{family}", "bert", 0, 0, "tiny random weights (a test)")
    model = _model(family, tok)
    model.set_attn_implementation("eager")  # as the registry loads models: attention maps
    return TransformersEncoder(model, tok, info, device="cpu")


@pytest.fixture(scope="module", params=ARCHITECTURES)
def enc(request, tmp_path_factory) -> TransformersEncoder:
    return tiny_encoder(request.param, tmp_path_factory.mktemp(request.param))


def _split(sentences: list[str]) -> list[list[str]]:
    return [s.split() for s in sentences]


def _case(
    words: str, verb: int, number: str, correct: str, wrong: str, group: str
) -> AgreementCase:
    return AgreementCase(
        tuple(words.split()), verb, 1, number, correct, wrong, 0, verb - 1, "t", group
    )


BASES = [
    _case("the author is here", 2, "Sing", "is", "are", "g0"),
    _case("the pilot near the doctors has time", 5, "Sing", "has", "have", "g1"),
]
SOURCES = [
    _case("the authors are here", 2, "Plur", "are", "is", "g0"),
    _case("the pilots near the doctors have time", 5, "Plur", "have", "has", "g1"),
]


# -- the matrix -------------------------------------------------------------------------------


def test_capabilities_are_declared_in_the_info(enc):
    info = enc.info
    family = info.name.removeprefix("tiny-")
    assert (info.lm_kind, info.objective, info.n_heads, info.n_contextual_layers) == (
        "masked", "masked", 2, 2,
    )  # fmt: skip
    assert info.has_attention and info.has_cls_token and info.has_mlm_head
    assert info.has_layer_hooks and info.has_head_hooks and info.has_value_norms
    assert info.no_hooks_reason == "" and info.direction_blocks == 1
    assert info.piece_convention == CONVENTION[family]
    # the checkpoint's own architecture (its config's model_type), not the encoder family
    assert info.architecture == family and info.family == "bert"


@torch.inference_mode()
def test_no_op_hooks_reproduce_the_clean_logits_bit_for_bit(enc):
    batches = masked_batches(enc, _split(SENTENCES), every=2)
    parts = model_parts(enc)
    b = batches[0]
    clean = mlm_logits(enc, b.inputs, b.rows, b.cols)
    for layer in range(parts.n_layers + 1):
        with replaced_hidden(parts, layer, lambda h: h), head_outputs(parts, lambda _b, x: x):
            assert torch.equal(mlm_logits(enc, b.inputs, b.rows, b.cols), clean)
    with head_mask(parts, torch.ones(parts.n_layers, parts.n_heads)):
        assert torch.equal(mlm_logits(enc, b.inputs, b.rows, b.cols), clean)
    with head_mask(parts, torch.zeros(parts.n_layers, parts.n_heads)):
        assert not torch.allclose(mlm_logits(enc, b.inputs, b.rows, b.cols), clean)


def test_attention_raw_norm_weighted_rollout_flow_and_head_statistics(enc):
    amap = encode_attention(enc, SENTENCES[2])
    n = amap.n_tokens
    assert amap.weights.shape == (2, 2, n, n)
    norms = value_norms_of(enc, amap)
    assert norms.shape == (2, 2, n) and (norms > 0).all()
    weighted = encode_norm_attention(enc, SENTENCES[2])
    for m in (amap, weighted):
        np.testing.assert_allclose(m.weights.sum(-1), 1.0, atol=1e-5)
    rolled = rollout(amap)
    assert rolled.weights.shape == (2, 1, n, n)
    np.testing.assert_allclose(rolled.weights.sum(-1), 1.0, atol=1e-5)
    assert flow(amap, 2).weights.shape == (1, 1, n, n)
    stats = head_statistics([amap, weighted])
    assert stats.shape == (2, 2) and stats.n_sentences == 2


def test_fill_mask_its_layer_lens_and_the_tuned_lens(enc):
    family = enc.info.name.removeprefix("tiny-")
    text = "the [MASK] is here"
    (pred,) = fill_mask(enc, text, top_k=5)
    assert len(pred.tokens) == 5 and pred.probabilities == sorted(pred.probabilities)[::-1]
    assert pred.piece_convention == CONVENTION[family] and piece_note(pred.piece_convention)
    if CONVENTION[family] != "wordpiece":  # each tokenizer's own marks, never WordPiece's
        assert not any(t.startswith("##") for t in pred.tokens)
    layers = fill_mask_by_layer(enc, text, top_k=5)
    assert layers.n_layer_arrays == 3
    assert layers.masks[0].tokens[-1] == pred.tokens  # the last row is the model's own
    lens = train_tuned_lens(enc, _split(SENTENCES), steps=2)
    readout = read_masks(enc, enc.tokenize_masked(["the", " is here"]), lens)
    assert readout.logit_rank.shape == readout.tuned_rank.shape == (3, 1)
    assert collect_states(enc, _split(SENTENCES)).shape[::2] == (3, 32)


@torch.inference_mode()
def test_erasure_lm_effect_from_the_clean_states_equals_the_hooked_pass(enc):
    batches = masked_batches(enc, _split(SENTENCES), every=2)
    parts = model_parts(enc)
    clean, states = score_clean(enc, batches)
    assert states is not None  # every family's blocks add up to its output
    np.testing.assert_allclose(clean.loss, score_masked(enc, batches).loss, atol=1e-5)
    eraser = random_eraser(32, 4, seed=0)
    for layer in range(parts.n_layers + 1):
        (same,) = score_above(enc, batches, states, layer, [lambda h: h])
        np.testing.assert_allclose(same.loss, clean.loss, atol=1e-5)
        (fast,) = score_above(enc, batches, states, layer, [eraser.torch_apply])

        def during(
            batch: MaskedBatch, layer: int = layer
        ) -> contextlib.AbstractContextManager[None]:
            pos = batch.word_pos[..., None]
            return replaced_hidden(
                parts, layer, lambda h: torch.where(pos, eraser.torch_apply(h), h)
            )

        np.testing.assert_allclose(fast.loss, score_masked(enc, batches, during).loss, atol=1e-4)


def test_agreement_and_patching_every_position_gives_the_other_run(enc):
    prepared = prepare(enc, BASES + SOURCES)
    assert prepared.kept == [0, 1, 2, 3]
    clean = margins(enc, prepared)
    parts = model_parts(enc)
    no_op = margins(enc, prepared, lambda: replaced_hidden(parts, 1, lambda h: h))
    assert clean.shape == (4,) and np.array_equal(clean, no_op)
    batches = make_batches(enc, list(zip(BASES, SOURCES, ["g0", "g1"], strict=True)))
    for batch in batches:
        for layer in range(parts.n_layers + 1):
            patched, source = patch_all_positions(enc, batch, layer)
            assert torch.equal(patched, source), layer
    out = patch_pairs(enc, batches, n_boot=20)
    assert out["n_pairs"] == 2
    assert np.shape(out["roles"]["y"]) == (3,) and np.shape(out["heads"]["y"]) == (2,)


def test_head_importance_and_ablation(enc):
    batches = masked_batches(enc, _split(SENTENCES), every=2)
    imp = importance(enc, batches)
    assert imp.shape == (2, 2)
    np.testing.assert_allclose(np.linalg.norm(imp, axis=1), 1.0, atol=1e-6)
    prepared = prepare(enc, BASES + SOURCES)
    out = ablate_heads(enc, batches, prepared, ["g0", "g1", "g0", "g1"], n_boot=20)
    assert len(out["heads"]) == 4 and {r["layer"] for r in out["heads"]} == {1, 2}
    assert np.shape(out["importance"]) == (2, 2) and out["n_agreement_cases"] == 4


def test_bpe_labels_keep_the_word_start_marker_and_decode_bytes(tmp_path):
    from probing.encoders.bert_mlm import piece_convention, token_labels

    tok = _bpe(tmp_path)
    (piece_id,) = tok([["café"]], is_split_into_words=True, add_special_tokens=False)["input_ids"]
    assert tok.convert_ids_to_tokens(piece_id) == ["ĠcafÃ©"]  # bytes written as characters
    assert token_labels(tok, piece_id) == ["Ġcafé"]
    assert piece_convention(tok) == "bpe"
    assert piece_convention(_wordpiece("bert")) == "wordpiece"
    assert piece_convention(_sentencepiece("albert")) == "sentencepiece"


# -- what cannot be hooked says so --------------------------------------------------------------


def test_an_albert_with_inner_layer_groups_gets_its_typed_reason():
    import transformers as tf

    tok = _sentencepiece("albert")
    cfg = tf.AlbertConfig(embedding_size=16, inner_group_num=2, vocab_size=len(tok), **SIZES)
    info = ModelInfo("tiny-albert-groups", "bert", 0, 0, "tiny random weights (a test)")
    model = tf.AlbertForMaskedLM(cfg)
    model.set_attn_implementation("eager")
    enc = TransformersEncoder(model, tok, info, device="cpu")
    assert enc.info.lm_kind == "masked" and not enc.info.has_head_hooks
    assert "ALBERT" in enc.info.no_hooks_reason and "inner" in enc.info.no_hooks_reason
    (pred,) = fill_mask(enc, "the [MASK] is here", top_k=3)  # what needs no hooks still works
    assert len(pred.tokens) == 3
    with pytest.raises(NoAttentionError, match="AlbertModel.*inner"):
        value_norms_of(enc, encode_attention(enc, SENTENCES[0]))
    with pytest.raises(UnsupportedArchitectureError, match="ALBERT"):
        patch_pairs(enc, make_batches(enc, [(BASES[0], SOURCES[0], "g0")]), n_boot=10)


@torch.inference_mode()
def test_elmo_mini_row_agreement_patching_and_the_lm_effect_through_its_surface():
    """ELMo's row of the matrix: the same analyses through its surface (its forward LM,
    left context only, for agreement and patching; both LMs for the erasure LM effect):
    no-op hooks reproduce the clean pass bit for bit, patching every position of any layer
    from run B into run A gives run B, and it has no heads to patch."""
    from probing.interventions.masked_words import next_word_batches
    from probing.models.registry import load_encoder

    elmo = load_encoder("elmo-mini")
    assert elmo.info.lm_directions == ("forward", "backward")  # its folder ships the softmax
    parts = elmo.layer_parts()
    prepared = prepare(elmo, BASES + SOURCES)
    assert prepared.kept == [0, 1, 2, 3]
    clean = margins(elmo, prepared)
    for layer in range(parts.n_layers + 1):
        no_op = margins(elmo, prepared, lambda L=layer: replaced_hidden(parts, L, lambda h: h))
        assert np.array_equal(clean, no_op), layer
    batches = make_batches(elmo, list(zip(BASES, SOURCES, ["g0", "g1"], strict=True)))
    for batch in batches:
        for layer in range(parts.n_layers + 1):
            patched, source = patch_all_positions(elmo, batch, layer)
            assert torch.equal(patched, source), layer
    out = patch_pairs(elmo, batches, n_boot=20)
    assert out["n_pairs"] == 2 and out["heads"] is None
    assert np.shape(out["roles"]["z"]) == (3, 4) and "last word" in out["roles"]["x"]
    words = next_word_batches(elmo, _split(SENTENCES))
    scores = score_masked(elmo, words)
    assert scores.loss.size == sum(b.rows.numel() for b in words) > 0
    eraser = random_eraser(elmo.info.dim, 4, seed=0)
    for layer in range(parts.n_layers + 1):

        def during(batch: object, layer: int = layer) -> contextlib.AbstractContextManager[None]:
            pos = batch.word_pos[..., None]
            return replaced_hidden(parts, layer, lambda h: torch.where(pos, h, h))

        same = score_masked(elmo, words, during)
        assert np.array_equal(same.loss, scores.loss), layer
        erased = score_masked(
            elmo,
            words,
            lambda b, L=layer: replaced_hidden(
                parts, L, lambda h: torch.where(b.word_pos[..., None], eraser.torch_apply(h), h)
            ),
        )
        assert erased.loss.shape == scores.loss.shape and not np.array_equal(
            erased.loss, scores.loss
        )
    with pytest.raises(UnsupportedArchitectureError, match="no attention heads"):
        head_outputs(parts, lambda _b, x: x).__enter__()


def test_elmo_declares_what_it_lacks_and_each_analysis_says_so():
    from probing.errors import NoLMHeadError, NoMLMHeadError
    from probing.models.registry import entry, load_encoder

    elmo = load_encoder("elmo-mini")
    info = elmo.info
    assert (info.objective, info.direction_blocks, info.n_heads) == ("bidirectional-lm", 2, 0)
    assert info.lm_kind == ("bidirectional-lm" if elmo.softmax is not None else "")
    assert info.has_layer_hooks and not info.has_cls_token and not info.has_attention
    assert not info.has_head_hooks and not info.has_value_norms
    assert "elmo-mini" in info.no_hooks_reason and "LSTM" in info.no_hooks_reason
    before = entry("elmo-mini").info  # what pages know before loading it
    assert (before.objective, before.has_attention) == ("bidirectional-lm", False)
    with pytest.raises(NoAttentionError, match="elmo-mini"):
        encode_attention(elmo, SENTENCES[0])
    with pytest.raises(NoMLMHeadError, match="elmo-mini"):
        fill_mask(elmo, "the [MASK] is here")
    with pytest.raises(NoLMHeadError, match="elmo-mini.*bi-LM softmax"):
        model_parts(elmo)  # heads, patching and ablation need a masked LM's hooks
