"""Cheap checks of a local transformers checkpoint folder before ``transformers`` loads it,
so that a malformed file gets a message that names it instead of a raw library exception
(or "the hub cannot be reached", which is what a broken ``config.json`` used to look like).
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

from probing.errors import ModelFormatError, UnsafeModelError

MAX_HEADER_BYTES = 100 * 1024 * 1024  # safetensors' own limit for its JSON header


def check_config(folder: Path) -> dict:
    """``config.json`` parsed and checked: JSON, a known ``model_type``, no remote code.

    Raises:
        ModelFormatError: not JSON (with the line), not an object, no or unknown model_type.
        UnsafeModelError: it asks for code from the checkpoint (``auto_map``).
    """
    path = folder / "config.json"
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as exc:
        raise ModelFormatError(f"{folder.name}/config.json is not UTF-8 text.") from exc
    except json.JSONDecodeError as exc:
        raise ModelFormatError(
            f"{folder.name}/config.json is not valid JSON (line {exc.lineno}, column "
            f"{exc.colno}: {exc.msg})."
        ) from exc
    if not isinstance(config, dict):
        raise ModelFormatError(f"{folder.name}/config.json is not a JSON object.")
    if "auto_map" in config or config.get("trust_remote_code"):
        raise UnsafeModelError(
            f"{folder.name} needs its own Python code to load (config.json has auto_map); "
            "ContextLens never runs code from a checkpoint. Pick a checkpoint of a standard "
            "architecture (BERT, RoBERTa, DistilBERT, ELECTRA…)."
        )
    from transformers import CONFIG_MAPPING

    model_type = config.get("model_type")
    if not isinstance(model_type, str) or model_type not in CONFIG_MAPPING:
        raise ModelFormatError(
            f"{folder.name}/config.json has model_type {model_type!r}, which this version of "
            "transformers does not know; ContextLens reads BERT-family checkpoints."
        )
    return config


def check_safetensors(path: Path) -> None:
    """A ``.safetensors`` file's header: its length is sane and it is a JSON object.

    Raises:
        ModelFormatError: naming the file.
    """
    size = path.stat().st_size
    with open(path, "rb") as f:
        head = f.read(8)
        if len(head) < 8:
            raise ModelFormatError(f"{path.name} is too short to be a safetensors file.")
        (n,) = struct.unpack("<Q", head)
        if n == 0 or n > MAX_HEADER_BYTES or 8 + n > size:
            raise ModelFormatError(
                f"{path.name} has a broken safetensors header (length {n:,} for a file of "
                f"{size:,} bytes); the file is damaged or not safetensors."
            )
        try:
            header = json.loads(f.read(n))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ModelFormatError(
                f"{path.name} has a safetensors header that is not JSON."
            ) from exc
    if not isinstance(header, dict):
        raise ModelFormatError(f"{path.name} has a safetensors header that is not a JSON object.")


def check_folder(folder: Path) -> None:
    """:func:`check_config` and :func:`check_safetensors` on every weights file there."""
    check_config(folder)
    for path in sorted(folder.glob("*.safetensors")):
        check_safetensors(path)
