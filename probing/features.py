"""Per-layer word vectors for a whole data-set split, computed once and cached on disk.

:func:`extract_features` runs an encoder over one split of a data set and returns a
:class:`Features`: every word's vector on every requested layer (plus the context-free
``static`` vector), the words themselves, their labels and sentence ids.

How it runs
    Sentences are encoded in batches sorted by *word-piece* count and filled to a budget of
    padded pieces (:mod:`probing.encoders.batching`): padding is then almost nil (1.08× the
    real pieces on UD-EWT dev), which on a CPU is the biggest single speed-up. Vectors are written back into each word's
    place in the original order, so the result does not depend on the batching.
    ``windowed=True`` is passed to the encoder, so an over-long sentence is encoded in
    overlapping windows and no word is ever dropped.

How it is cached
    An entry lives in ``config.cache_dir()/features/<model>__<dataset>__<split>__<key>/``.
    The key is a SHA-256 over the content that determines the vectors:

    - the model: its weights (every tensor of the encoder's ``model`` module, bytes included),
      its tokenizer definition and the source of the encoder and pooling code (memoised per
      encoder object, so it is computed once per process, ~0.2 s per 100 MB of weights);
    - the data: the bytes of the split's files and of the reader's source (memoised per
      path, size and mtime);
    - pooling, ``max_sentences`` and the cache format version.

    Only what changes the content is in the key: an entry always holds every layer (a layer
    subset is a view onto it), a ``max_sentences`` at least the split's size is the whole
    split, and a sample is read from a cached whole split when there is one (the same
    seeded sentences, renumbered). The cache's total size is bounded
    (``config.limits().feature_cache_bytes``): beyond it the least recently used entries
    are evicted (:mod:`probing.feature_cache`), which also removes the temporary folders of
    killed extractions; when two processes finish the same entry, the second keeps the first's.

    Arrays are streamed to disk: a float16 ``.npy`` is preallocated with
    ``np.lib.format.open_memmap`` and filled batch by batch, so no split-sized array is ever
    held in memory. An entry is built in a temporary folder and renamed into place; its
    ``manifest.json`` (with the SHA-256 of every file) is written last, so a folder without a
    manifest is never an entry. On load every file is checked against the manifest (once per
    process per file version); a truncated, overwritten or unreadable entry is removed and
    rebuilt.

One module (about 750 lines) on purpose: the extraction loop, the on-disk format and the
cache key are one contract — the key names exactly what the loop reads — and the cache's
housekeeping (size bound, eviction) already lives apart in :mod:`probing.feature_cache`.

float16 halves the disk and page-cache footprint (values are converted to float32 for
fitting). Measured (``bench/float16_features.py``, docs/benchmarks.md): the committed
minilm-l6 UPOS probe gives the same prediction for every test word on float16 and float32
vectors at layers 0-5, but at layer 6 408 of 25,094 change (accuracy on float32 −0.27
points [−0.42, −0.12] vs the float16 vectors it was trained on): one layer-6 dimension is
near constant (the probe's standardiser scale 1.9e-8), so its rounding is multiplied by
about 5e7. No value reaches float16's range.

Sentences that are no registered data set (an uploaded file) go through
:func:`features_of_sentences`: the same encoding loop (:func:`encode_into`) into arrays in
memory, never cached, returning the same :class:`Features`.
"""

from __future__ import annotations

import contextlib
import hashlib
import inspect
import json
import mmap
import os
import re
import shutil
import tempfile
import threading
import warnings
import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from probing import config, feature_cache
from probing.encoders.base import CONTROL_RE
from probing.encoding import to_float16
from probing.errors import CorruptCacheError, DiskFullError, InvalidArgumentError
from probing.heap import release_free_memory
from probing.io import atomic_write_text, cache_writes, file_sha256

if TYPE_CHECKING:
    from probing.encoders.base import Encoder

ProgressFn = Callable[[int, int], None]  # (sentences done, total)

FORMAT_VERSION = 1
SAMPLE_SEED = 0  # which sentences ``max_sentences`` keeps: fixed, so it is part of the content
# The encoders' own input cleaning (probing.encoders.base) drops control characters and
# blank words; a data-set word that would vanish is replaced so that word counts stay aligned.
_PLACEHOLDER_WORD = "_"
_ARRAY_FILES = ("layers.npy", "static.npy", "words.npy", "sentence_index.npy")


# -- the result ---------------------------------------------------------------------------


