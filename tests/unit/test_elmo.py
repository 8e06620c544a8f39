"""ELMo encoder against AllenNLP's test fixture (outputs of the original TensorFlow bilm)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import h5py
import numpy as np
import pytest
import torch

from probing.encoders.elmo import (
    ElmoBiLm,
    ElmoConfig,
    ElmoEncoder,
    batch_to_char_ids,
    char_ids,
    load_bilm,
    load_elmo,
    reverse_padded,
    save_elmo,
)
from probing.errors import ModelUnavailableError


def _fixture_dir() -> Path:
    for root in (
        os.environ.get("CONTEXTLENS_DATA_DIR"),
        Path(__file__).resolve().parents[3] / "shared" / "data",
    ):
        if root and (Path(root) / "allennlp-elmo-fixture" / "lm_weights.hdf5").is_file():
            return Path(root) / "allennlp-elmo-fixture"
    raise RuntimeError(
        "allennlp-elmo-fixture not found: set CONTEXTLENS_DATA_DIR to the data folder"
    )


FIXTURE = _fixture_dir()
FILES = (FIXTURE / "options.json", FIXTURE / "lm_weights.hdf5")


@pytest.fixture(scope="module", autouse=True)
def _one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def sentences() -> list[list[list[str]]]:
    """sentences[i][k]: word list of sentence k of list i (batch k = [s[0][k], s[1][k], s[2][k]])."""
    raw = json.loads((FIXTURE / "sentences.json").read_text())
    return [[s.split() for s in lst] for lst in raw]


@pytest.fixture(scope="module")
def expected() -> list[list[np.ndarray]]:
    """expected[i][k]: the TF bilm's top layer for sentences[i][k], (n_words, 32)."""
    out = []
    for i in range(3):
        with h5py.File(FIXTURE / f"lm_embeddings_{i}.hdf5", "r") as f:
            out.append([np.concatenate([f[str(k)][0], f[str(k)][1]], axis=-1) for k in range(10)])
    return out


@pytest.fixture(scope="module")
def encoder() -> ElmoEncoder:
    return load_elmo(FILES, name="fixture", provenance="AllenNLP test fixture")


# -- character ids ------------------------------------------------------------------------


def test_char_ids_of_a_known_word():
    # +1 offset: BOW 258 -> 259, bytes b -> b + 1, EOW 259 -> 260, padding 260 -> 261.
    assert char_ids("hi") == [259, ord("h") + 1, ord("i") + 1, 260] + [261] * 46
    assert char_ids("<S>")[:4] == [259, 257, 260, 261]
    assert char_ids("</S>")[:4] == [259, 258, 260, 261]
    assert char_ids("é")[:4] == [259, 0xC3 + 1, 0xA9 + 1, 260]  # UTF-8 bytes
    long = char_ids("x" * 100)
    assert (
        len(long) == 50 and long[0] == 259 and long[49] == 260 and long[1:49] == [ord("x") + 1] * 48
    )


def test_batch_char_ids_add_boundaries_and_zero_padding():
    ids = batch_to_char_ids([["a", "b", "c"], ["d"]])
    assert ids.shape == (2, 5, 50)
    assert ids[1, 0, :3].tolist() == [259, 257, 260]  # <S>
    assert ids[1, 2, :3].tolist() == [259, 258, 260]  # </S> right after the last word
    assert ids[1, 3:].abs().sum() == 0  # padding rows are all zero


def test_config_parsed_from_options():
    cfg = ElmoConfig.from_json(FILES[0])
    assert cfg.filters == ((1, 4), (2, 8), (3, 16), (4, 32), (5, 64))
    assert (cfg.n_highway, cfg.char_embed_dim, cfg.n_characters) == (2, 4, 262)
    assert (cfg.lstm_dim, cfg.projection_dim, cfg.n_layers) == (64, 16, 2)
    assert (cfg.cell_clip, cfg.proj_clip, cfg.use_skip_connections) == (3.0, 3.0, True)
    assert ElmoConfig.from_options(cfg.to_options()) == cfg


# -- parity with the original TensorFlow bilm ---------------------------------------------


