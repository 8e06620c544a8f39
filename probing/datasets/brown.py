"""Reader for the Brown corpus in NLTK's layout (files ``ca01``..``cr09``, ``word/tag``).

Tags are normalised for probing (``pos``); the file's own tag is kept as ``pos_raw``:

- upper-cased (NLTK's convention: ``np$`` -> ``NP$``);
- the title / headline / cited-word marks are dropped wherever they stand: suffixes ``-TL``,
  ``-HL``, ``-NC`` (also stacked, ``NN-TL-HL`` -> ``NN``) and the foreign-word prefix ``FW-``
  (``FW-NN-TL`` -> ``NN``), because they describe where a word stands, not its part of speech;
- compound (contraction) tags such as ``PPS+BEZ`` (``it's``) and possessives such as ``NP$``
  and negations such as ``DOZ*`` are kept: they are genuine Brown tags.

Split: a Brown file goes to the split of the SemCor document made from it under the fixed
SemCor rule (``ca01`` -> ``semcor_split("br-a01")``), for every file whether or not it is in
SemCor. Brown and SemCor splits therefore agree, and the LM training text
(``probing.training.corpus``), which leaves out Brown's dev and test files, never contains a
sentence of a SemCor or Brown dev/test document.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from functools import lru_cache
from pathlib import Path

from probing.datasets.registry import dataset_path
from probing.datasets.splits import Split, semcor_split
from probing.datasets.types import Sentence, in_folder

_FILE_RE = re.compile(r"^c[a-r]\d\d$")
# "-T"/"-N" appear truncated in a handful of tags (``FW-IN+AT-T``, ``PPSS+BER-N``).
_SUFFIX_RE = re.compile(r"(?:-(?:TL|HL|NC|T|N))+$")


@lru_cache(maxsize=4096)  # ~470 distinct tags over 1.16 M tokens
def normalize_brown_tag(tag: str) -> str:
    """Brown tag without title/headline/cited/foreign marks, upper-cased (see module doc)."""
    tag = tag.upper()
    if tag.startswith("FW-") and len(tag) > 3:
        tag = tag[3:]
    stripped = _SUFFIX_RE.sub("", tag)
    return stripped or tag  # "--" and friends stay as they are


def brown_split(file_id: str) -> Split:
    """Split of Brown file ``file_id`` (``ca01``): that of SemCor document ``br-a01``."""
    return semcor_split("br-" + file_id[1:])


def _folder(data_dir: str | Path | None, folder: Path | None) -> Path:
    """The Brown folder: the one handed in (its genre list checked), else the data dir's."""
    if folder is None:
        return dataset_path("brown", data_dir)
    in_folder("brown", folder, "cats.txt")
    return folder


def brown_files(data_dir: str | Path | None = None, *, folder: Path | None = None) -> list[str]:
    """All Brown file ids present, sorted (``ca01`` ... ``cr09``)."""
    folder = _folder(data_dir, folder)
    return sorted(p.name for p in folder.iterdir() if _FILE_RE.match(p.name))


@lru_cache(maxsize=4)
def _categories(folder: Path) -> dict[str, str]:
    cats: dict[str, str] = {}
    cats_file = folder / "cats.txt"
    for line in cats_file.read_text(encoding="utf-8").splitlines():
        parts = line.split()
        if len(parts) >= 2:
            cats[parts[0]] = parts[1]
    return cats


def brown_genres(data_dir: str | Path | None = None) -> dict[str, str]:
    """File id -> genre (``news``, ``fiction`` ...) from ``cats.txt``."""
    return dict(_categories(dataset_path("brown", data_dir)))


def _split_token(token: str) -> tuple[str, str]:
    # Words may contain "/" ("1/2/cd"): the tag is after the last slash.
    word, _, tag = token.rpartition("/")
    return (word, tag) if word else (token, "")


def read_brown(
    split: str | Iterable[str] | None = None,
    data_dir: str | Path | None = None,
    files: Iterable[str] | None = None,
    *,
    folder: Path | None = None,
) -> Iterator[Sentence]:
    """Sentences of the Brown corpus, file by file in file-id order.

    Args:
        split: ``train``/``dev``/``test`` (or several); ``None`` for all files.
        data_dir: data folder (default: the data-dir setting).
        files: read only these file ids (still in sorted order).
        folder: the Brown folder itself (the registry hands it in; ``data_dir`` unused).

    Yields:
        Sentence with labels ``pos`` (normalised) and ``pos_raw``; ``meta["genre"]``.
    """
    folder = _folder(data_dir, folder)
    wanted = {split} if isinstance(split, str) else (set(split) if split is not None else None)
    genres = _categories(folder)
    chosen = sorted(files) if files is not None else brown_files(folder=folder)
    for file_id in chosen:
        part = brown_split(file_id)
        if wanted is not None and part not in wanted:
            continue
        n = 0
        with open(folder / file_id, encoding="utf-8") as f:
            for line in f:
                tokens = line.split()
                if not tokens:
                    continue
                words, raw = zip(*(_split_token(t) for t in tokens), strict=True)
                n += 1
                yield Sentence(
                    words=list(words),
                    labels={
                        "pos": [normalize_brown_tag(t) for t in raw],
                        "pos_raw": list(raw),
                    },
                    doc_id=file_id,
                    sent_id=f"{file_id}-{n}",
                    split=part,
                    meta={"genre": genres.get(file_id, "")},
                )


def brown_words(
    split: str | Iterable[str] | None = None, data_dir: str | Path | None = None
) -> Iterator[list[str]]:
    """Just the words of each Brown sentence (cheaper than :func:`read_brown`)."""
    folder = dataset_path("brown", data_dir)
    wanted = {split} if isinstance(split, str) else (set(split) if split is not None else None)
    for file_id in brown_files(data_dir):
        if wanted is not None and brown_split(file_id) not in wanted:
            continue
        with open(folder / file_id, encoding="utf-8") as f:
            for line in f:
                tokens = line.split()
                if tokens:
                    yield [_split_token(t)[0] for t in tokens]


def brown_split_files(split: str, folder: Path | None = None) -> list[Path]:
    """The files whose bytes determine a split's sentences (in ``folder``, the Brown folder
    the registry hands in): its files, ``cats.txt`` (the genres) and this reader."""
    folder = _folder(None, folder)
    files = [folder / f for f in brown_files(folder=folder) if brown_split(f) == split]
    return files + [folder / "cats.txt", Path(__file__)]