@dataclass
class Features:
    """Word vectors of one split, as a view onto a cache entry (or onto arrays in memory).

    Row ``i`` of every per-word array is the same word. Vectors are memory-mapped from disk;
    :meth:`layer` reads one layer of the selected words as float32.

    Attributes:
        layer_ids: the encoder layers held, in order (0 = the model's input layer).
        words: (n_words,) str, each word's form as in the data set (its *word type*).
        labels: (n_words,) str, the ``label`` field asked for ("" where a word has none, only
            possible when no label field was asked for).
        fields: every label field the reader yields, each (n_words,) str ("" = no label).
        sentence_index: (n_words,) int32, index into ``sent_ids`` / ``doc_ids``.
        sent_ids: the split's sentence ids, in data-set order (all of them, not only those
            of the selected words).
        doc_ids: each sentence's document id.
        model: encoder name; dataset, split, pooling: what was encoded and how.
        label: the label field selected (or None).
        key: the cache key (hex SHA-256); path: the cache entry's folder (both empty for
            :func:`features_of_sentences`, which is in memory).
    """

    layer_ids: tuple[int, ...]
    words: np.ndarray
    labels: np.ndarray
    fields: Mapping[str, np.ndarray]
    sentence_index: np.ndarray
    sent_ids: list[str]
    doc_ids: list[str]
    model: str
    dataset: str
    split: str
    pooling: str
    label: str | None
    key: str
    path: Path | None
    # The memory-mapped arrays of the whole entry and which part of them this view shows.
    _store: np.ndarray = field(repr=False, default=None)  # (n_layers_stored, n_all, dim)
    _static: np.ndarray = field(repr=False, default=None)  # (n_all, dim)
    _layer_pos: tuple[int, ...] = field(repr=False, default=())
    _rows: np.ndarray | None = field(repr=False, default=None)  # None = every word

    @property
    def n_words(self) -> int:
        return int(self.words.shape[0])

    @property
    def n_words_total(self) -> int:
        """Words in the whole cache entry (every word encoded), not only this view's."""
        return int(self._store.shape[1])

    @property
    def dim(self) -> int:
        return int(self._store.shape[2])

    @property
    def n_sentences(self) -> int:
        return len(np.unique(self.sentence_index))

    def layer(self, layer_id: int) -> np.ndarray:
        """float32 (n_words, dim): the vectors of encoder layer ``layer_id``."""
        if layer_id not in self.layer_ids:
            raise KeyError(f"layer {layer_id} was not extracted; have {list(self.layer_ids)}")
        mat = self._store[self._layer_pos[self.layer_ids.index(layer_id)]]
        return _read_rows(mat, self._rows, np.float32)

    @property
    def layers(self) -> np.ndarray:
        """float16 (n_layers_kept, n_words, dim). Reads everything selected into memory
        unless this view is the whole entry (then it is the memory map itself)."""
        if self._rows is None and self._layer_pos == tuple(range(self._store.shape[0])):
            return self._store
        if self._rows is None:
            return self._store[list(self._layer_pos)]
        # Row selection layer by layer: never reads the unselected words of the entry.
        out = np.empty((len(self._layer_pos), len(self._rows), self.dim), self._store.dtype)
        for i, p in enumerate(self._layer_pos):
            out[i] = _read_rows(self._store[p], self._rows, self._store.dtype)
        return out

    def layer_stack(self) -> LayerStack:
        """(n_layers_kept, n_words, dim) like :attr:`layers`, but read only where indexed:
        a full-data sweep's scalar mixes read batches, not a float16 copy of every layer
        (mpnet-base on UD-EWT train: 4.1 GB)."""
        rows = np.arange(self._store.shape[1]) if self._rows is None else self._rows
        return LayerStack(self._store, tuple(self._layer_pos), rows)

    @property
    def static(self) -> np.ndarray:
        """float32 (n_words, dim): each word's context-free vector (``Encoding.static``)."""
        return _read_rows(self._static, self._rows, np.float32)

    def select(self, rows: np.ndarray) -> Features:
        """A view onto some words: ``rows`` is a boolean mask or integer indices (n_words)."""
        rows = np.asarray(rows)
        idx = np.flatnonzero(rows) if rows.dtype == bool else rows.astype(np.int64)
        base = np.arange(self._store.shape[1]) if self._rows is None else self._rows
        return replace(
            self,
            words=self.words[idx],
            labels=self.labels[idx],
            fields=(
                self.fields.select(idx)
                if isinstance(self.fields, LabelFields)
                else {k: v[idx] for k, v in self.fields.items()}
            ),
            sentence_index=self.sentence_index[idx],
            _rows=base[idx],
        )

    def with_label(self, label: str) -> Features:
        """The words that carry a ``label`` (e.g. ``"sense"``), with it as ``labels``."""
        if label not in self.fields:
            raise KeyError(
                f"{self.dataset} has no label field {label!r}; have {sorted(self.fields)}"
            )
        view = replace(self, labels=self.fields[label], label=label)
        return view.select(self.fields[label] != "")

    def subsample(self, max_words: int, seed: int = 0) -> Features:
        """At most ``max_words`` words, drawn uniformly without replacement (seeded), kept
        in data-set order. Returns ``self`` when there are not more than that."""
        if max_words is None or self.n_words <= max_words:
            return self
        rng = np.random.default_rng(seed)
        return self.select(np.sort(rng.choice(self.n_words, size=max_words, replace=False)))