def test_stateful_reproduces_all_30_sentences(sentences, expected):
    enc = load_elmo(FILES, stateful=True)
    worst = 0.0
    for k in range(10):  # batches in order, state carried from one to the next
        batch = [sentences[i][k] for i in range(3)]
        for i, e in enumerate(enc.encode(batch, batch_size=3)):
            assert e.layers[2].shape == expected[i][k].shape
            worst = max(worst, float(np.abs(e.layers[2] - expected[i][k]).max()))
    assert worst <= 1e-5, worst


def test_stateless_batch_0_matches_original(encoder, sentences, expected):
    got = encoder.encode([sentences[i][0] for i in range(3)])
    for i in range(3):
        np.testing.assert_allclose(got[i].layers[2], expected[i][0], atol=1e-5, rtol=0)


def test_stateless_later_batches_differ_from_stateful_original(encoder, sentences, expected):
    # The original carried state into batch 1; stateless mode deliberately does not.
    got = encoder.encode([sentences[i][1] for i in range(3)])
    assert np.abs(got[0].layers[2] - expected[0][1]).max() > 1e-3


def test_token_layer_matches_original_token_embeddings(encoder):
    words = (FIXTURE / "vocab_test.txt").read_text().strip().split("\n")
    ids = torch.tensor([char_ids(w) for w in words])
    with torch.no_grad():
        got = encoder.model.token_encoder(ids).numpy()
    with h5py.File(FIXTURE / "elmo_token_embeddings.hdf5", "r") as f:
        want = f["embedding"][...]
    np.testing.assert_allclose(got, want[: len(words)], atol=1e-5, rtol=0)


# -- stateless batching -------------------------------------------------------------------


def test_batch_equals_one_at_a_time(encoder, sentences):
    batch = sentences[1] + sentences[2][:3]  # lengths vary a lot -> lots of padding
    together = encoder.encode(batch, batch_size=len(batch))
    for words, enc in zip(batch, together, strict=True):
        alone = encoder.encode([words])[0]
        np.testing.assert_allclose(enc.layers, alone.layers, atol=1e-6, rtol=0)


def test_call_order_does_not_matter(encoder, sentences):
    first = encoder.encode(sentences[0][:4])
    encoder.encode(sentences[2])
    reversed_again = encoder.encode(sentences[0][:4][::-1])[::-1]
    for a, b in zip(first, reversed_again, strict=True):
        np.testing.assert_allclose(a.layers, b.layers, atol=1e-6, rtol=0)


def test_backward_direction_starts_at_the_true_last_word(encoder):
    # A short sentence padded next to a long one must give the same backward states as alone.
    short, long = (
        ["Dogs", "bark", "."],
        ["The", "cat", "sat", "on", "the", "mat", "all", "day", "."],
    )
    padded = encoder.encode([long, short])[1]
    alone = encoder.encode([short])[0]
    half = padded.layers.shape[-1] // 2
    np.testing.assert_allclose(padded.layers[1:, :, half:], alone.layers[1:, :, half:], atol=1e-6)


def test_reverse_padded_is_a_per_row_involution():
    x = torch.arange(2 * 4).view(2, 4, 1).float()
    lengths = torch.tensor([4, 2])
    r = reverse_padded(x, lengths)
    assert r[:, :, 0].tolist() == [[3, 2, 1, 0], [5, 4, 6, 7]]
    assert torch.equal(reverse_padded(r, lengths), x)


# -- outputs ------------------------------------------------------------------------------


def test_encoding_shapes_and_layer_0_duplicated(encoder):
    (e,) = encoder.encode([["Time", "flies", "like", "an", "arrow", "."]], pooling="mean")
    assert e.layers.shape == (3, 6, 32) and e.layers.dtype == np.float32
    np.testing.assert_array_equal(e.layers[0, :, :16], e.layers[0, :, 16:])
    np.testing.assert_array_equal(e.static, e.layers[0])
    assert e.pieces == e.words and e.word_ids == list(range(6))
    assert e.attentions is None
    assert e.model.family == "elmo" and e.model.layer_names == ("token", "lstm1", "lstm2")
    assert e.model.n_contextual_layers == 2 and e.model.dim == 32 and not e.model.has_attention
    assert e.model.max_pieces is None and e.model.name == "fixture"


