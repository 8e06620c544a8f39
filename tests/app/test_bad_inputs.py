"""A catalogue of bad inputs, hostile and careless: each one gets a typed ContextLens error
with a message a user can act on — no raw exception, no traceback, no server path — and
nothing already computed is lost.

Real data (``../shared/data``) and the embedded models; the files made here are small
copies or hand-made variants in ``tmp_path``.
"""

from __future__ import annotations

import json
import os
import shutil
import struct
from collections.abc import Callable
from pathlib import Path

import h5py
import pytest

import probing
from probing import config
from probing.cli.main import main as cli
from probing.errors import (
    CorruptDataError,
    DataFormatError,
    DatasetNotFoundError,
    InvalidArgumentError,
    ModelFormatError,
    OutputNotWritableError,
    ResourceLimitError,
    UnknownModelError,
    UnsafeModelError,
)
from probing.redact import redact_paths

# Resolved: links made below to a relative data path would resolve from the link's folder.
DATA = Path(os.environ.get("CONTEXTLENS_DATA_DIR", config.SHARED_DATA)).resolve()
FIXTURE = DATA / "allennlp-elmo-fixture"
WORD = "{i}\t{form}\t_\t{tag}\t_\t_\t0\troot\t_\t_"


def conllu(sentences: list[list[tuple[str, str]]]) -> bytes:
    """CoNLL-U bytes of sentences given as (form, UPOS) pairs."""
    blocks = [
        "\n".join(WORD.format(i=i, form=f, tag=t) for i, (f, t) in enumerate(s, 1))
        for s in sentences
    ]
    return ("\n\n".join(blocks) + "\n\n").encode()


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CONTEXTLENS_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def cli_error(capsys, argv: list[str]) -> str:
    """Run the CLI; it must fail with exit 2 and one ``error:`` line, no traceback."""
    code = cli(argv)
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.startswith("error: ") and "Traceback" not in err
    return err


# -- models ---------------------------------------------------------------------------------


def _checkpoint(tmp_path: Path, config_text: str, weights: bytes | None = None) -> Path:
    folder = tmp_path / "ckpt"
    folder.mkdir()
    (folder / "config.json").write_text(config_text, encoding="utf-8")
    if weights is not None:
        (folder / "model.safetensors").write_bytes(weights)
    return folder


BERT_CONFIG = json.dumps({"model_type": "bert", "hidden_size": 8, "num_hidden_layers": 1})


@pytest.mark.parametrize(
    ("config_text", "weights", "error", "says"),
    [
        (
            json.dumps({"model_type": "bert", "auto_map": {"AutoModel": "evil.Model"}}),
            None,
            UnsafeModelError,
            "never runs code",
        ),
        (json.dumps({"model_type": "no-such-arch"}), None, ModelFormatError, "model_type"),
        ('{"model_type": "bert", ', None, ModelFormatError, r"not valid JSON \(line 1"),
        (
            BERT_CONFIG,
            struct.pack("<Q", 10**12) + b"{}",
            ModelFormatError,
            "broken safetensors header",
        ),
        (BERT_CONFIG, struct.pack("<Q", 4) + b"nope", ModelFormatError, "not JSON"),
    ],
    ids=["remote-code", "unknown-model-type", "malformed-config", "huge-header", "bad-header"],
)
def test_broken_checkpoint_folders(tmp_path, config_text, weights, error, says):
    folder = _checkpoint(tmp_path, config_text, weights)
    with pytest.raises(error, match=says) as info:
        probing.load_encoder(str(folder))
    assert "hub cannot be reached" not in str(info.value)


def test_a_5000_character_model_name(capsys):
    with pytest.raises(UnknownModelError) as info:
        probing.load_encoder("a" * 5000)
    assert len(str(info.value)) < 1000 and "5,000 characters" in str(info.value)
    assert "5,000 characters" in cli_error(capsys, ["encode", "hi", "--model", "b" * 5000])


def _elmo(tmp_path: Path, edit: Callable[[dict], None]) -> Path:
    folder = tmp_path / "elmo"
    folder.mkdir()
    options = json.loads((FIXTURE / "options.json").read_text())
    edit(options)
    (folder / "options.json").write_text(json.dumps(options))
    (folder / "weights.hdf5").symlink_to(FIXTURE / "lm_weights.hdf5")
    return folder