class LabelFields(Mapping[str, np.ndarray]):
    """A cache entry's label fields by name, each read from its memory map when first
    asked for: a UPOS sweep never reads UD-EWT's lemma column (110 MB as fixed-width str
    for the train split, once per view)."""

    def __init__(self, sources: Mapping[str, np.ndarray], rows: np.ndarray | None = None):
        self._sources = sources  # (n_all,) arrays of the whole entry, memory-mapped
        self._rows = rows  # None: every word
        self._read: dict[str, np.ndarray] = {}

    def __getitem__(self, name: str) -> np.ndarray:
        if name not in self._read:
            src = self._sources[name]
            self._read[name] = np.array(src if self._rows is None else src[self._rows])
            _drop_pages(src)
        return self._read[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._sources)

    def __len__(self) -> int:
        return len(self._sources)

    def select(self, idx: np.ndarray) -> LabelFields:
        """The fields of rows ``idx`` of this view (fields read already are indexed now)."""
        rows = idx if self._rows is None else self._rows[idx]
        out = LabelFields(self._sources, rows)
        out._read = {k: v[idx] for k, v in self._read.items()}
        return out


_READ_CHUNK = 16_384  # rows per read: 12 MB of float16 at 384 dims


class LayerStack:
    """Some layers and rows of a memory-mapped (n_layers, n_words, dim) store, read when
    indexed: ``X[:k]`` (the first k layers, still lazy), ``X[:, rows]`` and ``X[:, a:b]``
    (float16 arrays of those words), ``X.shape``, ``X.dtype``."""

    def __init__(self, store: np.ndarray, layer_pos: tuple[int, ...], rows: np.ndarray) -> None:
        self._store, self._pos, self._rows = store, layer_pos, rows
        self._reads = 0
        self.shape = (len(layer_pos), len(rows), int(store.shape[2]))
        self.dtype = store.dtype

    def __len__(self) -> int:
        return self.shape[0]

    def __getitem__(
        self, key: slice | tuple[slice, slice | np.ndarray]
    ) -> LayerStack | np.ndarray:  # [layers] stays lazy; [layers, rows] is read
        if not isinstance(key, tuple):
            key = (key,)
        if len(key) > 2 or not isinstance(key[0], slice):
            raise TypeError(f"LayerStack takes [layers slice] or [layers slice, rows], not {key}")
        pos = self._pos[key[0]]
        if len(key) == 1:
            return LayerStack(self._store, pos, self._rows)
        rows = self._rows[key[1]]
        out = np.empty((len(pos), len(rows), self.shape[2]), self.dtype)
        for i, p in enumerate(pos):
            out[i] = self._store[p][rows]
        # The pages read stay mapped until dropped; dropping them after every small batch
        # (one madvise over the whole map per layer) made a full-data mix several times
        # slower, so they are dropped every ``_STACK_DROP_EVERY`` reads.
        self._reads += 1
        if self._reads % _STACK_DROP_EVERY == 0:
            _drop_pages(self._store)
        return out


_STACK_DROP_EVERY = 32  # reads between page drops (32 batches of 256 words x 13 x 768: 0.4 GB)


def _read_rows(mat: np.ndarray, rows: np.ndarray | None, dtype: np.dtype) -> np.ndarray:
    """``mat[rows]`` (all rows for None) as a new ``dtype`` array, read chunk by chunk.

    A whole-selection read would hold a float16 copy of the selection next to the float32
    result, and every page it touched stays mapped until the end: at UD-EWT train's 204,577
    words x 384 that was 157 MB + 157 MB above the 314 MB result at each layer read."""
    n = mat.shape[0] if rows is None else len(rows)
    out = np.empty((n, *mat.shape[1:]), dtype)
    for start in range(0, n, _READ_CHUNK):
        stop = min(start + _READ_CHUNK, n)
        if rows is None:
            out[start:stop] = mat[start:stop]
            _drop_pages(mat[start:stop])
        else:
            part = rows[start:stop]
            out[start:stop] = mat[part]
            lo, hi = int(part.min()), int(part.max()) + 1
            if hi - lo <= 4 * len(part):  # a compact range (rows are usually sorted)
                _drop_pages(mat[lo:hi])
    _drop_pages(mat)
    return out


def _drop_pages(view: np.ndarray) -> None:
    """Take a read-only memory map's pages under ``view`` out of this process's resident set.

    A probing sweep reads each layer of the cache once or twice; without this every page it
    touched stays mapped (a full UD-EWT train entry is 1.3 GB) and counts towards the
    process's memory until it exits. The pages stay in the kernel's page cache, so reading
    them again costs a page fault, not a disk read. No-op for arrays in memory."""
    mm = getattr(view, "_mmap", None)
    if mm is None or not hasattr(mmap, "MADV_DONTNEED") or not view.flags.c_contiguous:
        return
    base = np.frombuffer(mm, np.uint8).ctypes.data
    start = view.ctypes.data - base
    # The kernel maps up to 64 KiB around each faulting page ("fault-around"), so reading
    # a range also maps the tail of the range before it: drop that margin too (measured:
    # without it ~35 KiB per layer read stayed mapped).
    lo = max(0, start - _FAULT_AROUND)
    aligned = lo - lo % mmap.PAGESIZE
    stop = min(len(mm), start + view.nbytes + _FAULT_AROUND)
    with contextlib.suppress(OSError, ValueError):
        mm.madvise(mmap.MADV_DONTNEED, aligned, stop - aligned)


