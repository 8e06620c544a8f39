"""The frozen encoder's view of sentence pairs: the last layer's ``[CLS]`` state of
``[CLS] a [SEP] b [SEP]`` (token type 0 for a, 1 for b), the input of BERT's NSP head.

The encoder never changes while a pair head trains, so each pair is encoded once and its
``[CLS]`` vector cached on disk in chunks (``<work>/<name>-<k>-<hash>.safetensors``, the hash
over the chunk's texts): a killed run resumes at the first missing chunk, and changing the
pairs re-encodes only the chunks whose texts changed.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import torch
from safetensors.torch import load_file, save_file

from probing.io import atomic_write
from probing.training.sentence_pairs import Pair

CHUNK = 512  # pairs per cache file
BATCH = 64  # pairs per forward pass
MAX_PIECES = 256  # longer pairs are cut, longest sentence first (3–60 words rarely reach it)


@torch.inference_mode()
def encode_cls(model, tokenizer, pairs: Sequence[Pair], batch: int = BATCH) -> torch.Tensor:
    """(N, H) last-layer ``[CLS]`` states of ``pairs`` through ``model.bert`` (a
    ``BertForPreTraining``), batched by length, returned in the order given."""
    order = sorted(range(len(pairs)), key=lambda i: len(pairs[i].a) + len(pairs[i].b))
    out = torch.empty(len(pairs), model.config.hidden_size)
    for k in range(0, len(order), batch):
        idx = order[k : k + batch]
        enc = tokenizer(
            [pairs[i].a for i in idx],
            [pairs[i].b for i in idx],
            padding=True,
            truncation="longest_first",
            max_length=MAX_PIECES,
            return_tensors="pt",
        )
        hidden = model.bert(
            input_ids=enc["input_ids"],
            attention_mask=enc["attention_mask"],
            token_type_ids=enc["token_type_ids"],
        ).last_hidden_state
        out[idx] = hidden[:, 0].float()
    return out


def _chunk_hash(pairs: Sequence[Pair]) -> str:
    h = hashlib.sha256()
    for p in pairs:
        h.update(p.a.encode() + b"\0" + p.b.encode() + b"\n")
    return h.hexdigest()[:12]


def cached_cls(
    model,
    tokenizer,
    pairs: Sequence[Pair],
    work: Path,
    name: str,
    log: Callable[[str], None] = print,
    stats: dict[str, float] | None = None,
) -> torch.Tensor:
    """(N, H) ``[CLS]`` states of ``pairs``, from ``work``'s chunk files where present,
    encoding (and saving) the missing chunks. ``stats`` (if given) adds up the pairs
    ``encoded`` now, those read from the ``cached`` chunks, and the encoding ``seconds``."""
    work.mkdir(parents=True, exist_ok=True)
    parts, start = [], time.time()
    stats = {} if stats is None else stats
    for key in ("encoded", "cached", "seconds"):
        stats.setdefault(key, 0)
    for k in range(0, len(pairs), CHUNK):
        chunk = pairs[k : k + CHUNK]
        path = work / f"{name}-{k // CHUNK:04d}-{_chunk_hash(chunk)}.safetensors"
        if path.is_file():
            parts.append(load_file(str(path))["cls"])
            stats["cached"] += len(chunk)
            continue
        t0 = time.time()
        cls = encode_cls(model, tokenizer, chunk)
        stats["encoded"] += len(chunk)
        stats["seconds"] += time.time() - t0
        atomic_write(path, lambda tmp, c=cls: save_file({"cls": c}, str(tmp)))
        parts.append(cls)
        done = min(k + CHUNK, len(pairs))
        log(f"{name}: encoded {done:,}/{len(pairs):,} pairs ({time.time() - start:.0f} s)")
    return torch.cat(parts) if parts else torch.empty(0, model.config.hidden_size)
