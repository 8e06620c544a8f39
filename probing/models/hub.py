"""Hugging Face hub access that fails fast: offline detection, cache-only lookups, typed causes.

huggingface_hub retries with back-off when the hub cannot be reached, which made one pick of
an uncached hub model cost ~47 s offline, and every later page load the same again. Here the
hub's reachability is decided once per process (``HF_HUB_OFFLINE`` wins; otherwise one DNS +
TCP probe with a short timeout), an offline lookup reads the local cache only, and a failure
is remembered for the life of the process so that later calls answer at once.

Each failure says which case it is: :class:`NotCachedOfflineError` (not in the cache and
offline), :class:`HubModelNotFoundError` (no such model on the hub),
:class:`ModelFolderNotFoundError` (a folder path that does not exist) and
:class:`NotACheckpointError` (a folder that holds no checkpoint).
"""

from __future__ import annotations

import os
import socket
import threading
from pathlib import Path
from urllib.parse import urlparse

from probing.errors import (
    ContextLensError,
    HubModelNotFoundError,
    ModelFolderNotFoundError,
    NotACheckpointError,
    NotCachedOfflineError,
)

PROBE_TIMEOUT_S = 1.5  # DNS + TCP to the hub; a reachable hub answers in well under this

HOWTO = (
    "To use it, either (1) run once with internet access so that it is stored in the "
    "Hugging Face cache (~/.cache/huggingface), or (2) download the model folder "
    "(config.json, tokenizer files and model.safetensors) and give its path instead of the "
    "name."
)

_lock = threading.Lock()
_reachable: bool | None = None
_failures: dict[str, ContextLensError] = {}


def _env_offline() -> bool:
    return any(
        os.environ.get(v, "").lower() in {"1", "true", "yes", "on"}
        for v in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
    )


def _probe(host: str, port: int) -> bool:
    """True when ``host:port`` accepts a TCP connection within PROBE_TIMEOUT_S (DNS included)."""
    result: list[bool] = []

    def attempt() -> None:
        try:
            with socket.create_connection((host, port), timeout=PROBE_TIMEOUT_S):
                result.append(True)
        except OSError:
            result.append(False)

    # getaddrinfo ignores socket timeouts; a daemon thread bounds a hanging resolver too.
    t = threading.Thread(target=attempt, daemon=True)
    t.start()
    t.join(PROBE_TIMEOUT_S)
    return bool(result and result[0])


def hub_offline() -> bool:
    """True when the hub is not to be contacted: ``HF_HUB_OFFLINE`` set, or unreachable.

    The probe runs at most once per process; :func:`reset` forgets its answer.
    """
    global _reachable
    if _env_offline():
        return True
    with _lock:
        if _reachable is None:
            url = urlparse(os.environ.get("HF_ENDPOINT", "https://huggingface.co"))
            _reachable = _probe(url.hostname or "huggingface.co", url.port or 443)
        return not _reachable


def reset() -> None:
    """Forget the reachability answer and the remembered failures (tests, or back online)."""
    global _reachable
    with _lock:
        _reachable = None
        _failures.clear()


def remembered(name: str) -> None:
    """Raise the failure remembered for ``name`` in this process, if any."""
    exc = _failures.get(name)
    if exc is not None:
        raise type(exc)(*exc.args)


def remember(name: str, exc: ContextLensError) -> None:
    """Keep a hub failure so that asking again answers at once."""
    if isinstance(exc, NotCachedOfflineError | HubModelNotFoundError):
        with _lock:
            _failures[name] = exc


def cached_snapshot(repo_id: str) -> Path | None:
    """The local cache folder of ``repo_id``'s checkpoint (holding config.json), or None."""
    from huggingface_hub import try_to_load_from_cache

    found = try_to_load_from_cache(repo_id, "config.json")
    return Path(found).parent if isinstance(found, str) else None


def locate(name: str, repo_id: str) -> str:
    """Where to load hub model ``repo_id`` from: its cache folder, or the id when online.

    Raises:
        NotCachedOfflineError: offline and not in the local cache.
    """
    snapshot = cached_snapshot(repo_id)
    if snapshot is not None:
        return str(snapshot)
    if hub_offline():
        label = name if name == repo_id else f"{name} ({repo_id})"
        raise NotCachedOfflineError(
            f"{label} is not in the local Hugging Face cache, and the hub cannot be reached "
            f"from here (offline). {HOWTO}"
        )
    return repo_id