_FAULT_AROUND = 64 * 1024  # Linux's default fault_around_bytes


# -- data-set access ----------------------------------------------------------------------


def read_sentences(dataset: str, split: str) -> list:
    """All sentences of one split of a data set, in data-set order (``Sentence`` objects)."""
    from probing.datasets import read_sentences as read

    return list(read(dataset, split))


def dataset_files(dataset: str, split: str) -> list[Path]:
    """The files whose bytes determine a split's sentences, plus the reader's own source."""
    from probing.datasets.registry import get_dataset

    return get_dataset(dataset).files(split)


# -- fingerprints -------------------------------------------------------------------------

_model_hashes: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_verified: set[tuple[str, int, int]] = set()
_memo_lock = threading.Lock()


def dataset_fingerprint(dataset: str, split: str) -> str:
    """SHA-256 over the split's files (name + content hash each)."""
    h = hashlib.sha256()
    for path in dataset_files(dataset, split):
        h.update(Path(path).name.encode())
        h.update(file_sha256(path).encode())
    return h.hexdigest()


def model_fingerprint(encoder: Encoder) -> str:  # or a wrapper with ``fingerprint()``
    """SHA-256 of what determines an encoder's vectors, memoised per encoder object.

    Hashes: the encoder's class and the source files of its module and of the pooling code;
    every tensor (name, dtype, shape, bytes) of each torch module found on the encoder
    (``model``, ``mlm``, …); the tokenizer's full definition when it has a fast one.
    An encoder may also define ``fingerprint()`` itself, which is then used instead.
    """
    try:
        with _memo_lock:
            if encoder in _model_hashes:
                return _model_hashes[encoder]
    except TypeError:  # not weak-referenceable: compute every time
        pass
    if callable(getattr(encoder, "fingerprint", None)):
        digest = str(encoder.fingerprint())
    else:
        digest = _compute_model_fingerprint(encoder)
    try:
        with _memo_lock:
            _model_hashes[encoder] = digest
    except TypeError:
        pass
    return digest


def _compute_model_fingerprint(encoder: Encoder) -> str:
    import torch

    from probing import encoding as encoding_module

    h = hashlib.sha256()
    cls = type(encoder)
    h.update(f"{cls.__module__}.{cls.__qualname__}".encode())
    for module in (inspect.getmodule(cls), encoding_module):
        src = inspect.getsourcefile(module) if module is not None else None
        if src:
            h.update(file_sha256(src).encode())
    modules = sorted(
        (name, value) for name, value in vars(encoder).items() if isinstance(value, torch.nn.Module)
    )
    if not modules:
        raise TypeError(
            f"Cannot fingerprint {cls.__name__}: it has no torch module attribute; "
            "give it a fingerprint() method."
        )
    for name, module in modules:
        h.update(name.encode())
        for key, tensor in module.state_dict().items():
            t = tensor.detach().cpu().contiguous().reshape(-1)
            h.update(f"{key}|{t.dtype}|{tuple(tensor.shape)}".encode())
            h.update(t.view(torch.uint8).numpy().data)
    tokenizer = getattr(encoder, "tokenizer", None)
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is not None:
        h.update(backend.to_str().encode())
    return h.hexdigest()


def cache_key(
    model_fp: str,
    dataset: str,
    split: str,
    dataset_fp: str,
    pooling: str,
    layers: Sequence[int] | None,
    max_sentences: int | None,
) -> str:
    """Hex SHA-256 naming a cache entry (see the module doc for what goes in)."""
    spec = {
        "format": FORMAT_VERSION,
        "model": model_fp,
        "dataset": dataset,
        "split": split,
        "data": dataset_fp,
        "pooling": pooling,
        "layers": None if layers is None else [int(x) for x in layers],
        "max_sentences": max_sentences,
        "sample_seed": SAMPLE_SEED if max_sentences else None,
    }
    return hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()


def features_dir() -> Path:
    """Root of the feature cache: ``config.cache_dir()/features``."""
    return config.cache_dir() / "features"


def _entry(
    encoder: Encoder,
    dataset: str,
    split: str,
    data_fp: str,
    pooling: str,
    max_sentences: int | None,
) -> tuple[Path, str]:
    """(folder, key) of a cache entry. Keyed by content: every entry holds all layers (a
    layer subset is a view), a sample as large as the split is the split, and a cached whole
    split holds every sample."""
    model_fp = model_fingerprint(encoder) + _dtype_tag(encoder)
    k = cache_key(model_fp, dataset, split, data_fp, pooling, None, max_sentences)
    return features_dir() / f"{_safe(encoder.info.name)}__{dataset}__{split}__{k[:20]}", k


