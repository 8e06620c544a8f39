"""The minilm-l6-mlm delta: round trip, untouched base, tied decoder, size, held-out accuracy."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from transformers import BertConfig, BertForMaskedLM

from probing.errors import ModelUnavailableError
from probing.models.embedded import MINILM_MLM_DELTA, minilm_dir
from probing.models.mlm_delta import (
    DELTA_FILE,
    MANIFEST_FILE,
    apply_delta,
    base_state_dict,
    file_sha256,
    load_base_into,
    load_minilm_mlm,
    load_minilm_tokenizer,
    read_manifest,
    save_delta,
)
from probing.training.mlm_head import (
    FIRST_REAL_PIECE,
    LOG_NAME,
    evaluate_mlm,
    mask_batch,
    masked_sample,
    unigram_baseline,
)

# 4 retrained layers x ~1.78M params x 2 bytes (fp16 differences) = 14.2 MB, + the fp32 head
# ~0.7 MB: the most we ship.
MAX_DELTA_BYTES = 16 * 1024 * 1024
# The committed head must beat always-guess-the-5-most-frequent-pieces by this much (top-5).
TOP5_MARGIN = 0.05
HELDOUT_MASKS = 1500  # ~10k pieces through the model: a few seconds on one core


def _tiny_config() -> BertConfig:
    return BertConfig(
        vocab_size=1100,
        hidden_size=16,
        num_hidden_layers=3,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=32,
    )


def test_save_delta_round_trip_tiny(tmp_path):
    torch.manual_seed(0)
    trained = BertForMaskedLM(_tiny_config())
    base = {k: v.clone() for k, v in trained.state_dict().items()}
    with torch.no_grad():  # "train" the top layer and the head
        for p in trained.bert.encoder.layer[2].parameters():
            p.add_(torch.randn_like(p))
        for name, p in trained.cls.named_parameters():
            if name != "predictions.decoder.weight":
                p.add_(torch.randn_like(p))
    manifest = save_delta(trained, base, tmp_path, {"base_sha256": "abc", "training": {"x": 1}})

    names = set(manifest["parameters"])
    layer2 = {n for n, _ in trained.named_parameters() if n.startswith("bert.encoder.layer.2.")}
    head = {
        "cls.predictions.bias",
        "cls.predictions.transform.dense.weight",
        "cls.predictions.transform.dense.bias",
        "cls.predictions.transform.LayerNorm.weight",
        "cls.predictions.transform.LayerNorm.bias",
    }
    assert names == layer2 | head  # untouched layers and the tied decoder are not stored
    assert json.loads((tmp_path / MANIFEST_FILE).read_text())["training"] == {"x": 1}

    torch.manual_seed(1)
    restored = BertForMaskedLM(_tiny_config())
    load_base_into(restored, base)
    apply_delta(restored, tmp_path, base_sha256="abc")
    assert set(manifest["diff_parameters"]) == layer2  # retrained layers: fp16 differences
    for (n1, p1), (n2, p2) in zip(
        trained.named_parameters(), restored.named_parameters(), strict=True
    ):
        assert n1 == n2 and p1.shape == p2.shape
        if n1 in layer2:  # base + fp16(difference): within fp16 rounding of the difference
            diff = (p1 - base[n1]).abs().max()
            assert (p1 - p2).abs().max() <= 1e-3 * diff + 1e-7, n1
            assert not torch.equal(p2, base[n1])
        else:
            assert torch.equal(p1, p2), n1
    assert (
        restored.cls.predictions.decoder.weight is restored.bert.embeddings.word_embeddings.weight
    )

    with pytest.raises(ModelUnavailableError, match="sha256"):
        apply_delta(restored, tmp_path, base_sha256="not-the-base")
    (tmp_path / DELTA_FILE).write_bytes((tmp_path / DELTA_FILE).read_bytes()[:-4] + b"\0\0\0\0")
    with pytest.raises(ModelUnavailableError, match="does not match its manifest"):
        apply_delta(restored, tmp_path)


def test_missing_delta_is_a_clear_error(tmp_path):
    with pytest.raises(ModelUnavailableError, match="No MLM head delta"):
        load_minilm_mlm(tmp_path)


def test_mask_batch_only_masks_real_pieces():
    rng = np.random.default_rng(0)
    seqs = [np.array([101, *range(2000, 2100), 102], dtype=np.int32), np.array([101, 2500, 102])]
    ids, att, sel, targets = mask_batch(seqs, rng, vocab_size=30522, mask_id=103)
    assert ids.shape == att.shape == sel.shape == (2, 102)
    assert att[1].sum() == 3 and not sel[:, 0].any() and not sel[0, -1]
    originals = torch.zeros_like(ids)
    for i, s in enumerate(seqs):
        originals[i, : len(s)] = torch.from_numpy(s.astype(np.int64))
    assert torch.equal(originals[sel], targets)
    assert (targets >= FIRST_REAL_PIECE).all()


@pytest.fixture(scope="module")
def mlm_model():
    return load_minilm_mlm()


def test_committed_delta_is_small_and_pins_the_base():
    manifest = read_manifest()
    size = (MINILM_MLM_DELTA / DELTA_FILE).stat().st_size
    assert size <= MAX_DELTA_BYTES, f"delta is {size / 1e6:.1f} MB"
    assert manifest["base_sha256"] == file_sha256(minilm_dir() / "model.safetensors")
    assert "cls.predictions.decoder.weight" not in manifest["parameters"]
    assert not any(n.startswith("bert.embeddings.") for n in manifest["parameters"])


def test_committed_delta_loads_on_untouched_base(mlm_model):
    from transformers import BertModel

    base = base_state_dict()
    changed = set(read_manifest()["parameters"])
    for name, param in mlm_model.named_parameters():
        if name in base and name not in changed:
            assert torch.equal(param, base[name]), name
    # Tied decoder = the pretrained input embeddings, same tensor object.
    decoder = mlm_model.cls.predictions.decoder.weight
    assert decoder is mlm_model.bert.embeddings.word_embeddings.weight
    assert torch.equal(decoder, base["bert.embeddings.word_embeddings.weight"])
    # The minilm-l6 encoder itself is still exactly the pretrained checkpoint.
    fresh = BertModel.from_pretrained(minilm_dir(), local_files_only=True, use_safetensors=True)
    for name, tensor in fresh.state_dict().items():
        assert torch.equal(tensor, base["bert." + name]), name


@pytest.mark.slow
def test_committed_head_beats_unigram_on_heldout(mlm_model, data_dir):
    from probing.training.corpus import heldout_sentences

    log = json.loads((MINILM_MLM_DELTA / LOG_NAME).read_text())
    guess = log["unigram_top5_ids"]  # most frequent training pieces (computed by the trainer)
    tokenizer = load_minilm_tokenizer()
    heldout = list(heldout_sentences(data_dir))
    torch.set_num_threads(1)
    res = evaluate_mlm(mlm_model, tokenizer, heldout, n_masks=HELDOUT_MASKS, seed=7)
    uni = unigram_baseline(tokenizer, heldout, guess, n_masks=HELDOUT_MASKS, seed=7)
    assert res["n"] == uni["n"] == HELDOUT_MASKS
    assert res["top1"] > uni["top1"]
    assert res["top5"] >= uni["top5"] + TOP5_MARGIN, (res, uni)


def test_masked_sample_is_deterministic():
    tokenizer = load_minilm_tokenizer()
    sents = [["The", "cat", "sat", "on", "the", "mat", "."], ["Dogs", "bark", "loudly", "."]] * 20
    a = masked_sample(tokenizer, sents, n_masks=30, seed=3)
    b = masked_sample(tokenizer, sents, n_masks=30, seed=3)
    assert a.n == 30
    assert all(np.array_equal(x, y) for x, y in zip(a.ids, b.ids, strict=True))
    for ids, pos in zip(a.ids, a.positions, strict=True):
        assert (ids[pos] == tokenizer.mask_token_id).all()


def test_training_smoke_run_checkpoints_resumes_and_exports(tmp_path, monkeypatch):
    """Two steps of the real trainer on a tiny text: eval, export, checkpoint, then resume."""
    import probing.training.corpus as corpus
    from probing.training import mlm_head

    text = ["the bank of the river was muddy .", "she put her money in the bank ."] * 8
    monkeypatch.setattr(corpus, "training_sentences", lambda d=None: (s.split() for s in text))
    monkeypatch.setattr(corpus, "heldout_sentences", lambda d=None: (s.split() for s in text[:4]))
    out, ckpt = tmp_path / "out", tmp_path / "ckpt"
    argv = [
        "--checkpoint-dir",
        str(ckpt),
        "--export-dir",
        str(out),
        "--max-steps",
        "2",
        "--batch-size",
        "2",
        "--seq-len",
        "32",
        "--eval-masks",
        "8",
        "--log-every",
        "1",
    ]
    assert mlm_head.main(argv) == 0
    log = json.loads((out / LOG_NAME).read_text())
    assert log["step"] == 2 and log["tokens_seen"] > 0
    assert [e["tokens_seen"] for e in log["evals"]] == [0, log["tokens_seen"]]
    assert log["exported"]["step"] == 2 and (out / DELTA_FILE).is_file()
    assert "2 steps" in (out / "README.md").read_text()
    assert (ckpt / "checkpoint.pt").is_file()
    assert mlm_head.main(argv) == 0  # resumes from the checkpoint: two more steps
    again = json.loads((out / LOG_NAME).read_text())
    assert again["step"] == 4 and again["tokens_seen"] > log["tokens_seen"]
    assert len(again["evals"]) == 3
