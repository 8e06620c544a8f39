"""The published AllenNLP ELMo models: where they are, and fetching them on first use.

Each model is two files on AllenNLP's S3 bucket, ``<dir>/<dir-name>_options.json`` and
``<dir>/<dir-name>_weights.hdf5``, in the original bilm-tf format. :func:`fetch_elmo` stores
them as ``options.json`` + ``weights.hdf5`` in ``<cache>/models/<name>/``, the folder
layout :func:`probing.encoders.elmo.load_elmo` reads, so the second call needs no network.

The base URL can be changed with ``CONTEXTLENS_ELMO_BASE_URL`` (a mirror, or a local test
server) or the ``base_url`` argument.
"""

from __future__ import annotations

import http.client
import os
from dataclasses import dataclass
from pathlib import Path

from probing.config import cache_dir
from probing.errors import DownloadError, ModelUnavailableError, UnknownModelError
from probing.io import ProgressFn, download_file

DEFAULT_BASE_URL = "https://s3-us-west-2.amazonaws.com/allennlp/models/elmo"
BASE_URL_ENV = "CONTEXTLENS_ELMO_BASE_URL"
OPTIONS_NAME, WEIGHTS_NAME = "options.json", "weights.hdf5"  # names in the local folder


@dataclass(frozen=True)
class ElmoSpec:
    """One published ELMo model."""

    name: str
    directory: str  # e.g. "2x1024_128_2048cnn_1xhighway": also the files' name stem
    description: str  # one line for pickers
    provenance: str
    params_millions: float
    weights_size: int | None = None  # bytes, checked after download when known
    weights_sha256: str | None = None

    @property
    def options_path(self) -> str:
        """Path of the options file relative to the base URL."""
        return f"{self.directory}/elmo_{self.directory}_options.json"

    @property
    def weights_path(self) -> str:
        """Path of the weights file relative to the base URL."""
        return f"{self.directory}/elmo_{self.directory}_weights.hdf5"

    @property
    def options_url(self) -> str:
        return f"{DEFAULT_BASE_URL}/{self.options_path}"

    @property
    def weights_url(self) -> str:
        return f"{DEFAULT_BASE_URL}/{self.weights_path}"

    @property
    def approx_mb(self) -> int:
        """Rough size of the weights file (fp32 parameters), for "this will download" notes."""
        return round(self.params_millions * 4)


_TRAINED_ON = (
    "trained by AllenNLP on the 1 Billion Word Benchmark (~800M tokens of WMT 2011 news "
    "crawl; Peters et al., 2018, Deep contextualized word representations)"
)

ELMO_MODELS: dict[str, ElmoSpec] = {
    s.name: s
    for s in [
        ElmoSpec(
            name="elmo-small",
            directory="2x1024_128_2048cnn_1xhighway",
            description="ELMo small (AllenNLP; 2×1024 biLSTM, 128-dim output, 13.6M params)",
            provenance=(
                "AllenNLP's published small ELMo: char-CNN (2048 filters, 1 highway layer) "
                "and a 2-layer biLSTM with 1024 cells projected to 128 (13.6M parameters), "
                f"{_TRAINED_ON}."
            ),
            params_millions=13.6,
        ),
        ElmoSpec(
            name="elmo-medium",
            directory="2x2048_256_2048cnn_1xhighway",
            description="ELMo medium (AllenNLP; 2×2048 biLSTM, 256-dim output, 28.0M params)",
            provenance=(
                "AllenNLP's published medium ELMo: char-CNN (2048 filters, 1 highway layer) "
                "and a 2-layer biLSTM with 2048 cells projected to 256 (28.0M parameters), "
                f"{_TRAINED_ON}."
            ),
            params_millions=28.0,
        ),
        ElmoSpec(
            name="elmo-original",
            directory="2x4096_512_2048cnn_2xhighway",
            description="ELMo original (AllenNLP; 2×4096 biLSTM, 512-dim output, 93.6M params)",
            provenance=(
                "The original ELMo of the paper, as published by AllenNLP: char-CNN (2048 "
                "filters, 2 highway layers) and a 2-layer biLSTM with 4096 cells projected "
                f"to 512 (93.6M parameters), {_TRAINED_ON}."
            ),
            params_millions=93.6,
        ),
    ]
}


def model_dir(name: str) -> Path:
    """Where ``name`` is (or will be) stored: ``<cache>/models/<name>/``."""
    return cache_dir() / "models" / name


def is_cached(name: str) -> bool:
    """True when both files of ``name`` are already in the cache (no download needed)."""
    folder = model_dir(name)
    return (folder / OPTIONS_NAME).is_file() and (folder / WEIGHTS_NAME).is_file()


def _base_url(base_url: str | None) -> str:
    return (base_url or os.environ.get(BASE_URL_ENV) or DEFAULT_BASE_URL).rstrip("/")


def fetch_elmo(name: str, progress: ProgressFn | None = None, base_url: str | None = None) -> Path:
    """The local folder of ELMo model ``name``, downloading its two files on first use.

    Args:
        name: "elmo-small", "elmo-medium" or "elmo-original".
        progress: called with (bytes done, bytes total or None) for each file as it arrives.
        base_url: download from here instead of AllenNLP's bucket (else the
            ``CONTEXTLENS_ELMO_BASE_URL`` environment variable, else the canonical URL).

    Returns:
        A folder holding ``options.json`` and ``weights.hdf5`` (pass it to ``load_elmo``).

    Raises:
        UnknownModelError: ``name`` is not a published ELMo model.
        ModelUnavailableError: not cached and the download failed (offline, truncated,
            wrong size); the message says which files to get and where to put them.
    """
    spec = ELMO_MODELS.get(name)
    if spec is None:
        raise UnknownModelError(
            f"Unknown ELMo model {name!r}; the published ones are {', '.join(ELMO_MODELS)}."
        )
    folder = model_dir(name)
    if is_cached(name):
        return folder
    base = _base_url(base_url)
    options_url, weights_url = f"{base}/{spec.options_path}", f"{base}/{spec.weights_path}"
    try:
        # Weights first: options.json appearing last marks the folder complete.
        if not (folder / WEIGHTS_NAME).is_file():
            download_file(
                weights_url,
                folder / WEIGHTS_NAME,
                size=spec.weights_size,
                sha256=spec.weights_sha256,
                progress=progress,
            )
        download_file(options_url, folder / OPTIONS_NAME, progress=progress)
    except (DownloadError, http.client.HTTPException) as exc:
        # HTTPException: a connection cut mid-body can surface as IncompleteRead.
        raise ModelUnavailableError(
            f"{name} ({spec.description}) is not downloaded yet and the download failed: "
            f"{exc}\nTo use it offline, download these two files:\n"
            f"  {options_url}\n  {weights_url}\n"
            f"and save them as {folder / OPTIONS_NAME} and {folder / WEIGHTS_NAME} "
            "(or put them in any folder, as options.json plus one .hdf5 file, and pass "
            "that folder's path as the model)."
        ) from exc
    return folder