def features_cached(
    encoder: Encoder,
    dataset: str,
    split: str,
    pooling: str = "first",
    max_sentences: int | None = None,
) -> bool:
    """True when :func:`extract_features` would find this split (or sample) in the cache
    instead of encoding it (the entry is there; its soundness is checked when read)."""
    data_fp = dataset_fingerprint(dataset, split)
    if _entry(encoder, dataset, split, data_fp, pooling, max_sentences)[0].exists():
        return True
    return max_sentences is not None and (
        _entry(encoder, dataset, split, data_fp, pooling, None)[0].exists()
    )


# -- the public entry point ---------------------------------------------------------------


def extract_features(
    encoder: Encoder,
    dataset: str,
    split: str,
    label: str | None = None,
    layers: Sequence[int] | None = None,
    pooling: str = "first",
    progress: ProgressFn | None = None,
    max_sentences: int | None = None,
    *,
    batch_size: int = 64,
) -> Features:
    """Every word's per-layer vectors for one split, from the cache or computed now.

    Args:
        encoder: any :class:`~probing.encoders.base.Encoder`.
        dataset: ``ud-ewt``, ``semcor`` or ``brown``.
        split: ``train``, ``dev`` or ``test``.
        label: a label field (``upos``, ``sense``…): keep only the words that have one, with
            it as ``labels``. ``None`` keeps every word (``labels`` all "").
        layers: encoder layers to keep (0 = input layer; negative counts from the top);
            ``None`` keeps all ``n_layers + 1``.
        pooling: how pieces become words: ``first``, ``mean`` or ``last``.
        progress: called with (sentences done, total) while encoding; once with (total,
            total) on a cache hit.
        max_sentences: encode only this many sentences, a fixed seeded sample of the split
            kept in data-set order (part of the cache key).
        batch_size: most sentences per forward pass (batches are also capped at
            ``probing.encoders.batching.DEFAULT_MAX_TOKENS`` padded pieces).

    Returns:
        Features with float16 vectors (n_layers_kept, n_words, dim) on disk.
    """
    n_all = int(encoder.info.n_contextual_layers) + 1
    layer_ids = _normalise_layers(layers, n_all)
    data_fp = dataset_fingerprint(dataset, split)

    def entry(n: int | None) -> tuple[Path, str]:
        return _entry(encoder, dataset, split, data_fp, pooling, n)

    folder, key = entry(max_sentences)
    feats = _try_load(folder, key)
    if feats is None and max_sentences is not None:
        if max_sentences >= _n_sentences(dataset, split, data_fp):
            max_sentences = None
            folder, key = entry(None)
            feats = _try_load(folder, key)
        elif (whole := _try_load(*entry(None), quiet=True)) is not None:
            feats = _sample_view(whole, _sample(len(whole.sent_ids), max_sentences))
    if feats is None:
        layer_ids_stored = tuple(range(n_all))
        with cache_writes(f"the features of {dataset} {split}"):
            _build(
                encoder,
                dataset,
                split,
                layer_ids_stored,
                pooling,
                max_sentences,
                key,
                folder,
                progress,
                batch_size,
            )
        feats = load_features(folder, key)
        feature_cache.evict(features_dir(), config.limits().feature_cache_bytes, keep=folder)
    elif progress is not None:
        total = len(feats.sent_ids)
        progress(total, total)
    feats = _view_layers(feats, layer_ids)
    return feats.with_label(label) if label is not None else feats


def load_features(folder: str | os.PathLike[str], key: str | None = None) -> Features:
    """Open a cache entry, checking every file against its manifest.

    Raises:
        CorruptCacheError: missing manifest or file, size or SHA-256 mismatch, unreadable
            array, or a key other than ``key``.
    """
    folder = Path(folder)
    try:
        manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise CorruptCacheError(f"{folder}: no readable manifest ({exc})") from exc
    if key is not None and manifest.get("key") != key:
        raise CorruptCacheError(f"{folder}: manifest is for another key")
    for name, expect in manifest.get("files", {}).items():
        path = folder / name
        try:
            st = path.stat()
        except OSError as exc:
            raise CorruptCacheError(f"{path} is missing") from exc
        if st.st_size != expect["size"]:
            raise CorruptCacheError(f"{path} is {st.st_size} bytes, expected {expect['size']}")
        memo = (str(path.resolve()), st.st_size, st.st_mtime_ns)
        if memo not in _verified:
            if file_sha256(path) != expect["sha256"]:
                raise CorruptCacheError(f"{path} does not match its checksum")
            _verified.add(memo)
    try:
        store = np.load(folder / "layers.npy", mmap_mode="r")
        static = np.load(folder / "static.npy", mmap_mode="r")
        words = np.load(folder / "words.npy", allow_pickle=False)
        sentence_index = np.load(folder / "sentence_index.npy", allow_pickle=False)
        fields = LabelFields(
            {
                name: np.load(folder / f"label_{i}.npy", mmap_mode="r")
                for i, name in enumerate(manifest["fields"])
            }
        )
        sents = json.loads((folder / "sentences.json").read_text(encoding="utf-8"))
    except (OSError, ValueError, KeyError) as exc:
        raise CorruptCacheError(f"{folder}: unreadable ({exc})") from exc
    n = words.shape[0]
    sizes = [v.shape[0] for v in fields._sources.values()]
    if store.shape[1] != n or static.shape[0] != n or any(size != n for size in sizes):
        raise CorruptCacheError(f"{folder}: arrays disagree on the number of words")
    return Features(
        layer_ids=tuple(manifest["layers"]),
        words=words,
        labels=np.full(n, "", dtype="<U1"),
        fields=fields,
        sentence_index=sentence_index,
        sent_ids=sents["sent_ids"],
        doc_ids=sents["doc_ids"],
        model=manifest["model"],
        dataset=manifest["dataset"],
        split=manifest["split"],
        pooling=manifest["pooling"],
        label=None,
        key=manifest["key"],
        path=folder,
        _store=store,
        _static=static,
        _layer_pos=tuple(range(store.shape[0])),
        _rows=None,
    )