@pytest.mark.parametrize(
    ("edit", "says"),
    [
        (lambda o: o["lstm"].update(dim=4096 * 16, projection_dim=4096), "at most 250,000,000"),
        (lambda o: o["char_cnn"].update(filters=[]), "non-empty list"),
        (lambda o: o["lstm"].update(projection_dim=-4), "at least 1"),
        (lambda o: o["char_cnn"]["embedding"].update(dim=0), "at least 1"),
        (lambda o: o["lstm"].update(dim=32), "has shape"),  # weights of another size
    ],
    ids=["4096-dim", "empty-filters", "negative-dim", "zero-embedding", "mismatch"],
)
def test_elmo_options_are_checked_before_allocating(tmp_path, edit, says):
    from probing.encoders.elmo import load_bilm

    with pytest.raises(ModelFormatError, match=says):
        load_bilm(_elmo(tmp_path, edit))


def test_elmo_gzip_bomb_weights_are_refused_from_their_metadata(tmp_path):
    from probing.encoders.elmo import load_bilm

    folder = tmp_path / "bomb"
    folder.mkdir()
    shutil.copy(FIXTURE / "options.json", folder / "options.json")
    with (
        h5py.File(FIXTURE / "lm_weights.hdf5", "r") as src,
        h5py.File(folder / "weights.hdf5", "w") as dst,
    ):
        for key in src:
            src.copy(key, dst)
        del dst["char_embed"]
        # 16 GB of zeros that gzip to a few kB: reading it would allocate all of it.
        dst.create_dataset(
            "char_embed", shape=(2**28, 16), dtype="f4", chunks=(2**16, 16), compression="gzip"
        )
    assert (folder / "weights.hdf5").stat().st_size < 50 * 2**20
    with pytest.raises(ModelFormatError, match="char_embed has shape"):
        load_bilm(folder)


# -- library arguments ------------------------------------------------------------------------


def test_encode_batch_size_must_be_positive(minilm):
    for bad in (0, -1):
        with pytest.raises(InvalidArgumentError, match="batch_size must be at least 1"):
            minilm.encode(["a sentence"], batch_size=bad)


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["probe", "--n-boot", "0"], "argument --n-boot: must be a whole number from 1 to"),
        (["probe", "--cs", "-1"], "argument --cs: must be 1 to 50 comma-separated values"),
        (["fill-mask", "The [MASK] sat.", "--top-k", "0"], "argument --top-k: must be a whole"),
        (["attention-stats", "--batch-size", "0"], "argument --batch-size: must be a whole"),
        (["attention-stats", "--batch-size", "-1"], "argument --batch-size: must be a whole"),
    ],
)
def test_cli_arguments_out_of_range(capsys, tmp_path, cache, argv, says):
    """Ranges are argparse's to check: exit 2 with its usage line and the range named."""
    argv = [*argv, "--out", str(tmp_path / "out")] if argv[0] != "fill-mask" else argv
    if argv[0] == "fill-mask":
        argv += ["--model", "minilm-l6-mlm"]
    with pytest.raises(SystemExit) as exit_:
        cli(argv)
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and "Traceback" not in err
    assert says in err
    assert not (cache / "features").exists()  # refused before any extraction


def test_cli_layer_that_does_not_exist(capsys, tmp_path, cache):
    err = cli_error(capsys, ["probe", "--layers", "99", "--out", str(tmp_path / "out")])
    assert "--layers: minilm-l6 has layers 0 to 6" in err and "not 99" in err
    assert not (cache / "features").exists()


def test_cli_argument_that_is_not_utf8(capsys):
    bad = b"caf\xe9 [MASK]".decode("utf-8", "surrogateescape")  # how Linux passes such bytes
    assert "not valid UTF-8" in cli_error(capsys, ["fill-mask", bad])


