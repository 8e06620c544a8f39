"""A typed minimal pair: its attractor, and how its patching map may be drawn (issue 46:
the attractor column read 0.00 at every layer, a pair the model got wrong gave "fractions"
of a negative difference, and one pair showed "(x–x)" intervals)."""

from __future__ import annotations

import numpy as np
import pytest

from probing.errors import InvalidArgumentError
from probing.interventions.patching import (
    MIN_TOTAL_EFFECT,
    attractor_index,
    pair_grid,
    read_pair,
    user_pair,
)

SWAPPED = ("The key to the cabinets [MASK] here.", "The keys to the cabinet [MASK] here.")
HELD = ("The key to the cabinets [MASK] here.", "The keys to the cabinets [MASK] here.")


@pytest.fixture(scope="module")
def minilm_mlm():
    import probing

    return probing.load_encoder("minilm-l6-mlm")


def test_the_attractor_is_preset_only_when_it_differs_too():
    pair = read_pair(*SWAPPED)
    assert (pair.subject, pair.verb, pair.between) == (1, 5, [2, 3, 4])
    assert pair.suggested_attractor() == 4  # "cabinets" / "cabinet"
    assert read_pair(*HELD).suggested_attractor() is None  # the user marks it
    # A word that differs outside subject…verb is no attractor.
    assert (
        read_pair("The key [MASK] near cars.", "The keys [MASK] near car.").suggested_attractor()
        is None
    )


def test_the_marked_attractor_is_the_cases_attractor():
    (a, b, _), (b2, a2, _) = user_pair(*HELD, ("is", "are"), attractor=4)
    assert attractor_index(a) == attractor_index(b) == 4 and a.attractors == 1
    assert (b2, a2) == (b, a)
    (a, _b, _), _ = user_pair(*HELD, ("is", "are"))
    assert attractor_index(a) is None and a.attractors == 0
    with pytest.raises(InvalidArgumentError, match="between the subject"):
        user_pair(*HELD, ("is", "are"), attractor=6)  # "here": after [MASK]


def test_make_batches_puts_the_marked_word_in_the_attractor_role(minilm_mlm):
    from probing.interventions.patching import make_batches

    batch = make_batches(minilm_mlm, user_pair(*HELD, ("is", "are"), attractor=4))[0]
    tok = minilm_mlm.tokenizer
    for row in range(2):
        pieces = tok.convert_ids_to_tokens(batch.base["input_ids"][row])
        marked = [p for p, on in zip(pieces, batch.roles["attractor"][row], strict=True) if on]
        assert "".join(m.lstrip("#") for m in marked) == "cabinets"
    none = make_batches(minilm_mlm, user_pair(*HELD, ("is", "are")))[0]
    assert not none.roles["attractor"].any()


def _out(total: float, n_groups: int = 1) -> dict:
    """A patching result of 2 layers × 4 roles: fractions ``z`` = moved / total."""
    moved = np.array([[0.9, 0.0, 0.1, 0.2], [0.3, 0.4, 0.5, -0.2]]) * abs(total or 1)
    z = (moved / total).tolist() if total else np.full_like(moved, np.nan).tolist()
    return {
        "roles": {
            "z": z,
            "lo": z,
            "hi": z,
            "moved": moved.tolist(),
            "moved_lo": moved.tolist(),
            "moved_hi": moved.tolist(),
            "x": ["subject", "attractor", "verb", "other"],
            "y": ["0", "1"],
            "x_title": "position role",
        },
        "total_effect": {"value": total},
        "n_groups": n_groups,
    }


@pytest.mark.parametrize("total", [-1.28, 0.0, MIN_TOTAL_EFFECT / 2])
def test_a_total_effect_of_the_wrong_sign_or_near_zero_is_not_divided_by(total):
    grid = pair_grid(_out(total))
    assert not grid["normalised"] and grid["unit"] == "moved" and grid["total"] == total
    assert grid["z"] == _out(total)["roles"]["moved"]


def test_fractions_when_the_total_is_clear_and_intervals_only_with_several_pairs():
    one = pair_grid(_out(1.5))
    assert one["normalised"] and one["unit"] == "fraction moved"
    assert one["z"] == _out(1.5)["roles"]["z"]
    assert one["lo"] is None and one["hi"] is None and not one["intervals"]
    many = pair_grid(_out(1.5, n_groups=40))
    assert many["intervals"] and many["lo"] == _out(1.5)["roles"]["lo"]


def test_an_unmarked_attractor_column_is_left_out():
    grid = pair_grid(_out(1.5), drop=("attractor",))
    assert grid["x"] == ["subject", "verb", "other"]
    assert [len(r) for r in grid["z"]] == [3, 3]
    assert grid["z"][0] == pytest.approx([0.9, 0.1, 0.2])


def test_the_figure_shows_point_values_without_an_interval():
    from probing.figures.interventions import patching_figure

    fig = patching_figure(pair_grid(_out(-1.28)))
    heat = fig.data[0]
    assert heat.colorbar.title.text != "fraction moved"
    assert all("(" not in t for row in heat.text for t in row)
    fig = patching_figure(pair_grid(_out(1.5, n_groups=40)))
    assert all("(" in t for row in fig.data[0].text for t in row)