def test_raw_text_is_split_into_words(encoder):
    (e,) = encoder.encode("The bank closed.")
    assert e.words == ["The", "bank", "closed", "."]


def test_context_changes_lstm_layers_not_token_layer(encoder):
    a, b = encoder.encode([["the", "river", "bank"], ["the", "savings", "bank"]])
    np.testing.assert_allclose(a.layers[0, 2], b.layers[0, 2], atol=1e-6)
    assert np.abs(a.layers[1, 2] - b.layers[1, 2]).max() > 1e-4


def test_char_cnn_cut_gives_identical_outputs(encoder):
    cnn = encoder.model.token_encoder
    ids = torch.tensor(
        [char_ids(w) for w in ["a", "of", "extraordinarily", "x" * 60, "<S>", "Zürich"]]
    )
    with torch.no_grad():
        x = cnn.char_embed(ids).transpose(1, 2)  # all 50 characters, as the original
        h = torch.cat([torch.relu(conv(x).amax(-1)) for conv in cnn.convs], dim=-1)
        for t, c in zip(cnn.highway_transform, cnn.highway_carry, strict=True):
            g = torch.sigmoid(c(h))
            h = g * torch.relu(t(h)) + (1 - g) * h
        full = cnn.projection(h)
        for rows in (ids, ids[:2], ids[[0]]):  # short batches get cut hardest
            np.testing.assert_allclose(cnn(rows).numpy(), full[: len(rows)].numpy(), atol=1e-6)


def test_stateful_reset_state(sentences):
    enc = load_elmo(FILES, stateful=True)
    first = enc.encode([sentences[0][0]])[0]
    second = enc.encode([sentences[0][0]])[0]
    assert np.abs(first.layers[2] - second.layers[2]).max() > 1e-4  # state was carried
    enc.reset_state()
    np.testing.assert_allclose(enc.encode([sentences[0][0]])[0].layers, first.layers, atol=1e-6)


# -- files --------------------------------------------------------------------------------