def test_probe_out_folder_is_checked_before_the_run(capsys, cache):
    err = cli_error(capsys, ["probe", "--out", "/proc/forbidden", "--max-train-sentences", "20"])
    assert "Cannot write results to /proc/forbidden" in err
    assert not (cache / "features").exists()  # nothing was computed (and lost)
    with pytest.raises(OutputNotWritableError):
        from probing.cli.probe import writable_folder

        writable_folder("/proc/forbidden")


# -- uploads -------------------------------------------------------------------------------------


def test_conllu_range_errors_give_the_line(tmp_path):
    from probing.datasets.upload import read_conllu_upload

    good = conllu([[("I", "PRON"), ("go", "VERB")]] * 3)
    for bad_range, says in (("3-2", "smaller to a larger"), ("3-4", "starts at word 3")):
        lines = good.decode().split("\n")
        lines.insert(4, f"{bad_range}\tdon't\t_\t_\t_\t_\t_\t_\t_\t_")
        with pytest.raises(DataFormatError, match=f"^Line 5: range {bad_range}.*{says}") as info:
            read_conllu_upload("\n".join(lines).encode(), 10**6)
        assert info.value.line == 5


def test_label_bomb_upload_is_refused_before_encoding(minilm, monkeypatch):
    from probing.datasets.upload import read_conllu_upload
    from probing.probes.upload import probe_upload

    monkeypatch.setenv("CONTEXTLENS_DEMO", "1")
    # 20,000 distinct UPOS tags in a 0.7 MB file (the attack in the issue).
    sentences = [[(f"w{i}", f"T{i}"), (f"v{i}", f"U{i}")] for i in range(10_000)]
    data = conllu(sentences)
    assert len(data) < config.limits().max_upload_bytes
    parsed = read_conllu_upload(data, config.limits().max_upload_bytes)
    calls = []
    monkeypatch.setattr(minilm, "encode", lambda *a, **k: calls.append(1))
    with pytest.raises(ResourceLimitError, match=r"16,000 different labels.*at most 200"):
        probe_upload(minilm, parsed)
    assert calls == []  # refused before any encoding


def test_label_and_parameter_caps_hold_for_the_probe_itself(monkeypatch):
    from probing.probes.guards import check_probe_size

    monkeypatch.setenv("CONTEXTLENS_DEMO", "1")
    assert check_probe_size(["NOUN", "VERB"] * 10, 768) == 2
    with pytest.raises(ResourceLimitError, match="201 different labels"):
        check_probe_size(201, 8)
    with pytest.raises(ResourceLimitError, match="weights"):
        check_probe_size(150, 8192)


def test_upload_where_every_word_has_one_form_is_probed(minilm):
    """The control task then has one word type (one label): no 'needs 2 classes' crash."""
    from probing.probes.upload import probe_upload

    tags = ["NOUN", "VERB", "ADJ"]
    sentences = [[("x", tags[(i + j) % 3]) for j in range(4)] for i in range(10)]
    from probing.datasets.upload import read_conllu_upload

    parsed = read_conllu_upload(conllu(sentences), 10**6)
    res = probe_upload(minilm, parsed, layers=[0, 6], n_boot=20)
    acc = res.layer_scores()
    assert len(acc) == 2 and acc["control"].notna().all()


# -- data, caches and results -----------------------------------------------------------------