# -- internals ----------------------------------------------------------------------------


def _normalise_layers(layers: Sequence[int] | None, n_all: int) -> tuple[int, ...]:
    if layers is None:
        return tuple(range(n_all))
    out: list[int] = []
    for raw in layers:
        layer = int(raw) + n_all if int(raw) < 0 else int(raw)
        if not 0 <= layer < n_all:
            raise InvalidArgumentError(
                f"layer {raw} does not exist; this model has layers 0..{n_all - 1}"
            )
        if layer not in out:
            out.append(layer)
    return tuple(sorted(out))


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("._") or "model"


def _view_layers(feats: Features, layer_ids: tuple[int, ...]) -> Features:
    if feats.layer_ids == layer_ids:
        return feats
    pos = tuple(feats._layer_pos[feats.layer_ids.index(layer)] for layer in layer_ids)
    return replace(feats, layer_ids=layer_ids, _layer_pos=pos)


def _try_load(folder: Path, key: str, quiet: bool = False) -> Features | None:
    """The entry if it is there and sound (marked as used); a broken one is removed (and
    then rebuilt)."""
    if not folder.exists():
        return None
    try:
        feats = load_features(folder, key)
    except CorruptCacheError as exc:
        if not quiet:
            warnings.warn(f"Feature cache entry is damaged, rebuilding it: {exc}", stacklevel=3)
        _remove(folder)
        return None
    feature_cache.touch(folder)
    return feats


_remove = feature_cache.remove
_split_sizes: dict[tuple[str, str, str], int] = {}


def split_size(dataset: str, split: str) -> int:
    """Sentences in one split of a data set (memoised per data version)."""
    return _n_sentences(dataset, split, dataset_fingerprint(dataset, split))


def _n_sentences(dataset: str, split: str, data_fp: str) -> int:
    """Sentences in a split, memoised per data version in this process and in a small file
    beside the feature cache (reading a split takes seconds; the Probing page's time
    estimate asks on every first visit)."""
    memo = (dataset, split, data_fp)
    if memo in _split_sizes:
        return _split_sizes[memo]
    path = features_dir() / "split_sizes.json"
    name = f"{dataset}/{split}/{data_fp}"
    try:
        known = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        known = {}
    n = known.get(name)
    if not isinstance(n, int) or n < 0:
        n = len(read_sentences(dataset, split))
        with contextlib.suppress(OSError):  # a read-only cache only loses the memo
            path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write_text(path, json.dumps({**known, name: n}, sort_keys=True))
    _split_sizes[memo] = n
    return n


def _sample_view(whole: Features, keep: np.ndarray) -> Features:
    """The words of sentences ``keep`` (sorted indices into ``whole.sent_ids``) of an entry of
    the whole split, renumbered as an entry of just those sentences would be."""
    new_index = np.full(len(whole.sent_ids), -1, dtype=np.int32)
    new_index[keep] = np.arange(len(keep), dtype=np.int32)
    view = whole.select(new_index[whole.sentence_index] >= 0)
    return replace(
        view,
        sentence_index=new_index[view.sentence_index],
        sent_ids=[whole.sent_ids[i] for i in keep],
        doc_ids=[whole.doc_ids[i] for i in keep],
    )


def _sample(n: int, max_sentences: int | None) -> np.ndarray:
    if max_sentences is None or max_sentences >= n:
        return np.arange(n)
    rng = np.random.default_rng(SAMPLE_SEED)
    return np.sort(rng.choice(n, size=max_sentences, replace=False))


def _clean(words: list[str]) -> list[str]:
    return [w if CONTROL_RE.sub("", str(w)).strip() else _PLACEHOLDER_WORD for w in words]


