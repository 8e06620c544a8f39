"""Feature extraction and its disk cache, on the real embedded model and real UD-EWT data."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from probing.features import (
    Features,
    LabelFields,
    extract_features,
    features_of_sentences,
    load_features,
    model_fingerprint,
)

N = 12  # sentences: enough for a few batches of different lengths, fast on a shared CPU


class CountingEncoder:
    """Wraps an encoder and counts its ``encode`` calls (same weights, same cache key)."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.calls = 0
        self.info = inner.info

    def encode(self, *args, **kwargs):
        self.calls += 1
        return self.inner.encode(*args, **kwargs)

    def fingerprint(self) -> str:
        return model_fingerprint(self.inner)


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CONTEXTLENS_CACHE_DIR", str(tmp_path))
    return tmp_path


def _extract(encoder, **kw) -> Features:
    return extract_features(encoder, "ud-ewt", "dev", "upos", max_sentences=N, batch_size=4, **kw)


def test_second_call_is_served_from_cache(minilm, cache):
    enc = CountingEncoder(minilm)
    first = _extract(enc)
    calls = enc.calls
    assert calls == 3  # 12 sentences in batches of 4
    second = _extract(enc)
    assert enc.calls == calls  # the encoder did not run again
    assert first.layers.shape == second.layers.shape == (7, first.n_words, 384)
    assert first.layers.dtype == np.float16
    np.testing.assert_array_equal(first.layers, second.layers)
    np.testing.assert_array_equal(first.static, second.static)
    np.testing.assert_array_equal(first.labels, second.labels)
    assert first.key == second.key and (first.path / "manifest.json").is_file()


@pytest.mark.parametrize("damage", ["truncate", "overwrite", "manifest"])
def test_damaged_entry_is_detected_and_rebuilt(minilm, cache, damage):
    enc = CountingEncoder(minilm)
    good = _extract(enc)
    reference = np.array(good.layers)
    path = good.path / "layers.npy"
    del good
    if damage == "truncate":
        with open(path, "r+b") as f:
            f.truncate(path.stat().st_size // 2)
    elif damage == "overwrite":  # same size, different bytes: only the checksum can tell
        size = path.stat().st_size
        with open(path, "r+b") as f:
            f.seek(size - 4096)
            f.write(b"\x7f" * 4096)
    else:
        (path.parent / "manifest.json").write_text("{not json", encoding="utf-8")
    calls = enc.calls
    with pytest.warns(UserWarning, match="damaged"):
        rebuilt = _extract(enc)
    assert enc.calls > calls  # rebuilt by running the encoder again
    np.testing.assert_array_equal(np.asarray(rebuilt.layers), reference)
    load_features(rebuilt.path)  # and the new entry is sound


def test_length_sorted_batches_give_the_same_vectors_as_original_order(minilm, cache):
    feats = _extract(minilm)
    from probing.features import read_sentences

    by_id = {s.sent_id: s for s in read_sentences("ud-ewt", "dev")}
    chosen = [by_id[i] for i in feats.sent_ids]  # the sample, in data-set order
    # Encode one at a time, in data-set order: no padding, no sorting.
    direct = minilm.encode([s.words for s in chosen], batch_size=1, windowed=True)
    expected = np.concatenate([e.layers for e in direct], axis=1)  # (7, n_words, dim)
    assert expected.shape == feats.layers.shape
    np.testing.assert_allclose(feats.layers.astype(np.float32), expected, atol=2e-2, rtol=1e-2)
    assert list(feats.words) == [w for s in chosen for w in s.words]
    assert list(feats.labels) == [t for s in chosen for t in s.labels["upos"]]


def test_progress_reaches_total_and_layer_subsets(minilm, cache):
    seen: list[tuple[int, int]] = []
    feats = _extract(minilm, progress=lambda d, t: seen.append((d, t)))
    assert seen[0] == (0, N) and seen[-1] == (N, N)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)
    # A subset of layers is served from the all-layers entry (no new folder), in order.
    before = sorted(p.name for p in (cache / "features").iterdir())
    sub = _extract(minilm, layers=[-1, 0, 3])
    assert sub.layer_ids == (0, 3, 6) and sub.layers.shape[0] == 3
    np.testing.assert_array_equal(sub.layer(6), feats.layer(6))
    assert sorted(p.name for p in (cache / "features").iterdir()) == before
    with pytest.raises(ValueError, match="does not exist"):
        _extract(minilm, layers=[7])


