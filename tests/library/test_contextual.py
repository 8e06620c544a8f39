"""Occurrence finding, per-layer similarity and nearest neighbours, on the real minilm-l6."""

from __future__ import annotations

import numpy as np
import pytest

from probing.analyses.contextual import (
    OccurrenceComparison,
    build_vocabulary,
    compare_occurrences,
    cosine_matrix,
    find_occurrences,
    locate,
    nearest_neighbours,
)
from probing.errors import EmptyInputError
from probing.figures.contextual import occurrence_heatmap_figure, similarity_by_layer_figure

BANK = [
    "He sat on the river bank and watched the water.",
    "She opened a bank account to save money.",
    "The Bank approved the loan on Friday.",
]


def test_occurrences_are_whole_words_case_insensitive():
    sentences = [["The", "Bank", "is", "near"], ["banks", "and", "an", "embankment", "bank", "."]]
    found = find_occurrences(sentences, "bank")
    assert [(o.sentence, o.index, o.word) for o in found] == [(0, 1, "Bank"), (1, 4, "bank")]
    assert find_occurrences(sentences, "BANK") == found
    assert find_occurrences(sentences, "  bank ") == found


@pytest.mark.parametrize(
    ("text", "target", "error", "pattern"),
    [
        ("", "bank", EmptyInputError, "two or more sentences"),
        ("   \n  \n", "bank", EmptyInputError, "two or more sentences"),
        ("A river bank.", "bank", ValueError, "Only one sentence"),
        ("A river shore.\nMoney in banks.", "bank", ValueError, "does not occur"),
        ("A river bank.\nMoney in the vault.", "bank", ValueError, "only once"),
        ("A river bank.\nA bank loan.", "", EmptyInputError, "target word"),
        ("A river bank.\nA bank loan.", "river bank", ValueError, "single word"),
    ],
)
def test_bad_input_gives_clear_errors(text, target, error, pattern):
    with pytest.raises(error, match=pattern):
        locate(text, target)


def test_cosine_matrix_matches_a_loop_and_is_exactly_one_for_equal_vectors():
    rng = np.random.default_rng(0)
    a = rng.normal(size=(5, 7)).astype(np.float32)
    a[3] = a[1]  # an exact duplicate
    sims = cosine_matrix(a)
    for i in range(5):
        for j in range(5):
            x, y = a[i].astype(np.float64), a[j].astype(np.float64)
            assert sims[i, j] == pytest.approx(
                x @ y / np.linalg.norm(x) / np.linalg.norm(y), abs=1e-12
            )
    assert sims[1, 3] == 1.0 and sims[3, 1] == 1.0
    assert np.all(np.diag(sims) == 1.0)
    assert cosine_matrix(np.zeros((2, 3)))[0, 1] == 0.0


@pytest.fixture(scope="module")
def bank(minilm) -> OccurrenceComparison:
    return compare_occurrences(minilm, "\n".join(BANK), "bank")


def test_static_similarity_is_exactly_one_and_contextual_is_below(bank):
    assert len(bank.occurrences) == 3
    assert bank.layers.shape == (7, 3, 384) and bank.similarity.shape == (7, 3, 3)
    pairs = bank.pairs()
    # Same word type (uncased model: "Bank" is "bank"): identical static vectors, cosine 1.
    assert all(bank.static_similarity[i, j] == 1.0 for i, j in pairs)
    for layer in range(1, 7):
        assert all(bank.similarity[layer, i, j] < 1.0 for i, j in pairs), layer
    table = bank.pair_table()
    assert len(table) == 7 * (len(pairs) + 1)
    mean = table[table["pair"] == "mean over pairs"]
    assert (mean["static_cosine"] == 1.0).all()
    assert mean["depth"].tolist() == pytest.approx([k / 6 for k in range(7)])


def test_picks_choose_occurrences(minilm):
    comp = compare_occurrences(minilm, BANK, "bank", picks=[0, 2])
    assert [o.sentence for o in comp.occurrences] == [0, 2]
    with pytest.raises(ValueError, match="pick at least two"):
        compare_occurrences(minilm, BANK, "bank", picks=[1])


def test_nearest_neighbours_per_layer(minilm, bank):
    vocab = build_vocabulary(
        minilm,
        [
            ["The", "bank", "raised", "interest", "rates", "."],
            ["Fish", "swim", "near", "the", "shore", "of", "the", "river", "."],
            ["She", "deposited", "money", "in", "her", "account", "."],
        ],
    )
    assert "." not in vocab.words and len(vocab) == 19
    table = nearest_neighbours(bank, vocab, k=3)
    assert set(table["layer"]) == {"static", *map(str, range(7))}
    assert len(table) == 8 * 3 * 3
    static = table[(table["layer"] == "static") & (table["rank"] == 1)]
    # In the static space "bank" is nearest to "bank" (the same vector) for every occurrence.
    assert (static["word"] == "bank").all() and np.allclose(static["cosine"], 1.0, atol=1e-6)
    top = table[table["layer"] == "6"]
    assert top["cosine"].between(-1, 1).all()


def test_figures_overlay_models_of_different_depth(bank):
    shallow = OccurrenceComparison(
        model="shallow",
        layer_names=bank.layer_names[:4],
        sentences=bank.sentences,
        occurrences=bank.occurrences,
        layers=bank.layers[:4],
        static=bank.static,
        similarity=bank.similarity[:4],
        static_similarity=bank.static_similarity,
    )
    fig = similarity_by_layer_figure([bank, shallow])
    xs = [list(t.x) for t in fig.data if t.name.endswith("contextual") or "mean" in t.name]
    assert max(max(x) for x in xs) == pytest.approx(1.0)  # relative depth
    assert fig.layout.xaxis.title.text.startswith("relative depth")
    refs = [t for t in fig.data if "static" in t.name]
    assert len(refs) == 2 and all(list(t.y) == [1.0, 1.0] for t in refs)
    same = similarity_by_layer_figure([bank], show="pairs")
    assert len(same.data) == 3 + 1  # three pairs and the static reference
    heat = occurrence_heatmap_figure(bank, -1)
    assert np.all(np.asarray(heat.data[0].z) == 1.0)


def test_works_for_elmo_too(data_dir):
    """The tiny AllenNLP test ELMo: a cased, character-based model with 2 biLSTM layers."""
    from probing.encoders.elmo import load_elmo

    folder = data_dir / "allennlp-elmo-fixture"
    elmo = load_elmo((folder / "options.json", folder / "lm_weights.hdf5"), name="elmo-fixture")
    comp = compare_occurrences(
        elmo, ["The river bank is muddy .", "The bank lends money ."], "bank"
    )
    assert comp.layers.shape[0] == 3 and comp.static_similarity[0, 1] == 1.0
    assert comp.similarity[0, 0, 1] == 1.0  # layer 0 is the context-free token layer
    assert comp.similarity[1, 0, 1] < 1.0 and comp.similarity[2, 0, 1] < 1.0
    cased = compare_occurrences(elmo, ["The Bank lends money .", "A river bank ."], "bank")
    assert cased.static_similarity[0, 1] < 1.0  # "Bank" and "bank" are two types to ELMo
