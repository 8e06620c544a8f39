"""Hub models fail fast and say why: offline detection, cache-only lookups, typed causes."""

from __future__ import annotations

import shutil

import numpy as np
import pytest
import torch

from probing.errors import (
    ModelFolderNotFoundError,
    NotACheckpointError,
    NotCachedOfflineError,
    UnsafeModelError,
)
from probing.models import hub, registry


@pytest.fixture(autouse=True)
def fresh_hub():
    hub.reset()
    yield
    hub.reset()


def test_uncached_hub_model_offline_is_typed_and_remembered(monkeypatch):
    with pytest.raises(NotCachedOfflineError) as first:
        registry.load_encoder("bert-base-uncased")
    text = str(first.value)
    assert "not in the local Hugging Face cache" in text
    assert text.startswith("bert-base-uncased (google-bert/bert-base-uncased) is not in")
    assert "Could not load" not in text  # the page adds it once, or not at all

    def must_not_run(*_a, **_k):
        raise AssertionError("a remembered failure must not look the model up again")

    monkeypatch.setattr(hub, "cached_snapshot", must_not_run)
    with pytest.raises(NotCachedOfflineError):
        registry.load_encoder("bert-base-uncased")


def test_offline_is_detected_once_without_hf_hub_offline(monkeypatch):
    # No HF_HUB_OFFLINE: the hub's reachability is probed, once; port 9 on localhost refuses.
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")
    probes = []
    real_probe = hub._probe
    monkeypatch.setattr(hub, "_probe", lambda h, p: probes.append((h, p)) or real_probe(h, p))
    assert hub.hub_offline()
    with pytest.raises(NotCachedOfflineError):
        registry.load_encoder("google-bert/bert-base-cased")
    with pytest.raises(NotCachedOfflineError):
        registry.load_encoder("FacebookAI/roberta-base")
    assert probes == [("127.0.0.1", 9)]


def test_missing_folder_and_non_checkpoint_folder(tmp_path):
    with pytest.raises(ModelFolderNotFoundError, match="does not exist"):
        registry.load_encoder(str(tmp_path / "no-such-model"))
    (tmp_path / "notes.txt").write_text("not a model")
    with pytest.raises(NotACheckpointError, match="neither a transformers checkpoint"):
        registry.load_encoder(str(tmp_path))
    (tmp_path / "config.json").write_text('{"model_type": "bert"}')
    with pytest.raises(NotACheckpointError, match="has a config but no weights"):
        registry.load_encoder(str(tmp_path))


def test_missing_repo_is_recognised_through_the_cause_chain():
    from types import SimpleNamespace

    from huggingface_hub.errors import RepositoryNotFoundError

    response = SimpleNamespace(headers={}, request=None)  # what the hub's 404 carries

    try:
        try:
            raise RepositoryNotFoundError("404 Repository Not Found", response=response)
        except RepositoryNotFoundError as inner:
            raise OSError("org/nope is not a local folder") from inner
    except OSError as exc:
        assert hub.is_missing_repo(exc)
    assert not hub.is_missing_repo(OSError("connection reset"))


def _bin_only_checkpoint(folder, minilm_dir):
    """A tiny random BERT on MiniLM's tokenizer, saved as pytorch_model.bin only."""
    from transformers import BertConfig, BertForMaskedLM

    for f in minilm_dir.iterdir():
        if f.name.startswith(("tokenizer", "vocab", "special_tokens")):
            shutil.copy(f, folder / f.name)
    cfg = BertConfig(
        vocab_size=30522,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
    )
    torch.manual_seed(0)
    model = BertForMaskedLM(cfg).eval()
    cfg.save_pretrained(folder)
    torch.save(model.state_dict(), folder / "pytorch_model.bin")
    return model


def test_pytorch_model_bin_loads_weights_only_outside_demo(tmp_path, monkeypatch):
    from probing.models.embedded import minilm_dir

    model = _bin_only_checkpoint(tmp_path, minilm_dir())
    monkeypatch.setenv("CONTEXTLENS_DEMO", "1")
    with pytest.raises(UnsafeModelError, match="pytorch_model.bin"):
        registry._resolve(str(tmp_path), None)
    monkeypatch.delenv("CONTEXTLENS_DEMO")
    enc = registry._resolve(str(tmp_path), None)
    assert enc.info.n_contextual_layers == 2 and enc.info.has_mlm_head
    np.testing.assert_allclose(
        enc.model.embeddings.word_embeddings.weight.detach().numpy(),
        model.bert.embeddings.word_embeddings.weight.detach().numpy(),
    )
    layers = enc.encode("the river bank")[0].layers
    assert layers.shape == (3, 3, 32)


def test_page_says_offline_once(monkeypatch):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(registry.config_module.REPO_ROOT / "app.py"), default_timeout=60)
    at.session_state["models"] = ["bert-base-uncased"]
    at.run()
    errors = [e.value for e in at.error]
    assert len(errors) == 1, errors
    assert "not in the local Hugging Face cache" in errors[0]
    assert "Could not load" not in errors[0]
    assert not at.exception
