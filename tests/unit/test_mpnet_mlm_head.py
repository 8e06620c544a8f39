"""mpnet-base-mlm's head files: round trip on a tiny MPNet, the tied decoder, and refusals of
base weights other than the ones the head was trained on (no real model needed)."""

from __future__ import annotations

import argparse
import json
import shlex

import numpy as np
import pytest
import torch
from safetensors.torch import save_file
from transformers import MPNetConfig, MPNetForMaskedLM

from probing.errors import ChecksumMismatchError, ModelUnavailableError
from probing.models import mpnet_mlm, registry
from probing.models.pypi_parts import MPNET_BASE
from probing.training.mlm_data import mask_batch


def _tiny() -> MPNetForMaskedLM:
    torch.manual_seed(0)
    config = MPNetConfig(
        vocab_size=1200,
        hidden_size=16,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=40,
    )
    return MPNetForMaskedLM(config)


def test_head_round_trip_keeps_the_decoder_tied(tmp_path):
    trained = _tiny().eval()
    with torch.no_grad():  # "train" the head's own tensors (the decoder is the embeddings)
        for name, p in trained.named_parameters():
            if name.startswith("lm_head.") and name not in mpnet_mlm.TIED:
                p.add_(torch.randn_like(p))
    manifest = mpnet_mlm.save_head(trained, tmp_path, {"base_sha256": "x"})
    assert manifest["parameters"] == sorted(
        ["lm_head.bias", "lm_head.dense.weight", "lm_head.dense.bias"]
        + ["lm_head.layer_norm.weight", "lm_head.layer_norm.bias"]
    )
    fresh = _tiny().eval()  # the same seed: the same encoder, another head
    assert not torch.equal(fresh.lm_head.dense.weight, trained.lm_head.dense.weight)
    mpnet_mlm.apply_head(fresh, tmp_path)
    mpnet_mlm.check_tied(fresh)
    for name, p in trained.lm_head.named_parameters():
        assert torch.equal(p, dict(fresh.lm_head.named_parameters())[name]), name
    ids = torch.tensor([[0, 5, 6, 7, 2]])
    assert torch.allclose(trained(input_ids=ids).logits, fresh(input_ids=ids).logits)


def test_a_changed_head_file_is_refused(tmp_path):
    mpnet_mlm.save_head(_tiny(), tmp_path, {"base_sha256": "x"})
    path = tmp_path / mpnet_mlm.HEAD_FILE
    data = bytearray(path.read_bytes())
    data[-1] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(ModelUnavailableError, match="does not match its manifest"):
        mpnet_mlm.apply_head(_tiny(), tmp_path)


def _fake_base(folder):
    """A folder shaped like the fetched mpnet-base whose weights are not the pinned ones."""
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps({"model_type": "mpnet"}))
    save_file({"x": torch.zeros(3)}, str(folder / "model.safetensors"))
    return folder


def test_other_base_weights_are_refused_naming_both_hashes(tmp_path):
    head = tmp_path / "head"
    mpnet_mlm.save_head(_tiny(), head, {"base_sha256": MPNET_BASE.sha256})
    fake = _fake_base(tmp_path / "base")
    with pytest.raises(ChecksumMismatchError) as err:
        mpnet_mlm.load_mpnet_mlm(head, base_folder=fake)
    assert MPNET_BASE.sha256 in str(err.value)
    assert mpnet_mlm.file_sha256(fake / "model.safetensors") in str(err.value)


def test_registry_refuses_fetched_weights_that_do_not_match(tmp_path, monkeypatch):
    """load_encoder('mpnet-base-mlm') re-hashes the fetched encoder: a folder in the fetch
    cache with other weights is refused, never served under the head."""
    _fake_base(tmp_path / "models" / "mpnet-base")
    monkeypatch.setenv("CONTEXTLENS_FETCHED_MODELS_DIR", str(tmp_path / "models"))
    registry.clear_cache()
    with pytest.raises(ChecksumMismatchError, match=MPNET_BASE.sha256):
        registry.load_encoder("mpnet-base-mlm")
    registry.clear_cache()
    assert not registry.needs_fetch("mpnet-base-mlm")  # the folder is there (if wrong)
    monkeypatch.setenv("CONTEXTLENS_FETCHED_MODELS_DIR", str(tmp_path / "elsewhere"))
    assert registry.needs_fetch("mpnet-base-mlm")