@pytest.fixture
def truncated_ud(tmp_path, monkeypatch):
    """A data folder whose UD-EWT test file is cut mid-line (the others are the real ones)."""
    root = tmp_path / "data"
    for entry in DATA.iterdir():
        if entry.name != "ud-english-ewt":
            (root / entry.name).parent.mkdir(parents=True, exist_ok=True)
            (root / entry.name).symlink_to(entry)
    ud = root / "ud-english-ewt"
    ud.mkdir(parents=True)
    for f in (DATA / "ud-english-ewt").iterdir():
        (ud / f.name).symlink_to(f)
    test = ud / "en_ewt-ud-test.conllu"
    test.unlink()
    data = (DATA / "ud-english-ewt" / test.name).read_bytes()
    test.write_bytes(data[: len(data) // 2 + 17])
    monkeypatch.setenv("CONTEXTLENS_DATA_DIR", str(root))
    return test


def test_truncated_data_file_is_named(truncated_ud, capsys):
    from probing.cli import data as cli_data
    from probing.datasets import read_sentences

    with pytest.raises(CorruptDataError, match="en_ewt-ud-test.conllu is .* bytes, expected"):
        list(read_sentences("ud-ewt", "test"))
    assert len(list(read_sentences("ud-ewt", "dev"))) == 2001  # the sound splits still read
    rows = {r["name"]: r for r in cli_data.dataset_status()}
    assert rows["ud-ewt"]["present"] is False
    assert "en_ewt-ud-test.conllu" in rows["ud-ewt"]["problems"][0]
    assert rows["semcor"]["present"] is True
    assert cli(["data", "list"]) == 0
    assert "damaged" in capsys.readouterr().out


def test_server_paths_are_redacted_by_value(tmp_path, monkeypatch):
    # A relative data folder with a space and a comma: no "absolute path" pattern sees it.
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CONTEXTLENS_DATA_DIR", "my lens, 2/data")
    with pytest.raises(DatasetNotFoundError) as info:
        list(probing.datasets.read_sentences("ud-ewt", "dev"))
    shown = redact_paths(str(info.value))
    assert "my lens" not in shown and "<server path>" in shown
    assert str(tmp_path) not in redact_paths(f"see {tmp_path}/x.json.")
    assert redact_paths(f"at {config.cache_dir()}/features/x.") == "at <server path>."


def test_user_text_is_shown_as_text():
    from ui.common import md_text

    for text in ("![i](http://example.com/x.png)", "_y_", "**b**", ":material/home:", "$x$"):
        escaped = md_text(text)
        assert escaped.replace("\\", "") == text
        assert all(escaped[i - 1] == "\\" for i, c in enumerate(escaped) if c in "![]()_*:$" and i)


def test_truncated_result_file_does_not_hide_the_others(tmp_path, monkeypatch):
    from streamlit.testing.v1 import AppTest

    from probing.probes.settings import ProbeSettings
    from probing.probes.store import stored_path_of

    monkeypatch.setenv("CONTEXTLENS_CACHE_DIR", str(tmp_path))
    enc = probing.load_encoder("minilm-l6")
    cfg = ProbeSettings(
        model="minilm-l6", task="pos", dataset="ud-ewt", layers=None, max_train_sentences=2000
    )
    stored = stored_path_of(cfg, enc)
    stored.parent.mkdir(parents=True, exist_ok=True)
    good = (config.REPO_ROOT / "results" / "minilm-l6__ud-ewt__pos.json").read_text()
    stored.write_text(good[: len(good) // 3])  # cut mid-file, as a killed write leaves it
    at = AppTest.from_file(str(config.REPO_ROOT / "pages" / "4_Probing.py"), default_timeout=120)
    at.session_state["models"] = ["minilm-l6", "elmo-mini"]
    at.session_state["probe_train"] = 2000  # the settings the damaged stored run was made with
    at.run()
    assert not at.exception
    warning = " ".join(w.value for w in at.warning).replace("\\", "")  # markdown escapes
    assert stored.name in warning and "damaged" in warning
    text = " ".join(m.value for m in at.markdown)
    assert "elmo-mini" in text and "precomputed results" in text  # the other model still shows
    assert stored.is_file()  # nothing is deleted behind the user's back


def test_cache_temp_folders_and_concurrent_finish(tmp_path):
    from probing import feature_cache

    root = tmp_path / "features"
    root.mkdir()
    dead = root / ".tmp-entry-999999999-abc"  # a killed extraction's folder (no such pid)
    live = root / f".tmp-entry-{os.getpid()}-def"  # one being built now
    for d in (dead, live):
        d.mkdir()
        (d / "layers.npy").write_bytes(b"\0" * 10)
    assert feature_cache.clean_stale(root) == [dead]
    assert live.exists()
    # Two builds of one entry: the second finds the first's sound entry and succeeds.
    folder = root / "entry"
    first, second = root / ".tmp-a", root / ".tmp-b"
    for d in (first, second):
        d.mkdir()
        (d / "f").write_text(d.name)
    feature_cache.install(first, folder, lambda f: True)
    feature_cache.install(second, folder, lambda f: True)
    assert (folder / "f").read_text() == ".tmp-a" and not second.exists()
