"""A checkpoint's size, from its config, before any weight is allocated.

``from_pretrained`` builds the randomly initialised model first and fills in the weights
after: a folder whose ``config.json`` claims 4096 dims × 48 layers beside a 40-byte
``model.safetensors`` took a server to 20 GB and the kernel's OOM killer. Here the config's
parameter count is checked, before the model is built, against

- the weights: the tensors the ``*.safetensors`` headers list (shapes only, no data read;
  pickle weights: the tensors unpickled, before the model is built); a config that claims
  more than twice what they hold would give a mostly random model;
- the memory budget (:attr:`probing.config.Limits.max_model_bytes`, float32 bytes).

Two steps: :func:`check_config_dict` bounds the count from a few config keys (no torch, no
model) and refuses a giant config at once; :func:`check_config` counts the parameters exactly
by building the bare encoder on PyTorch's ``meta`` device (shapes without storage).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from probing import config as config_module
from probing.errors import (
    ContextLensError,
    ModelFormatError,
    ModelTooLargeError,
    WeightsConfigMismatchError,
)

BYTES_PER_PARAMETER = 4  # encoders load in float32
MIN_WEIGHTS_SHARE = 0.5  # weights must hold at least this share of the config's parameters
MAX_LAYERS = 1_000  # no BERT-family model has more than a few dozen; bounds the meta build


def _int(config: dict[str, Any], *keys: str) -> int | None:
    """The first of ``keys`` that holds a non-negative integer, else None."""
    for key in keys:
        value = config.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            return value
    return None


def parameters_at_least(config: dict[str, Any]) -> int:
    """A lower bound on the parameters of the encoder ``config`` describes, from its keys
    alone: the word embeddings (vocab × embedding dim) and one ``dim²`` matrix per distinct
    layer (every BERT-family layer has at least four: query, key, value, output). 0 for
    keys it does not know."""
    dim = _int(config, "hidden_size", "dim", "d_model") or 0
    vocab = _int(config, "vocab_size") or 0
    embedding = _int(config, "embedding_size") or dim
    layers = _int(config, "num_hidden_layers", "n_layers", "num_layers") or 0
    if config.get("model_type") == "albert":  # layers share the weights of their group
        layers = min(layers, _int(config, "num_hidden_groups") or 1)
    return vocab * embedding + layers * dim * dim


def _gb(n_parameters: int) -> str:
    return f"{n_parameters * BYTES_PER_PARAMETER / 2**30:,.1f} GB"


def check_counts(name: str, n_parameters: int, weights_numel: int | None, *, exact: bool) -> None:
    """Refuse ``n_parameters`` (the config's; ``exact`` False: a lower bound) against the
    weights files' ``weights_numel`` (None: unknown) and the memory budget.

    Raises:
        WeightsConfigMismatchError: the weights hold less than half of the parameters.
        ModelTooLargeError: the parameters' float32 bytes are over the budget.
    """
    claim = f"{n_parameters:,}" if exact else f"at least {n_parameters:,}"
    if weights_numel is not None and weights_numel < MIN_WEIGHTS_SHARE * n_parameters:
        held = "no tensors" if weights_numel == 0 else f"{weights_numel:,} numbers"
        raise WeightsConfigMismatchError(
            f"{name}'s config.json describes a model of {claim} parameters, but its "
            f"weights files hold {held}: the model would be mostly "
            "random weights. Check that config.json belongs to these weights (hidden_size, "
            "num_hidden_layers, vocab_size), or give the complete checkpoint."
        )
    budget = config_module.limits().max_model_bytes
    if n_parameters * BYTES_PER_PARAMETER > budget:
        raise ModelTooLargeError(
            f"{name}'s config.json describes a model of {claim} parameters "
            f"({'' if exact else 'at least '}{_gb(n_parameters)} in float32); this machine "
            f"loads models of at most {budget / 2**30:,.1f} GB (CONTEXTLENS_MAX_MODEL_MB). "
            "Pick a smaller checkpoint, or raise the limit if the memory is there."
        )


def weights_held(folder: Path | None) -> int | None:
    """Numbers the safetensors files in ``folder`` hold, from their headers; None when
    unknown (no folder; pickle weights only, which
    :func:`probing.models.hub.model_from_bin` counts once they are safely unpickled).

    Raises:
        UserFileError / ModelFormatError: as
            :func:`probing.models.checkpoint_check.check_safetensors`.
    """
    from probing.models.checkpoint_check import weights_numel

    return None if folder is None else weights_numel(folder)


def check_config_dict(name: str, config: dict[str, Any], folder: Path | None) -> None:
    """The quick check, before torch or transformers: a lower bound on the parameters from
    the config's keys against the weights in ``folder`` (None: a hub id, weights unknown)
    and the budget; an absurd layer count.

    Raises:
        ModelFormatError: more than :data:`MAX_LAYERS` layers.
        WeightsConfigMismatchError, ModelTooLargeError: see :func:`check_counts`.
    """
    layers = _int(config, "num_hidden_layers", "n_layers", "num_layers") or 0
    if layers > MAX_LAYERS:
        raise ModelFormatError(
            f"{name}'s config.json asks for {layers:,} layers; BERT-family models have a few "
            "dozen. Check num_hidden_layers."
        )
    check_counts(name, parameters_at_least(config), weights_held(folder), exact=False)


def check_folder_config(folder: Path) -> None:
    """:func:`check_config_dict` on ``folder/config.json`` when it parses as a JSON object
    (when it does not, :func:`probing.models.checkpoint_check.check_config` says why).

    Raises:
        UserFileError: config.json is not a regular file of bounded size.
        ModelFormatError, WeightsConfigMismatchError, ModelTooLargeError: see above.
    """
    from probing import user_paths

    what = f"{folder.name}/config.json"
    try:
        text = user_paths.read_text(folder / "config.json", "The config file")
        config = user_paths.parse_json(text, what)
    except (ValueError, UnicodeDecodeError) as exc:  # not JSON: check_config's message
        if isinstance(exc, ContextLensError):
            raise
        return
    if isinstance(config, dict):
        check_config_dict(folder.name, config, folder)


def count_parameters(config: Any) -> int:
    """Parameters of the bare encoder a ``transformers`` config describes, counted on a
    model built on the ``meta`` device: shapes only, no memory for the weights.

    Raises:
        ValueError: a config transformers cannot build a model from.
    """
    import torch
    from transformers import AutoModel

    with torch.device("meta"):
        model = AutoModel.from_config(config, attn_implementation="eager")
    # parameters() lists a tied tensor once, as the loaded model holds it.
    return sum(math.prod(p.shape) for p in model.parameters())


def check_config(name: str, config: Any, folder: Path | None) -> int:
    """The exact check: the bare encoder's parameter count (:func:`count_parameters`)
    against the weights in ``folder`` (None: unknown) and the budget; the count.

    Raises:
        WeightsConfigMismatchError, ModelTooLargeError: see :func:`check_counts`.
    """
    check_config_dict(name, config.to_dict(), folder)  # a giant config never reaches the build
    n = count_parameters(config)
    check_counts(name, n, weights_held(folder), exact=True)
    return n
