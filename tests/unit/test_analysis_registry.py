"""The analysis registry (issue 47): settings declared once, read by the CLI and the pages."""

from __future__ import annotations

import argparse
import dataclasses

import pytest

from probing import params
from probing.analyses import params as analysis_params
from probing.analyses.registry import ANALYSES, get
from probing.cli.main import build_parser
from probing.errors import InvalidArgumentError


def test_mirrored_choices_match_the_library() -> None:
    """The settings module mirrors names it cannot import lightly; they must stay equal."""
    from probing.datasets.registry import corpus_names
    from probing.encoding import POOLINGS

    assert tuple(corpus_names()) == analysis_params.CORPORA
    assert set(analysis_params.POOLINGS) == set(POOLINGS)


@pytest.mark.parametrize("name", list(ANALYSES))
def test_every_setting_has_help_and_a_range_or_choices(name: str) -> None:
    for f in dataclasses.fields(get(name).params):
        spec = f.metadata["spec"]
        assert spec.help, f.name
        if f.type in ("int", "float"):
            assert spec.bound is not None and spec.bound.holds(f.default), f.name
        if spec.choices:
            assert f.default in spec.choices, f.name


@pytest.mark.parametrize("name", list(ANALYSES))
def test_the_cli_parses_the_settings_class(name: str) -> None:
    """Every field is an option of the command; its defaults give the class's defaults, and
    the recorded argv of a changed instance parses back to that instance."""
    analysis = get(name)
    parser = build_parser(name)
    base = ["--model-a", "x"] if name == "cka" else []
    out = ["--out", "somewhere"]
    args = parser.parse_args([name, *base, *out])
    assert params.from_args(analysis.params, args) == analysis.params()
    changed = {}
    for f in dataclasses.fields(analysis.params):
        spec = f.metadata["spec"]
        if spec.flag:
            changed[f.name] = not f.default
        elif spec.choices:
            changed[f.name] = next(c for c in spec.choices if c != f.default)
        elif spec.bound is not None:
            changed[f.name] = int(spec.bound.lo) if f.default != spec.bound.lo else f.default + 1
    instance = analysis.params(**changed)
    argv = params.argv_of(instance)
    assert params.from_args(analysis.params, parser.parse_args([name, *base, *out, *argv])) == (
        instance
    )


def test_out_of_range_is_refused_by_the_cli_and_the_library(capsys) -> None:
    parser = build_parser("cka")
    with pytest.raises(SystemExit):
        parser.parse_args(["cka", "--n-words", "3", "--out", "x"])
    assert "--n-words: must be a whole number from 4 to 20,000, not '3'" in capsys.readouterr().err
    cka = get("cka")
    with pytest.raises(InvalidArgumentError, match="--n-words must be a whole number from 4"):
        cka.run([], cka.params(n_words=3))
    with pytest.raises(InvalidArgumentError, match="--split must be one of train, dev, test"):
        cka.run([], cka.params(split="validation"))
    with pytest.raises(InvalidArgumentError, match="takes 1 to 2 models, not 0"):
        cka.run([], cka.params())


def test_unknown_analysis_names_the_registered_ones() -> None:
    with pytest.raises(InvalidArgumentError, match="registered: cka, contextuality"):
        get("ckaa")


def test_a_model_without_what_an_analysis_needs_is_refused_with_its_reason() -> None:
    from probing.analyses.registry import Analysis
    from probing.models.registry import ENTRIES

    needs = Analysis("heads-test", "", analysis_params.CkaParams, "x:y", needs=("has_attention",))
    assert "attention heads" in needs.is_compatible(ENTRIES["elmo-mini"].info)
    assert needs.is_compatible(ENTRIES["minilm-l6"].info) is None


def test_cka_through_the_registry_equals_the_direct_call(minilm) -> None:
    """The registry's run is the analysis itself: same numbers as compare_models."""
    from probing.analyses.cka import compare_models

    cka = get("cka")
    settings = cka.params(n_words=40, n_boot=20)
    seen: list[tuple[str, int, int]] = []
    via = cka.run([minilm], settings, lambda s, d, t: seen.append((s, d, t)))
    direct = compare_models(minilm, None, "ud-ewt", "dev", 40, 20, 0)
    assert (via.value == direct.value).all() and (via.low == direct.low).all()
    assert seen and seen[-1][0] == "layer pairs" and seen[-1][1] == seen[-1][2]


def test_argparse_namespace_round_trip_for_contextuality() -> None:
    ns = argparse.Namespace(
        dataset="brown",
        split="dev",
        n_sentences=40,
        min_count=2,
        seed=3,
        uncentred_mev=True,
        pooling="mean",
    )
    settings = params.from_args(analysis_params.ContextualityParams, ns)
    assert params.argv_of(settings) == [
        "--dataset",
        "brown",
        "--split",
        "dev",
        "--n-sentences",
        "40",
        "--min-count",
        "2",
        "--seed",
        "3",
        "--uncentred-mev",
        "--pooling",
        "mean",
    ]