def test_mask_batch_with_mpnet_ids_never_targets_specials_or_padding():
    """MPNet's vocab: <s>=0, <pad>=1, </s>=2, real pieces from 1003, <mask> last (30526)."""
    rng = np.random.default_rng(0)
    seqs = [np.array([0, *range(1003, 1063), 2]), np.array([0, 1500, 1501, 2])]
    ids, att, sel, targets = mask_batch(seqs, rng, 30526, 30526, first_real=1003, pad_id=1)
    assert ids[1, 4:].eq(1).all() and att[1, 4:].eq(0).all()  # padded with <pad>, not <s>
    original = torch.zeros_like(ids)
    for i, s in enumerate(seqs):
        original[i, : len(s)] = torch.from_numpy(s)
    assert (original[sel] >= 1003).all() and torch.equal(original[sel], targets)
    kept = ~sel & att.bool()
    assert (ids[kept] == original[kept]).all()
    assert (ids < 30527).all()


def test_trainer_and_report_refuse_the_shipped_folders_without_overwrite():
    """Before any work: the head, its card and log, the committed results and the doc are
    written only with --overwrite."""
    from probing.errors import ShippedFilesError
    from probing.training import mpnet_mlm_head, mpnet_mlm_report

    with pytest.raises(ShippedFilesError, match="mpnet-base-mlm"):
        mpnet_mlm_head.main(["--state-pieces", "10"])
    with pytest.raises(ShippedFilesError):
        mpnet_mlm_report.main(["--masks", "10"])


# -- the committed findings ------------------------------------------------------------------

REPO = mpnet_mlm.MPNET_MLM_DIR.parents[1]
FINDINGS = REPO / "results" / "mpnet-base-mlm"
DOC = REPO / "docs" / "mpnet_base_mlm.md"
COMPARATIVES = (
    "higher",
    "lower",
    "peak",
    "above",
    "below",
    "better",
    "worse",
    "not distinguishable",
    "at baseline",
)


def _committed() -> dict:
    if not (FINDINGS / "heldout.json").is_file():
        pytest.skip("no committed mpnet-base-mlm findings")
    return json.loads((FINDINGS / "heldout.json").read_text(encoding="utf-8"))


def test_committed_comparisons_are_remade_from_the_per_mask_rows():
    """The differences in heldout.json come from heldout_masks.csv through the engine."""
    import csv

    from probing.training.mpnet_mlm_report import add_arguments, comparisons

    stored = _committed()
    with open(FINDINGS / "heldout_masks.csv", encoding="utf-8") as f:
        rows = [
            {k: (v if k in ("gold", "head_top1") else int(v)) for k, v in r.items()}
            for r in csv.DictReader(f)
        ]
    # the seed and replicates the recorded command used (its defaults where it named none)
    used = add_arguments(argparse.ArgumentParser()).parse_args(shlex.split(stored["command"])[3:])
    again = comparisons(rows, n_boot=used.n_boot, seed=used.seed)
    assert again["n_masks"] == stored["n_masks"] == len(rows)
    for a, b in zip(again["differences"], stored["differences"], strict=True):
        assert a["diff"] == pytest.approx(b["diff"]) and a["called"] == b["called"]
        assert a["ci_low"] == pytest.approx(b["ci_low"]) and a["p_holm"] == pytest.approx(
            b["p_holm"]
        )


def test_the_doc_block_is_what_the_script_writes_and_the_prose_compares_nothing():
    from probing.training.mpnet_mlm_report import BEGIN, END, render_block

    text = DOC.read_text(encoding="utf-8")
    head, _, rest = text.partition(BEGIN)
    block, _, tail = rest.partition(END)
    assert block.strip() == render_block(_committed()).strip()
    prose = (head + tail).lower()
    assert [w for w in COMPARATIVES if w in prose] == []