def not_found(name: str, repo_id: str) -> HubModelNotFoundError:
    """The error for a hub id the (reachable) hub does not know."""
    return HubModelNotFoundError(
        f"There is no model {repo_id!r} on the Hugging Face hub (or it is private). Check the "
        "spelling: hub ids look like org/name, e.g. google-bert/bert-base-cased."
    )


def is_missing_repo(exc: BaseException) -> bool:
    """True when ``exc`` (or its cause) says that the hub has no such repository."""
    from huggingface_hub.errors import RepositoryNotFoundError

    while exc is not None:
        if isinstance(exc, RepositoryNotFoundError) or "is not a valid model identifier" in str(
            exc
        ):
            return True
        exc = exc.__cause__ or exc.__context__
    return False


def check_folder(path: Path) -> None:
    """Raise a typed error unless ``path`` is a folder holding a checkpoint.

    Raises:
        ModelFolderNotFoundError: no such folder.
        NotACheckpointError: a folder without config.json (transformers) or options.json (ELMo).
    """
    if not path.exists():
        raise ModelFolderNotFoundError(f"The folder {path} does not exist.")
    if not path.is_dir():
        raise NotACheckpointError(f"{path} is a file; give the folder that holds the checkpoint.")
    if not ((path / "config.json").is_file() or (path / "options.json").is_file()):
        raise NotACheckpointError(
            f"The folder {path} holds neither a transformers checkpoint (config.json) nor ELMo "
            "weights (options.json + *.hdf5)."
        )
    weights = ("*.safetensors", "pytorch_model*.bin", "*.hdf5")
    if not any(any(path.glob(pattern)) for pattern in weights):
        raise NotACheckpointError(
            f"The folder {path} has a config but no weights: a transformers checkpoint needs "
            "model.safetensors (or pytorch_model.bin), an ELMo folder a *.hdf5 file."
        )


def pickle_only_weights(folder: Path) -> Path | None:
    """``pytorch_model.bin`` of a local checkpoint that has no safetensors, else None."""
    if not folder.is_dir() or any(folder.glob("*.safetensors")):
        return None
    path = folder / "pytorch_model.bin"
    return path if path.is_file() else None


def load_pickle_free(path: Path) -> dict:
    """A ``pytorch_model.bin`` state dict read with ``torch.load(weights_only=True)``.

    ``weights_only`` unpickles tensors and plain containers only, so loading runs no code
    from the file (safe on the pinned torch); callers still refuse it in demo mode.
    """
    import pickle

    import torch

    from probing.errors import UnsafeModelError

    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError:  # torch's own text says "Unsupported operand 149"
        raise UnsafeModelError(
            f"{path.parent.name}/{path.name} holds pickled objects other than tensors, which "
            "could run code when loaded: refused. Convert the checkpoint to model.safetensors "
            "(transformers' save_pretrained(..., safe_serialization=True)) and load that."
        ) from None


def model_from_bin(path: Path, config, *, mlm: bool, attn_implementation: str = "eager"):
    """The transformers model of ``config`` with the weights of a ``pytorch_model.bin``.

    With ``mlm`` the masked-LM class is tried first; a checkpoint without its head falls back
    to the bare encoder, as safetensors checkpoints do.
    """
    from transformers import MODEL_FOR_MASKED_LM_MAPPING, MODEL_MAPPING

    from probing.models import model_size

    state = load_pickle_free(path)
    # The config against what the file holds, before from_pretrained builds the model.
    held = sum(t.numel() for t in state.values() if hasattr(t, "numel"))
    model_size.check_counts(path.parent.name, model_size.count_parameters(config), held, exact=True)
    mappings = [MODEL_FOR_MASKED_LM_MAPPING, MODEL_MAPPING] if mlm else [MODEL_MAPPING]
    for mapping in mappings:
        cls = mapping.get(type(config), None)  # a lazy mapping: default is required
        if cls is None:
            continue
        head_keys = mapping is MODEL_FOR_MASKED_LM_MAPPING and not any(
            not k.startswith(f"{cls.base_model_prefix}.") for k in state
        )
        if head_keys:
            continue  # only encoder weights in the file: no head to load
        return cls.from_pretrained(
            None, config=config, state_dict=dict(state), attn_implementation=attn_implementation
        )
    raise NotACheckpointError(
        f"{path.parent} holds a {config.model_type} checkpoint that ContextLens cannot load as "
        "an encoder."
    )
