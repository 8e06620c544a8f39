"""What ships in the repository is read-only to every command unless asked (``--overwrite``).

The repository's ``results/`` holds the runs the app shows and ``models/`` the embedded
models (weights, cards, training logs). A README example with ``--out results/`` once
replaced the full-data WSD run with a 2,000-sentence one, and a one-epoch
``train-elmo-softmax`` replaced ELMo-mini's softmax (held-out perplexity 205 → 7,509). So
every command that writes asks :func:`refuse_shipped` first, before any work, about every
file (or folder) it would write:

- anything inside the checkout that git does not ignore is shipped, whether it exists or not
  (a new file in ``results/``, ``models/`` or the root changes the repository too); without
  git to ask, ``results/``, ``models/`` and the root itself are;
- an existing file in :func:`probing.config.results_dir` (``$CONTEXTLENS_RESULTS_DIR``, when it
  points elsewhere) is shipped;
- an empty ``--out ""`` is refused while parsing (:func:`output_folder`): it would silently
  mean the current directory.

Standard library only: commands call this before their heavy imports.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
from collections.abc import Iterable
from pathlib import Path

from probing import config
from probing.errors import ShippedFilesError

SHIPPED_DIR = config.results_dir()
SHIPPED_FOLDERS = ("results", "models")  # the repository's own, whatever results_dir() says
# A folder is "written into" through some file in it; a neutral name asks git whether the
# folder itself lies in an ignored one (patterns such as ``*.html`` name files, not folders).
_ANY_FILE = "contextlens-output"
OUT_HINT = "write somewhere else with --out DIR (e.g. --out /tmp/contextlens)"


def add_overwrite_argument(p: argparse.ArgumentParser) -> None:
    """``--overwrite``: the one way to write into the repository's shipped files."""
    p.add_argument(
        "--overwrite",
        action="store_true",
        help="allow writing into the repository's shipped files (results/, models/)",
    )


def output_folder(text: str) -> Path:
    """argparse ``type`` of an output folder: ``--out ""`` is refused, not taken to mean the
    current directory (``Path("")`` is ``.``)."""
    if not text.strip():
        raise argparse.ArgumentTypeError(
            "an empty path would mean the current directory; name the folder, e.g. "
            "--out /tmp/contextlens (or --out . for the current one)"
        )
    if "\0" in text:
        raise argparse.ArgumentTypeError("a path cannot contain a NUL character")
    return Path(text)


def _resolved(path: Path) -> Path:
    """``path`` absolute with links followed (a link into the checkout is the checkout)."""
    try:
        return Path(path).expanduser().resolve()
    except (OSError, RuntimeError, ValueError):  # a link loop (RuntimeError before 3.13)
        return Path(os.path.abspath(Path(path).expanduser()))


def _git_ignored(relative: list[Path]) -> set[Path] | None:
    """Which of ``relative`` (paths in the checkout) git ignores; None when git cannot say
    (not a git checkout, no git). Tracked files count as not ignored whatever the patterns."""
    root = config.REPO_ROOT
    if not relative:
        return set()
    if not (root / ".git").exists() or shutil.which("git") is None:
        return None
    try:
        proc = subprocess.run(
            ["git", "-C", str(root), "check-ignore", "-z", "--stdin"],
            input="".join(f"{p}\0" for p in relative),
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if proc.returncode not in (0, 1):  # 1: none ignored; 128: git could not answer
        return None
    ignored = {Path(s) for s in proc.stdout.split("\0") if s}
    return {p for p in relative if p in ignored}


def shipped_paths(paths: Iterable[str | os.PathLike[str]]) -> list[Path]:
    """The ``paths`` (files that would be written) that are shipped, resolved (module doc)."""
    resolved = [_resolved(Path(p)) for p in paths]
    root = config.REPO_ROOT
    relative = {p: p.relative_to(root) for p in resolved if p.is_relative_to(root)}
    ignored = _git_ignored(sorted(set(relative.values())))
    results = _resolved(SHIPPED_DIR)
    shipped = []
    for path in resolved:
        rel = relative.get(path)
        if rel is not None:
            if ignored is None:
                in_repo = len(rel.parts) <= 1 or rel.parts[0] in SHIPPED_FOLDERS
            else:
                in_repo = rel not in ignored
            if in_repo:
                shipped.append(path)
                continue
        if path.is_file() and path.is_relative_to(results):
            shipped.append(path)
    return shipped


def is_shipped(path: str | os.PathLike[str]) -> bool:
    """True when writing ``path`` would change a shipped file (module doc)."""
    return bool(shipped_paths([path]))


def _name(path: Path) -> str:
    """``path`` as a user knows it: relative to the checkout when inside it."""
    root = config.REPO_ROOT
    if path == root:
        return str(root)
    return str(path.relative_to(root)) if path.is_relative_to(root) else str(path)


def _what(paths: list[Path]) -> str:
    """What the shipped ``paths`` are, for the message."""
    tops = {
        p.relative_to(config.REPO_ROOT).parts[0] if p.is_relative_to(config.REPO_ROOT) else ""
        for p in paths
    }
    kinds = []
    if "results" in tops or "" in tops:
        kinds.append("the shipped results the app shows")
    if "models" in tops:
        kinds.append("the shipped models (models/)")
    if tops - {"results", "models", ""}:
        kinds.append("the ContextLens checkout (git would show them)")
    return " and ".join(kinds)


def refuse_shipped(
    paths: Iterable[str | os.PathLike[str]] = (),
    overwrite: bool = False,
    *,
    folders: Iterable[str | os.PathLike[str]] = (),
    hint: str = OUT_HINT,
) -> None:
    """Raise before any work when a file in ``paths``, or any file written into one of
    ``folders``, is shipped and not ``overwrite``.

    Args:
        paths: every file the command would write.
        overwrite: the user's ``--overwrite``.
        folders: folders the command writes files of its own choosing into (checkpoints).
        hint: how else to run the command (the message adds "or pass --overwrite").

    Raises:
        ShippedFilesError: names the files and the two ways on.
    """
    if overwrite:
        return
    folders = [Path(f) for f in folders]
    candidates = [Path(p) for p in paths] + [f / _ANY_FILE for f in folders]
    shipped = shipped_paths(candidates)
    if not shipped:
        return
    # a folder's neutral file stands for the folder
    names = [_name(p.parent) + "/" if p.name == _ANY_FILE else _name(p) for p in shipped]
    hint = hint[:1].upper() + hint[1:]
    raise ShippedFilesError(
        f"{', '.join(dict.fromkeys(names))} would be written into {_what(shipped)}; commands "
        f"write there only with --overwrite. {hint}, or pass --overwrite to write there anyway."
    )
