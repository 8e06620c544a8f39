"""Cached final-layer states of the frozen all-mpnet-base-v2 at masked positions.

The encoder under mpnet-base-mlm's head is frozen, so its states are the same at every step:
they are computed once, here, and the head trains on them for several epochs in a fraction
of the time a forward pass per step would take (the encoder is ~99 % of the cost).

- **Training states**: packed training sequences (``probing.training.mlm_data``), a seeded
  choice of them, BERT-masked (15 % of real pieces: 80 % ``<mask>``, 10 % random, 10 % kept)
  with a seed per shard, run through the encoder; the last layer's state at each selected
  position is kept with its target piece. One ``.npz`` shard per ``shard_sequences``
  sequences, written atomically: an interrupted run resumes at the first missing shard.
- **Held-out states**: the fixed masked sample of UD-EWT dev (:func:`masked_sample`), every
  masked piece as ``<mask>``, one sentence at a time (``<s> … </s>``).

States are stored as float16 (N, 768); targets as int32 (N,).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from probing.io import atomic_write
from probing.training.mlm_data import MaskedSample, PackedCorpus, mask_batch


@dataclass
class MaskedStates:
    """Final-layer states at masked positions: ``states`` (N, D) float16, ``targets`` (N,)."""

    states: np.ndarray
    targets: np.ndarray

    @property
    def n(self) -> int:
        return len(self.targets)


def _save(path: Path, states: np.ndarray, targets: np.ndarray) -> None:
    atomic_write(
        path,
        lambda tmp: np.savez(tmp, states=states, targets=targets),
        suffix=".npz",  # np.savez appends .npz to any other name
    )


def _load(path: Path) -> MaskedStates:
    with np.load(path) as z:
        return MaskedStates(z["states"], z["targets"])


@torch.inference_mode()
def _states_at(
    encoder: torch.nn.Module, ids: torch.Tensor, att: torch.Tensor, sel: torch.Tensor
) -> np.ndarray:
    """The last layer's states (n selected, D) as float16, rows in row-major order of ``sel``."""
    hidden = encoder(input_ids=ids, attention_mask=att)[0]
    return hidden[sel].to(torch.float16).numpy()


def shard_sequences(corpus: PackedCorpus, n_pieces: int, per_shard: int, seed: int) -> list:
    """The sequence indices of each shard: a seeded permutation of the packed sequences cut
    into whole shards of ``per_shard``, as many as hold ``n_pieces`` pieces (the last one may
    pass it). Shard ``i`` is the same whatever ``n_pieces`` is, so a larger run reuses it."""
    perm = np.random.default_rng([seed, 7919]).permutation(corpus.n_sequences)
    lengths = np.diff(corpus.offsets)[perm]
    need = int(np.searchsorted(np.cumsum(lengths), n_pieces)) + 1
    need = min(-(-need // per_shard) * per_shard, len(perm))
    return [perm[i : min(i + per_shard, need)] for i in range(0, need, per_shard)]


def training_states(
    encoder: torch.nn.Module,
    corpus: PackedCorpus,
    folder: Path,
    *,
    n_pieces: int,
    per_shard: int,
    batch_size: int,
    seed: int,
    vocab_size: int,
    mask_id: int,
    first_real: int,
    pad_id: int,
    log: Callable[[str], None] = print,
) -> tuple[MaskedStates, int]:
    """Masked training states over about ``n_pieces`` pieces, computed shard by shard into
    ``folder`` (kept shards are reused); returns (all states, pieces run through the encoder)."""
    folder.mkdir(parents=True, exist_ok=True)
    shards = shard_sequences(corpus, n_pieces, per_shard, seed)
    parts: list[MaskedStates] = []
    pieces = 0
    t0 = time.time()
    for i, idx in enumerate(shards):
        path = folder / f"train-{seed}-{per_shard}-{i:05d}.npz"
        seqs = [corpus.ids[corpus.offsets[j] : corpus.offsets[j + 1]] for j in idx]
        pieces += sum(len(s) for s in seqs)
        if path.is_file():
            parts.append(_load(path))
            continue
        rng = np.random.default_rng([seed, i])  # per shard: a resumed run masks the same
        states, targets = [], []
        for start in range(0, len(seqs), batch_size):
            ids, att, sel, tgt = mask_batch(
                seqs[start : start + batch_size], rng, vocab_size, mask_id, first_real, pad_id
            )
            states.append(_states_at(encoder, ids, att, sel))
            targets.append(tgt.numpy().astype(np.int32))
        part = MaskedStates(np.concatenate(states), np.concatenate(targets))
        _save(path, part.states, part.targets)
        parts.append(part)
        rate = pieces / max(time.time() - t0, 1e-9)
        log(f"states shard {i + 1}/{len(shards)}: {part.n} masks ({rate:.0f} pieces/s so far)")
    return (
        MaskedStates(
            np.concatenate([p.states for p in parts]), np.concatenate([p.targets for p in parts])
        ),
        pieces,
    )


def heldout_states(
    encoder: torch.nn.Module, sample: MaskedSample, path: Path, pad_id: int, batch_size: int = 32
) -> MaskedStates:
    """States at the masked sample's positions (cached at ``path``), in sample order."""
    if path.is_file():
        return _load(path)
    order = np.argsort([len(x) for x in sample.ids], kind="stable")  # less padding
    states: list[np.ndarray] = [np.zeros(0)] * len(order)
    for start in range(0, len(order), batch_size):
        idx = order[start : start + batch_size]
        width = max(len(sample.ids[i]) for i in idx)
        ids = torch.full((len(idx), width), pad_id, dtype=torch.long)
        att = torch.zeros_like(ids)
        sel = torch.zeros_like(ids, dtype=torch.bool)
        for row, i in enumerate(idx):
            ids[row, : len(sample.ids[i])] = torch.from_numpy(sample.ids[i])
            att[row, : len(sample.ids[i])] = 1
            sel[row, torch.from_numpy(sample.positions[i])] = True
        got = _states_at(encoder, ids, att, sel)
        counts = [len(sample.positions[i]) for i in idx]
        for i, chunk in zip(idx, np.split(got, np.cumsum(counts)[:-1]), strict=True):
            states[i] = chunk
    out = MaskedStates(np.concatenate(states), np.concatenate(sample.targets).astype(np.int32))
    path.parent.mkdir(parents=True, exist_ok=True)
    _save(path, out.states, out.targets)
    return out