def _build(
    encoder: Encoder,
    dataset: str,
    split: str,
    layer_ids: tuple[int, ...],
    pooling: str,
    max_sentences: int | None,
    key: str,
    folder: Path,
    progress: ProgressFn | None,
    batch_size: int,
) -> None:
    """Encode the split into a temporary folder, then rename it into place."""
    sentences = read_sentences(dataset, split)
    sentences = [sentences[i] for i in _sample(len(sentences), max_sentences)]
    if not sentences:
        raise ValueError(f"{dataset} {split} has no sentences")
    lengths = np.array([len(s.words) for s in sentences], dtype=np.int64)
    n_words, dim = int(lengths.sum()), int(encoder.info.dim)
    field_names = sorted(_label_fields(sentences))

    folder.parent.mkdir(parents=True, exist_ok=True)
    feature_cache.clean_stale(folder.parent)  # what killed extractions left behind
    # The build's size is known now: a disk without room is refused before encoding.
    feature_cache.check_free_space(folder.parent, (len(layer_ids) + 1) * n_words * dim * 2)
    # A cancelled or killed build of this entry resumes from its journal; when another
    # process holds it, this one builds privately.
    journal: feature_cache.BuildJournal | None = feature_cache.BuildJournal(folder, key)
    if journal.acquire():
        tmp = journal.path
    else:
        journal = None
        tmp = Path(tempfile.mkdtemp(prefix=feature_cache.temp_prefix(folder), dir=folder.parent))
    shapes = {"layers.npy": (len(layer_ids), n_words, dim), "static.npy": (n_words, dim)}
    try:
        store, static = (_open_array(tmp / name, shape, journal) for name, shape in shapes.items())
        for name in shapes:  # blocks allocated now: a full disk is ENOSPC here, not SIGBUS later
            feature_cache.reserve(tmp / name)
        if journal is not None:
            journal.arrays([store, static])
        encode_into(
            encoder,
            sentences,
            layer_ids,
            pooling,
            store,
            static,
            progress,
            batch_size,
            journal=journal,
        )
        store.flush()
        static.flush()
        del store, static
        release_free_memory()  # the forward passes' activations, before probing starts

        np.save(tmp / "words.npy", np.array([w for s in sentences for w in s.words], dtype=str))
        sent_of_word = np.repeat(np.arange(len(sentences), dtype=np.int32), lengths)
        np.save(tmp / "sentence_index.npy", sent_of_word)
        for i, (_, values) in enumerate(_label_fields(sentences).items()):
            np.save(tmp / f"label_{i}.npy", values)
        (tmp / "sentences.json").write_text(
            json.dumps(
                {
                    "sent_ids": [s.sent_id for s in sentences],
                    "doc_ids": [s.doc_id for s in sentences],
                }
            ),
            encoding="utf-8",
        )
        files = [
            *_ARRAY_FILES,
            *(f"label_{i}.npy" for i in range(len(field_names))),
            "sentences.json",
        ]
        manifest = {
            "format": FORMAT_VERSION,
            "key": key,
            "model": encoder.info.name,
            "dataset": dataset,
            "split": split,
            "pooling": pooling,
            "layers": list(layer_ids),
            "max_sentences": max_sentences,
            "n_sentences": len(sentences),
            "n_words": n_words,
            "dim": dim,
            "fields": field_names,
            "files": {
                name: {"size": (tmp / name).stat().st_size, "sha256": file_sha256(tmp / name)}
                for name in files
            },
        }
        # Written last: its presence is what makes the folder an entry.
        (tmp / "manifest.json").write_text(json.dumps(manifest, indent=1), encoding="utf-8")
        # Another process may finish the same entry first: same key, same content, success.
        (tmp / "progress.json").unlink(missing_ok=True)
        feature_cache.install(tmp, folder, lambda f: _try_load(f, key, quiet=True) is not None)
    except OSError as exc:
        if not isinstance(exc, DiskFullError) and not feature_cache.is_disk_full(exc):
            raise
        shutil.rmtree(tmp, ignore_errors=True)  # a full disk: no half-written build stays
        if isinstance(exc, DiskFullError):
            raise
        raise DiskFullError(
            "The feature cache's disk filled up during the extraction; nothing was kept. Free "
            "some space (or point CONTEXTLENS_CACHE_DIR at a larger disk), or extract fewer "
            "sentences."
        ) from None
    finally:
        if journal is not None:  # a stopped build keeps its journal for the next one
            journal.release(finished=not tmp.exists())
        elif tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


def _open_array(path: Path, shape: tuple, journal: feature_cache.BuildJournal | None) -> np.ndarray:
    """A float16 memory map of ``shape``: the one a stopped build of the same entry left
    (its journal says so and the shape agrees), else a new one."""
    if journal is not None and journal.has_arrays() and path.exists():
        with contextlib.suppress(OSError, ValueError):
            mm = np.load(path, mmap_mode="r+")
            if mm.shape == shape and mm.dtype == np.float16:
                return mm
    return np.lib.format.open_memmap(path, mode="w+", dtype=np.float16, shape=shape)