def test_cache_key_and_views(minilm, cache):
    a = _extract(minilm)
    b = extract_features(minilm, "ud-ewt", "dev", "upos", pooling="mean", max_sentences=N)
    assert a.key != b.key  # pooling is part of the key
    manifest = json.loads((a.path / "manifest.json").read_text())
    assert manifest["max_sentences"] == N and "layers.npy" in manifest["files"]
    # Views: a label field keeps only words that carry it; select/subsample keep rows aligned.
    punct = a.select(a.labels == "PUNCT")
    assert set(punct.labels) == {"PUNCT"}
    np.testing.assert_array_equal(punct.layer(2), a.layer(2)[a.labels == "PUNCT"])
    small = a.subsample(10, seed=1)
    assert small.n_words == 10 and small.layer(0).shape == (10, 384)
    np.testing.assert_array_equal(
        small.static, a.static[np.isin(np.arange(a.n_words), small._rows)]
    )


def test_sentences_outside_the_registry_get_the_same_vectors_in_memory(minilm, cache):
    from probing.features import read_sentences

    cached = _extract(minilm, layers=[0, 4])
    by_id = {s.sent_id: s for s in read_sentences("ud-ewt", "dev")}
    chosen = [by_id[i] for i in cached.sent_ids]
    entries = sorted(cache.rglob("manifest.json"))
    mem = features_of_sentences(minilm, chosen, "upos", layers=[0, 4], batch_size=4)
    assert sorted(cache.rglob("manifest.json")) == entries  # in memory: nothing cached
    assert mem.path is None and mem.layer_ids == (0, 4)
    np.testing.assert_array_equal(mem.layers, cached.layers)  # same loop, same float16
    np.testing.assert_array_equal(mem.static, cached.static)
    assert list(mem.words) == list(cached.words)
    assert list(mem.labels) == list(cached.with_label("upos").labels)
    assert list(mem.sentence_index) == list(cached.sentence_index)
    with pytest.raises(ValueError, match="no sentences"):
        features_of_sentences(minilm, [], "upos")


def _mapped_kib(path: Path) -> int:
    """Resident KiB of this process's mappings of ``path`` (/proc/self/smaps): only the
    cache file's pages, not library code paged in meanwhile (RssFile counted those too, and
    a test measuring it failed once on them)."""
    total, inside = 0, False
    target = str(path.resolve())
    for line in Path("/proc/self/smaps").read_text(encoding="utf-8").splitlines():
        head = line.split()
        if head and "-" in head[0] and len(head) >= 5 and ":" in head[3]:  # a mapping's line
            inside = len(head) >= 6 and head[5] == target
        elif inside and line.startswith("Rss:"):
            total += int(head[1])
    return total


@pytest.mark.skipif(not Path("/proc/self/smaps").exists(), reason="Linux /proc accounting")
def test_layer_reads_do_not_keep_the_memory_map_resident(minilm, cache):
    """A sweep reads every layer of a cache entry; the mapped pages must not pile up in the
    process (they stay in the page cache), and the values must be those on disk."""

    def read_all(f: Features) -> list[np.ndarray]:
        view = f.select(f.labels != "PUNCT")
        return [f.layer(i) for i in f.layer_ids] + [view.layers, f.static]

    # A first pass over another entry maps the library code that reading runs.
    read_all(_extract(minilm, pooling="mean"))
    a = _extract(minilm)
    on_disk = np.load(a.path / "layers.npy")  # an ordinary read, for comparison
    view = a.select(a.labels != "PUNCT")
    got = read_all(a)
    grown = _mapped_kib(a.path / "layers.npy") + _mapped_kib(a.path / "static.npy")
    for i in range(len(a.layer_ids)):
        np.testing.assert_array_equal(got[i], on_disk[i].astype(np.float32))
    np.testing.assert_array_equal(got[-2], on_disk[:, view._rows])
    # The entry's layers are ~50 pages here; reading them all left at most a few mapped.
    assert on_disk.nbytes > 40 * 4096
    assert grown * 1024 < on_disk.nbytes / 4, (grown, on_disk.nbytes)