def test_save_writes_the_original_format(tmp_path, encoder, sentences):
    save_elmo(encoder.model, tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["options.json", "weights.hdf5"]
    with h5py.File(FILES[1], "r") as a, h5py.File(tmp_path / "weights.hdf5", "r") as b:
        names_a, names_b = [], []
        a.visititems(lambda n, o: names_a.append(n) if isinstance(o, h5py.Dataset) else None)
        b.visititems(lambda n, o: names_b.append(n) if isinstance(o, h5py.Dataset) else None)
        assert sorted(names_a) == sorted(names_b)
        for n in names_a:
            np.testing.assert_array_equal(a[n][...], b[n][...], err_msg=n)
    again = load_elmo(tmp_path)
    batch = sentences[2][:3]
    for x, y in zip(encoder.encode(batch), again.encode(batch), strict=True):
        np.testing.assert_array_equal(x.layers, y.layers)


def test_folder_needs_options_and_exactly_one_weights_file(tmp_path):
    # the fixture folder has five .hdf5 files; only lm_weights.hdf5 is named as weights
    assert load_elmo(FIXTURE).info.source == str(FIXTURE)
    two = tmp_path / "two"
    two.mkdir()
    shutil.copy(FILES[0], two / "options.json")
    shutil.copy(FILES[1], two / "a.hdf5")
    shutil.copy(FILES[1], two / "b.hdf5")
    with pytest.raises(ModelUnavailableError, match="exactly one"):
        load_elmo(two)
    folder = tmp_path / "m"
    folder.mkdir()
    shutil.copy(FILES[0], folder / "options.json")
    with pytest.raises(ModelUnavailableError, match="no \\*.hdf5"):
        load_elmo(folder)
    shutil.copy(FILES[1], folder / "lm_weights.hdf5")
    enc = load_elmo(folder)
    assert enc.info.name == "m" and enc.info.source == str(folder)
    (folder / "options.json").unlink()
    with pytest.raises(ModelUnavailableError, match="options.json"):
        load_elmo(folder)
    with pytest.raises(ModelUnavailableError, match="does not exist"):
        load_elmo(tmp_path / "missing")


def test_weights_that_do_not_match_options_are_rejected(tmp_path):
    options = json.loads(FILES[0].read_text())
    options["lstm"]["dim"] = 32
    (tmp_path / "options.json").write_text(json.dumps(options))
    shutil.copy(FILES[1], tmp_path / "weights.hdf5")
    with pytest.raises(ModelUnavailableError, match="shape"):
        load_elmo(tmp_path)


# -- ELMo-mini training: export round trip and a smoke run --------------------------------


def test_training_model_export_loads_with_identical_layers(tmp_path):
    from probing.training.elmo_lm import MINI_CONFIG, BiLanguageModel, export_model

    torch.manual_seed(0)
    model = BiLanguageModel(MINI_CONFIG, vocab_size=3000).eval()
    log = {"command": "test", "tokens_seen": 0, "wall_time_s": 0.0, "heldout": []}
    export_model(model, ["<S>", "</S>", "<UNK>", "the"], log, tmp_path)
    enc = load_elmo(tmp_path)
    words = [["A", "quick", "test", "."], ["Another", "one"]]
    with torch.no_grad():
        want = model.bilm(batch_to_char_ids(words)).layers().numpy()
    for b, e in enumerate(enc.encode(words)):
        np.testing.assert_allclose(e.layers, want[:, b, 1 : len(words[b]) + 1], atol=1e-6, rtol=0)
    assert (tmp_path / "weights.hdf5").stat().st_size < 20e6
    assert "tiny ELMo trained here" in (tmp_path / "README.md").read_text()
    assert isinstance(load_bilm(tmp_path), ElmoBiLm)


def test_training_smoke_run_checkpoints_resumes_and_exports(tmp_path, monkeypatch):
    import probing.training.corpus as corpus
    from probing.training import elmo_lm

    text = [
        "the bank of the river was muddy .",
        "she put her money in the bank .",
        "a dog barked at the mailman .",
        "the river flows to the sea .",
    ] * 8
    monkeypatch.setattr(
        corpus, "training_sentences", lambda data_dir=None: (s.split() for s in text)
    )
    monkeypatch.setattr(
        corpus, "heldout_sentences", lambda data_dir=None: (s.split() for s in text[:4])
    )
    argv = [
        "--checkpoint-dir",
        str(tmp_path / "ckpt"),
        "--export-dir",
        str(tmp_path / "out"),
        "--max-steps",
        "2",
        "--batch-tokens",
        "64",
        "--log-every",
        "1",
        "--vocab-size",
        "50",
    ]
    assert elmo_lm.main(argv) == 0
    log = json.loads((tmp_path / "out" / "training_log.json").read_text())
    assert log["steps"] == 2 and log["tokens_seen"] > 0 and len(log["heldout"]) == 1
    assert log["heldout"][0]["ppl_forward"] > 1 and log["heldout"][0]["ppl_backward"] > 1
    assert (tmp_path / "ckpt" / "checkpoint.pt").is_file()
    assert elmo_lm.main(argv) == 0  # resumes from the checkpoint
    log = json.loads((tmp_path / "out" / "training_log.json").read_text())
    assert log["steps"] == 4 and len(log["heldout"]) == 2
    (tmp_path / "ckpt" / "checkpoint.pt").unlink()  # checkpoint gone: warm start from export
    assert elmo_lm.main(argv) == 0
    warm = json.loads((tmp_path / "out" / "training_log.json").read_text())
    assert warm["tokens_seen"] > log["tokens_seen"] and len(warm["heldout"]) == 3
    enc = load_elmo(tmp_path / "out")
    assert enc.encode("the bank .")[0].layers.shape == (3, 3, 256)
    card = (tmp_path / "out" / "README.md").read_text()
    assert "elmo-original" in card
    assert elmo_lm.reproducing_command(log["command"]) + "\n" in card  # paths of this run dropped
    assert "--max-steps 2" in card and "--checkpoint-dir" not in card
