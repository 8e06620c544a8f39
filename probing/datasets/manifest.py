"""Expected files of each data set: ``MANIFEST[name][relative path] = (sha256, size)``.

The data live in ``manifest.json`` beside this module: the files as laid out under the data
dir (the layout the readers expect, and the mirror layout ``download_dataset(...,
base_url=...)`` fetches). Regenerate it from a reference copy with :func:`write_manifest` if
a data set is deliberately updated. Which canonical sources are known to be byte-identical
to these files is recorded in ``probing.datasets.download.SOURCES``.
"""

from __future__ import annotations

import json
from pathlib import Path

from probing.io import atomic_write_json

MANIFEST_PATH = Path(__file__).with_name("manifest.json")

Manifest = dict[str, dict[str, tuple[str, int]]]


def read_manifest(path: Path = MANIFEST_PATH) -> Manifest:
    """``{name: {relative path: (sha256, size in bytes)}}`` from a manifest JSON file."""
    data = json.loads(path.read_text(encoding="utf-8"))
    return {
        name: {rel: (entry["sha256"], int(entry["size"])) for rel, entry in files.items()}
        for name, files in data.items()
    }


def write_manifest(manifest: Manifest, path: Path = MANIFEST_PATH) -> Path:
    """Write ``manifest`` (e.g. ``download.build_manifest(reference_dir)``) as JSON."""
    data = {
        name: {rel: {"sha256": sha, "size": size} for rel, (sha, size) in files.items()}
        for name, files in manifest.items()
    }
    return atomic_write_json(path, data, indent=1)


MANIFEST: Manifest = read_manifest()