def test_label_fields_are_read_only_when_asked_for_and_equal_the_files(minilm, cache):
    # A tagging sweep needs one field; the others (UD-EWT's lemma column is 110 MB as str
    # for the train split) must not be read, and what is read must be the stored column.
    f = _extract(minilm)
    assert isinstance(f.fields, LabelFields)
    stored = json.loads((f.path / "manifest.json").read_text())["fields"]
    assert sorted(f.fields) == sorted(stored) and "lemma" in stored
    lemma = np.load(f.path / f"label_{stored.index('lemma')}.npy")
    assert f.fields._read.keys() == {"upos"}  # with_label read its own field only
    view = f.select(f.labels != "PUNCT").select(np.arange(5))
    assert "lemma" not in view.fields._read
    np.testing.assert_array_equal(view.fields["lemma"], lemma[f._rows][f.labels != "PUNCT"][:5])
    np.testing.assert_array_equal(view.labels, view.fields["upos"])


def test_chunked_reads_equal_whole_reads_for_any_row_order(minilm, cache, monkeypatch):
    # Layers are read a chunk of rows at a time (no float16 copy of the whole selection);
    # sorted, shuffled and repeated selections must give exactly the stored values.
    import probing.features as features_module

    monkeypatch.setattr(features_module, "_READ_CHUNK", 7)
    f = _extract(minilm)
    on_disk = np.load(f.path / "layers.npy")
    static = np.load(f.path / "static.npy")
    rng = np.random.default_rng(0)
    for rows in (np.arange(f.n_words), rng.permutation(f.n_words), np.array([3, 3, 0, 5])):
        view = f.select(rows)
        want = f._rows[rows] if f._rows is not None else rows
        np.testing.assert_array_equal(view.layer(2), on_disk[2][want].astype(np.float32))
        np.testing.assert_array_equal(view.static, static[want].astype(np.float32))
        np.testing.assert_array_equal(view.layers, on_disk[:, want])


def test_chunked_moments_equal_the_whole_matrix_formula(minilm, cache):
    # Above 50,000 training words the probe standardises with float64 sums in chunks (a
    # float64 copy of the matrix was 600 MB); the float32 mean and scale must not change.
    import torch

    from probing.probes.linear import _chunked_moments

    X = torch.from_numpy(_extract(minilm).layer(4))
    mean, var = _chunked_moments(X, chunk=5)
    want_mean = X.mean(0, dtype=torch.float64)
    want_var = ((X.double() - want_mean) ** 2).mean(0)
    assert torch.equal(mean.float(), want_mean.float())
    assert torch.equal(torch.sqrt(var).float(), torch.sqrt(want_var).float())


def test_a_lazy_layer_stack_reads_what_layers_holds(minilm, cache):
    """``layer_stack()`` (what a full-data sweep's mixes read) gives the same values as
    ``layers`` for every index the mixes use, reading nothing until indexed."""
    feats = extract_features(minilm, "ud-ewt", "dev", "upos", max_sentences=30)
    view = feats.select(np.arange(feats.n_words)[::3])
    full, lazy = view.layers, view.layer_stack()
    assert lazy.shape == full.shape and lazy.dtype == full.dtype
    rows = np.array([0, 2, 5, len(full[0]) - 1])
    np.testing.assert_array_equal(lazy[:, rows], full[:, rows])
    np.testing.assert_array_equal(lazy[:3][:, 4:9], full[:3, 4:9])
    assert lazy[:3].shape == (3, *full.shape[1:])
    with pytest.raises(TypeError, match="LayerStack"):
        lazy[0]
