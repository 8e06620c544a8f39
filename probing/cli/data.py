"""CLI command ``data``: which data sets are here, and fetching the missing ones.

    python -m probing data list
    python -m probing data download semcor [--base-url URL] [--force]

``list`` shows each data set's name, licence, whether it is present in the data folder and
where; ``download`` fetches one (or ``all``) through :func:`probing.datasets.download_dataset`
from its canonical source, or from a mirror laid out like the data folder (``--base-url``,
or ``$CONTEXTLENS_DATA_URL``).
"""

from __future__ import annotations

import argparse
import json
import sys

from probing.shipped import add_overwrite_argument, refuse_shipped


def add_arguments(p: argparse.ArgumentParser) -> None:
    """``data list`` / ``data download NAME`` as sub-subcommands."""
    sub = p.add_subparsers(dest="data_command", metavar="{list,download}")
    sub.required = True
    ls = sub.add_parser("list", help="data sets: name, licence, present?, path")
    ls.add_argument("--json", action="store_true", help="print JSON")
    dl = sub.add_parser("download", help="fetch a data set into the data folder")
    dl.add_argument("name", help="data set name (see `data list`), or 'all'")
    dl.add_argument("--base-url", help="mirror root laid out like the data folder")
    dl.add_argument("--force", action="store_true", help="fetch again even if present")
    add_overwrite_argument(dl)
    for q in (ls, dl):
        q.add_argument("--data-dir", default=argparse.SUPPRESS, help="data folder")


def run(args: argparse.Namespace) -> int:
    if args.data_command == "list":
        return _list(args)
    return _download(args)


def dataset_status() -> list[dict]:
    """One row per data set: name, description, licence, present, path."""
    from probing.config import data_dir
    from probing.datasets import dataset_path, list_datasets
    from probing.datasets.integrity import problems
    from probing.errors import DatasetNotFoundError

    rows = []
    for info in list_datasets():
        try:
            path, present = dataset_path(info.name), True
        except DatasetNotFoundError:
            path, present = data_dir() / info.folder, False
        bad = problems(info.name) if present else []  # sizes only: cheap
        rows.append(
            {
                "name": info.name,
                "description": info.description,
                "licence": info.licence,
                "present": present and not bad,
                "problems": bad,
                "path": str(path),
            }
        )
    return rows


def _list(args: argparse.Namespace) -> int:
    rows = dataset_status()
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    width = max(len(r["name"]) for r in rows)
    lic = max(len(r["licence"]) for r in rows)
    print(f"{'name':<{width}}  {'licence':<{lic}}  present  path")
    for r in rows:
        mark = "yes" if r["present"] else ("damaged" if r["problems"] else "no")
        print(f"{r['name']:<{width}}  {r['licence']:<{lic}}  {mark:<7}  {r['path']}")
        for problem in r["problems"]:
            print(f"  {problem}; fix: python -m probing data download {r['name']} --force")
    if not all(r["present"] for r in rows):
        print("\nget a missing one with: python -m probing data download NAME")
    return 0


def _download(args: argparse.Namespace) -> int:
    from tqdm.auto import tqdm

    from probing.datasets import download_dataset, list_datasets

    names = [d.name for d in list_datasets()] if args.name == "all" else [args.name]
    known = {d.name for d in list_datasets()}
    unknown = [n for n in names if n not in known]
    if unknown:
        print(
            f"error: unknown data set {unknown[0]!r}; choose one of: {', '.join(sorted(known))}, all",
            file=sys.stderr,
        )
        return 2
    from probing.config import data_dir

    infos = {d.name: d for d in list_datasets()}
    refuse_shipped(  # a data folder inside the checkout (--data-dir .) would add to the repo
        folders=[data_dir() / infos[n].folder for n in names],
        overwrite=args.overwrite,
        hint="download into a data folder outside the checkout (--data-dir DIR)",
    )
    for name in names:
        with tqdm(desc=name, unit="B", unit_scale=True, file=sys.stderr) as bar:

            def progress(done: int, total: int | None, bar: tqdm = bar) -> None:
                if total is not None and bar.total != total:
                    bar.total = total
                bar.update(done - bar.n)

            result = download_dataset(
                name, progress=progress, base_url=args.base_url, force=args.force
            )
        got, kept = len(result.downloaded), len(result.skipped)
        print(f"{name}: {got} file(s) downloaded, {kept} already present -> {result.folder}")
        for note in result.notes:
            print(f"  note: {note}")
    return 0
