"""The layering figure and its page, on the committed results."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from probing.claims.render import load as load_claims
from probing.figures.layering import (
    approx_cog_interval,
    layering_figure,
    load_curves,
    task_curve,
)
from probing.probes.metrics import centre_of_gravity
from probing.probes.run import ProbeResults

REPO = Path(__file__).resolve().parents[2]
RESULTS = REPO / "results"
PAGE = str(REPO / "pages" / "5_Layering.py")


def test_curves_are_scaled_to_their_own_range_by_relative_depth():
    res = ProbeResults.from_json(RESULTS / "minilm-l6__ud-ewt__pos.json")
    c = task_curve(res, "accuracy", "POS", "#000")
    scores = res.layer_scores()
    assert c.scaled.min() == pytest.approx(0) and c.scaled.max() == pytest.approx(1)
    assert np.argmax(c.scaled) == np.argmax(scores["value"].to_numpy())
    assert c.depth[0] == 0 and c.depth[-1] == 1
    assert (c.low <= c.scaled + 1e-9).all() and (c.scaled <= c.high + 1e-9).all()
    cog = centre_of_gravity(scores["value"].to_numpy(), scores["layer"].to_numpy(float)) / 6
    assert c.cog == pytest.approx(cog)
    assert c.cog_low <= c.cog <= c.cog_high and not c.cog_exact


def test_approximate_interval_widens_with_the_per_layer_intervals():
    v, layers = np.array([0.5, 0.8, 0.9, 0.9]), np.arange(4)
    narrow = approx_cog_interval(v, v - 0.001, v + 0.001, layers)
    wide = approx_cog_interval(v, v - 0.05, v + 0.05, layers)
    cog = centre_of_gravity(v, layers)
    assert narrow[0] <= cog <= narrow[1]
    assert wide[1] - wide[0] > 5 * (narrow[1] - narrow[0])


def test_the_figure_draws_both_models():
    curves = {m: load_curves(RESULTS, m) for m in ("minilm-l6", "elmo-mini")}
    assert curves["minilm-l6"], "committed minilm-l6 results are missing"
    fig = layering_figure(curves)
    assert {t.name for t in fig.data if t.showlegend} >= {"POS (UPOS)", "supersense"}


def test_layering_page_renders_offline():
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    assert not at.exception, at.exception
    assert at.title[0].value == "Layering"
    assert len(at.get("plotly_chart")) == 1
    assert at.sidebar.multiselect(key="models").value[:2] == ["elmo-mini", "minilm-l6"]
    # issue 40: the page states the claims docs/results.md states, from the same builder.
    committed = {c.id: c.text for c in load_claims(RESULTS / "claims.json")}
    said = [m.value for m in at.markdown if "centres of gravity (running best)" in m.value]
    assert (
        said
        == [
            f"**{m}**{committed[f'cog:{m}'][len(m) :]}"
            for m in ("elmo-mini", "minilm-l6", "mpnet-base")
        ][: len(said)]
        and len(said) >= 2
    )


def test_layering_follows_the_sidebar_model_picker():
    # issue 33: the page had its own picker and ignored the sidebar's
    at = AppTest.from_file(PAGE, default_timeout=60)
    at.session_state["models"] = ["minilm-l6"]  # as another page left it
    at.run()
    assert not at.exception, at.exception
    models = [m.value.split("**")[1] for m in at.markdown if "(running best)" in m.value]
    assert models == ["minilm-l6"]
    at.sidebar.multiselect(key="models").set_value(["elmo-mini"]).run()
    models = [m.value.split("**")[1] for m in at.markdown if "(running best)" in m.value]
    assert models == ["elmo-mini"]


def test_layering_shows_three_models_and_other_pages_keep_two():
    """Issue 28: the page takes three models (mpnet-base's committed results are read even
    where the picker would not offer mpnet-base, e.g. in demo mode); a two-model page
    opened next keeps the first two of them."""
    at = AppTest.from_file(PAGE, default_timeout=60).run()
    assert not at.exception, at.exception
    picked = at.sidebar.multiselect(key="models").value
    assert picked == ["elmo-mini", "minilm-l6", "mpnet-base"]
    models = [m.value.split("**")[1] for m in at.markdown if "(running best)" in m.value]
    assert models == picked
    other = AppTest.from_file(str(REPO / "pages" / "1_Static_vs_Contextual.py"), default_timeout=60)
    other.session_state["models"] = picked  # as the Layering page left it
    other.run()
    assert not other.exception, other.exception
    assert other.sidebar.multiselect(key="models").value == ["elmo-mini", "minilm-l6"]
