"""Cheap checks of a local transformers checkpoint folder before ``transformers`` loads it,
so that a malformed file gets a message that names it instead of a raw library exception
(or "the hub cannot be reached", which is what a broken ``config.json`` used to look like).
"""

from __future__ import annotations

import json
import math
import os
import struct
from pathlib import Path

from probing import user_paths
from probing.errors import ModelFormatError, UnsafeModelError

MAX_HEADER_BYTES = 100 * 1024 * 1024  # safetensors' own limit for its JSON header
# Files a loader opens in a checkpoint folder (config, tokenizer, weights; ELMo's options and
# .hdf5); each must be a regular file before anything reads it.
CHECKPOINT_SUFFIXES = (".json", ".txt", ".model", ".safetensors", ".bin", ".hdf5", ".h5")
MAX_TOKENIZER_BYTES = 512 * 1024 * 1024  # tokenizer.json of a 250k vocabulary is ~17 MB


def check_files(folder: Path) -> None:
    """Refuse a folder (or a file in it that a loader opens) that is not a regular file or
    folder: a FIFO, device, socket or symlink loop; text files over their size bound. Only
    ``stat`` is called, so this answers at once whatever the files are.

    Raises:
        UserFileError: naming the file and what it is.
    """
    user_paths.special(folder, "The model folder")
    if not folder.is_dir():
        return  # a missing folder or a plain file: the caller's own message says so
    with os.scandir(folder) as entries:
        names = sorted(e.name for e in entries if e.name.endswith(CHECKPOINT_SUFFIXES))
    for name in names:
        path = folder / name
        user_paths.special(path, "The file")
        if name.endswith((".json", ".txt", ".model")) and path.is_file():
            limit = user_paths.JSON_MAX_BYTES if name == "config.json" else MAX_TOKENIZER_BYTES
            user_paths.regular_file(path, "The file", limit)


def check_config(folder: Path) -> dict:
    """``config.json`` parsed and checked: JSON, a known ``model_type``, no remote code.

    Raises:
        ModelFormatError: not JSON (with the line), not an object, no or unknown model_type.
        UnsafeModelError: it asks for code from the checkpoint (``auto_map``).
    """
    path = folder / "config.json"
    try:
        text = user_paths.read_text(path, "The config file")
        config = json.loads(text)
    except RecursionError:
        raise ModelFormatError(
            f"{folder.name}/config.json is nested too deeply to read (thousands of levels of "
            "brackets); a transformers config is a flat JSON object. Check the file."
        ) from None
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


def check_safetensors(path: Path) -> dict:
    """A ``.safetensors`` file's header: its length is sane and it is a JSON object; the
    header (tensor name -> dtype, shape, offsets). Reads the header only.

    Raises:
        UserFileError: not a regular file (a FIFO would block the read).
        ModelFormatError: naming the file.
    """
    path = user_paths.regular_file(path, "The weights file")
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
        except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
            raise ModelFormatError(
                f"{path.name} has a safetensors header that is not JSON."
            ) from exc
    if not isinstance(header, dict):
        raise ModelFormatError(f"{path.name} has a safetensors header that is not a JSON object.")
    return header


def header_numel(header: dict, name: str) -> int:
    """Numbers held by the tensors a safetensors header lists (shapes only, no data).

    Raises:
        ModelFormatError: a tensor entry without a list of non-negative integer dims.
    """
    total = 0
    for key, entry in header.items():
        if key == "__metadata__":
            continue
        shape = entry.get("shape") if isinstance(entry, dict) else None
        if not isinstance(shape, list) or not all(
            isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape
        ):
            raise ModelFormatError(f"{name} lists tensor {key!r} without a valid shape.")
        total += math.prod(shape)
    return total


def weights_numel(folder: Path) -> int | None:
    """Numbers held by every ``*.safetensors`` file in ``folder``, read from their headers;
    None when the folder has none (pickle weights: sizes unknown without unpickling).

    Raises:
        UserFileError / ModelFormatError: as :func:`check_safetensors`.
    """
    files = sorted(folder.glob("*.safetensors"))
    if not files:
        return None
    return sum(header_numel(check_safetensors(p), p.name) for p in files)


def check_folder(folder: Path) -> dict:
    """:func:`check_files`, :func:`check_config` and :func:`check_safetensors` on every
    weights file there; the parsed config."""
    check_files(folder)
    config = check_config(folder)
    for path in sorted(folder.glob("*.safetensors")):
        check_safetensors(path)
    return config