def encode_into(
    encoder: Encoder,
    sentences: Sequence,
    layer_ids: tuple[int, ...],
    pooling: str,
    store: np.ndarray,
    static: np.ndarray,
    progress: ProgressFn | None = None,
    batch_size: int = 64,
    *,
    journal: feature_cache.BuildJournal | None = None,
) -> None:
    """Encode ``sentences`` into ``store`` (n_layers, n_words, dim) and ``static``
    (n_words, dim), float16, words in sentence order (a memory map or an array).

    ``journal``: the batches already on disk are skipped, and progress is recorded as it
    goes (a cancelled or killed build resumes there)."""
    if int(batch_size) < 1:
        raise InvalidArgumentError(f"batch_size must be at least 1, not {batch_size}.")
    from probing.encoders.batching import plan_batches

    words = [_clean(s.words) for s in sentences]
    lengths = np.array([len(w) for w in words], dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    # Sorted by model pieces and filled to a padded-token budget: almost no padding (the
    # biggest CPU speed-up); longest first, ties in data-set order (reproducible).
    count = getattr(encoder, "piece_counts", None)
    counts = count(words) if callable(count) else lengths + 2
    total, done = len(sentences), 0
    plan = plan_batches(counts, batch_size)
    skip = journal.start(feature_cache.plan_digest(plan)) if journal is not None else 0
    done = int(sum(len(idx) for idx in plan[:skip]))
    if progress is not None:
        progress(done, total)  # so that a progress bar appears before the first batch
    reset = getattr(encoder, "reset_state", None)
    lean = getattr(encoder, "word_vectors", None)  # float16 vectors without Encodings
    for k_batch, idx in enumerate(plan):
        if k_batch < skip:
            continue  # on disk from a stopped build
        if callable(reset):
            reset()  # stateful encoders (ELMo): vectors must not depend on batch order
        batch = [words[i] for i in idx]
        if callable(lean):
            vectors = lean(batch, pooling)
        else:
            encs = encoder.encode(batch, pooling=pooling, windowed=True, batch_size=len(idx))
            vectors = [(e.layers, e.static) for e in encs]
        for i, (layers, static_i) in zip(idx, vectors, strict=True):
            a, b = offsets[i], offsets[i + 1]
            if layers.shape[1] != b - a:
                raise ValueError(
                    f"{sentences[i].sent_id}: the encoder returned {layers.shape[1]} "
                    f"words for {b - a}"
                )
            every = list(layer_ids) == list(range(layers.shape[0]))
            _put_float16(store[:, a:b], layers if every else layers[list(layer_ids)])
            _put_float16(static[a:b], static_i)
        done += len(idx)
        if journal is not None:
            journal.done(k_batch + 1, force=k_batch + 1 == len(plan))
        if progress is not None:
            progress(done, total)


def features_of_sentences(
    encoder: Encoder,
    sentences: Sequence,
    label: str,
    layers: Sequence[int] | None = None,
    pooling: str = "first",
    progress: ProgressFn | None = None,
    *,
    dataset: str = "sentences",
    split: str = "",
    batch_size: int = 64,
) -> Features:
    """In-memory :class:`Features` of sentences that are not a registered data set (a
    user's upload): encoded every time, never cached. ``label`` selects ``labels``."""
    if not sentences:
        raise ValueError("no sentences to encode")
    layer_ids = _normalise_layers(layers, int(encoder.info.n_contextual_layers) + 1)
    lengths = [len(s.words) for s in sentences]
    n_words, dim = int(sum(lengths)), int(encoder.info.dim)
    store = np.empty((len(layer_ids), n_words, dim), dtype=np.float16)
    static = np.empty((n_words, dim), dtype=np.float16)
    encode_into(encoder, sentences, layer_ids, pooling, store, static, progress, batch_size)
    fields = _label_fields(sentences)
    return Features(
        layer_ids=layer_ids,
        words=np.array([w for s in sentences for w in s.words], dtype=str),
        labels=fields.get(label, np.full(n_words, "", dtype="<U1")),
        fields=fields,
        sentence_index=np.repeat(np.arange(len(sentences), dtype=np.int32), lengths),
        sent_ids=[s.sent_id for s in sentences],
        doc_ids=[s.doc_id for s in sentences],
        model=encoder.info.name,
        dataset=dataset,
        split=split,
        pooling=pooling,
        label=label,
        key="",
        path=None,
        _store=store,
        _static=static,
        _layer_pos=tuple(range(len(layer_ids))),
        _rows=None,
    )


def _label_fields(sentences: Sequence) -> dict[str, np.ndarray]:
    """Every label field of the sentences, by name (sorted), as (n_words,) str ("" = none)."""
    names = sorted({name for s in sentences for name in s.labels})
    return {
        name: np.array(
            [
                "" if v is None else str(v)
                for s in sentences
                for v in s.labels.get(name, [None] * len(s.words))
            ],
            dtype=str,
        )
        for name in names
    }


def _dtype_tag(encoder: Encoder) -> str:
    # Part of the cache key: bf16 vectors differ from fp32 ones (float32 keys unchanged).
    dtype = getattr(encoder, "dtype", "float32")
    return "" if dtype == "float32" else f"|dtype={dtype}"


def _put_float16(out: np.ndarray, x: np.ndarray) -> None:
    """Write ``x`` into the float16 ``out`` without a temporary copy."""
    if x.dtype == np.float16:  # already clipped (an encoder's word_vectors)
        out[...] = x
    else:
        to_float16(x, out=out)
