"""The MLM head's data and metric: packed training sequences, BERT-style masking, and
top-1/top-5 on a fixed masked sample of held-out text (see :mod:`probing.training.mlm_head`)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from probing.io import atomic_write
from probing.training.cli_args import EVAL_MASKS as EVAL_MASKS
from probing.training.cli_args import EVAL_SEED as EVAL_SEED

MLM_PROB = 0.15
MASK_FRAC, RANDOM_FRAC = 0.8, 0.1  # of the selected pieces; the rest are kept as they are
FIRST_REAL_PIECE = 999  # bert-base-uncased vocab: ids below are [PAD], [unused*], specials


# -- data ---------------------------------------------------------------------------------


@dataclass
class PackedCorpus:
    """Packed training sequences: sequence ``i`` is ``ids[offsets[i]:offsets[i + 1]]``.

    Each sequence already holds its specials (``[CLS] s1 [SEP] s2 [SEP] ...``).
    ``counts`` (vocab,) are the training pieces' frequencies, specials excluded.
    """

    ids: np.ndarray  # (total pieces,) int32
    offsets: np.ndarray  # (n sequences + 1,) int64
    counts: np.ndarray  # (vocab,) int64
    n_sentences: int
    n_words: int

    @property
    def n_sequences(self) -> int:
        return len(self.offsets) - 1

    @property
    def n_pieces(self) -> int:
        return int(self.counts.sum())


def tokenize_sentences(tokenizer, sentences: Iterable[Sequence[str]], chunk: int = 2000):
    """Yield (word count, piece ids without specials) per sentence, tokenised in chunks."""
    buf: list[list[str]] = []

    def flush():
        enc = tokenizer(buf, is_split_into_words=True, add_special_tokens=False)
        for words, ids in zip(buf, enc["input_ids"], strict=True):
            yield len(words), ids

    for words in sentences:
        buf.append([str(w) for w in words])
        if len(buf) >= chunk:
            yield from flush()
            buf = []
    if buf:
        yield from flush()


def pack_corpus(tokenizer, sentences: Iterable[Sequence[str]], seq_len: int = 128) -> PackedCorpus:
    """Greedily pack consecutive sentences into sequences of at most ``seq_len`` pieces.

    A sentence longer than a sequence is cut into pieces of ``seq_len - 2``; an empty one is
    skipped. Packing keeps neighbouring sentences together, so the model sees real context.
    """
    cls_id, sep_id = tokenizer.cls_token_id, tokenizer.sep_token_id
    room = seq_len - 2
    ids: list[np.ndarray] = []
    offsets = [0]
    current: list[int] = [cls_id]
    total = n_sent = n_words = 0
    for n, pieces in tokenize_sentences(tokenizer, sentences):
        n_sent += 1
        n_words += n
        if not pieces:
            continue
        for start in range(0, len(pieces), room):
            part = pieces[start : start + room]
            if len(current) + len(part) + 1 > seq_len:
                arr = np.asarray(current, dtype=np.int32)
                ids.append(arr)
                total += len(arr)
                offsets.append(total)
                current = [cls_id]
            current.extend(part)
            current.append(sep_id)
    if len(current) > 1:
        ids.append(np.asarray(current, dtype=np.int32))
        total += len(current)
        offsets.append(total)
    flat = np.concatenate(ids) if ids else np.zeros(0, np.int32)
    counts = np.bincount(flat, minlength=len(tokenizer)).astype(np.int64)
    counts[tokenizer.all_special_ids] = 0  # the packing's [CLS]/[SEP] are not text
    return PackedCorpus(
        ids=flat,
        offsets=np.asarray(offsets, dtype=np.int64),
        counts=counts,
        n_sentences=n_sent,
        n_words=n_words,
    )


def cached_pack(
    tokenizer, sentences: Iterable[Sequence[str]], seq_len: int, folder: Path
) -> PackedCorpus:
    """:func:`pack_corpus`, cached in ``folder`` under a hash of the text, vocab and seq_len.

    Reading the corpus takes seconds; tokenising it takes a minute or more on a busy CPU,
    which every resume would otherwise pay again.
    """
    sentences = [list(map(str, s)) for s in sentences]
    digest = hashlib.sha256(f"{seq_len}|{len(tokenizer)}|".encode())
    digest.update("\n".join(sorted(tokenizer.get_vocab())).encode())
    for words in sentences:
        digest.update(("\x1f".join(words) + "\n").encode())
    path = folder / f"packed-{digest.hexdigest()[:16]}.npz"
    if path.is_file():
        with np.load(path) as z:
            return PackedCorpus(
                ids=z["ids"],
                offsets=z["offsets"],
                counts=z["counts"],
                n_sentences=int(z["n_sentences"]),
                n_words=int(z["n_words"]),
            )
    corpus = pack_corpus(tokenizer, sentences, seq_len)
    folder.mkdir(parents=True, exist_ok=True)
    atomic_write(
        path,
        lambda tmp: np.savez(
            tmp,
            ids=corpus.ids,
            offsets=corpus.offsets,
            counts=corpus.counts,
            n_sentences=corpus.n_sentences,
            n_words=corpus.n_words,
        ),
        suffix=".npz",  # np.savez appends .npz to any other name
    )
    return corpus


def mask_batch(
    seqs: list[np.ndarray],
    rng: np.random.Generator,
    vocab_size: int,
    mask_id: int,
    first_real: int = FIRST_REAL_PIECE,
    pad_id: int = 0,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Pad and BERT-mask a batch of packed sequences.

    Returns ``input_ids`` (B, T) long, ``attention_mask`` (B, T) long, ``selected`` (B, T)
    bool (positions to predict) and ``targets`` (n selected,) long, in row-major order.
    Only real pieces (id >= ``first_real``: 999 in bert-base-uncased's vocab, see
    :func:`first_real_piece`) are selectable, so specials and [UNK] are never targets; random
    replacements come from the real pieces below ``vocab_size`` (a vocab whose [MASK] is its
    last id passes ``vocab_size = mask_id``).
    """
    width = max(len(s) for s in seqs)
    ids = np.full((len(seqs), width), pad_id, dtype=np.int64)
    att = np.zeros((len(seqs), width), dtype=np.int64)
    for i, s in enumerate(seqs):
        ids[i, : len(s)] = s
        att[i, : len(s)] = 1
    selectable = (ids >= first_real) & (att == 1)
    selected = selectable & (rng.random(ids.shape) < MLM_PROB)
    if not selected.any():  # a loss needs at least one target
        rows, cols = np.nonzero(selectable)
        k = rng.integers(len(rows))
        selected[rows[k], cols[k]] = True
    targets = ids[selected].copy()
    action = rng.random(len(targets))
    inputs = ids.copy()
    sel_rows, sel_cols = np.nonzero(selected)
    to_mask = action < MASK_FRAC
    to_rand = (action >= MASK_FRAC) & (action < MASK_FRAC + RANDOM_FRAC)
    inputs[sel_rows[to_mask], sel_cols[to_mask]] = mask_id
    inputs[sel_rows[to_rand], sel_cols[to_rand]] = rng.integers(
        first_real, vocab_size, int(to_rand.sum())
    )
    return (
        torch.from_numpy(inputs),
        torch.from_numpy(att),
        torch.from_numpy(selected),
        torch.from_numpy(targets),
    )


# -- held-out evaluation ------------------------------------------------------------------


@dataclass
class MaskedSample:
    """Fixed eval items: per item, masked ``ids`` (pieces with specials), positions, targets."""

    ids: list[np.ndarray]
    positions: list[np.ndarray]
    targets: list[np.ndarray]

    @property
    def n(self) -> int:
        return int(sum(len(t) for t in self.targets))


def first_real_piece(tokenizer) -> int:
    """The lowest id of a real word piece: WordPiece vocabs put their specials and
    ``[unusedN]`` slots first and start real pieces at ``!`` (999 in bert-base-uncased, 1003
    in MPNet's, which prepends four specials)."""
    return int(tokenizer.convert_tokens_to_ids("!"))


def masked_sample(
    tokenizer,
    sentences: Iterable[Sequence[str]],
    n_masks: int = EVAL_MASKS,
    seed: int = EVAL_SEED,
    first_real: int = FIRST_REAL_PIECE,
) -> MaskedSample:
    """A deterministic sample of ``n_masks`` masked pieces over single sentences.

    Each sentence is ``[CLS] pieces [SEP]`` (the way fill-mask is used); in each pass over the
    sentences every real piece is masked with probability 0.15 (all masked pieces become
    [MASK]); passes repeat with fresh draws until ``n_masks`` positions are collected.
    Same (sentences, n_masks, seed) -> same sample.
    """
    rng = np.random.default_rng(seed)
    cls_id, sep_id, mask_id = (
        tokenizer.cls_token_id,
        tokenizer.sep_token_id,
        tokenizer.mask_token_id,
    )
    base = [
        np.asarray([cls_id, *pieces[:510], sep_id], dtype=np.int64)
        for _, pieces in tokenize_sentences(tokenizer, sentences)
        if pieces
    ]
    sample = MaskedSample([], [], [])
    need = n_masks
    for _pass in range(100):
        for ids in base:
            if need <= 0:
                return sample
            chosen = np.nonzero((ids >= first_real) & (rng.random(len(ids)) < MLM_PROB))[0]
            chosen = chosen[:need]
            if len(chosen) == 0:
                continue
            masked = ids.copy()
            masked[chosen] = mask_id
            sample.ids.append(masked)
            sample.positions.append(chosen)
            sample.targets.append(ids[chosen])
            need -= len(chosen)
        if not base:
            break
    return sample


@torch.inference_mode()
def evaluate_sample(model, sample: MaskedSample, batch_size: int = 64) -> dict[str, float]:
    """Top-1/top-5 accuracy of ``model`` (a BertForMaskedLM) on a :class:`MaskedSample`."""
    was_training = model.training
    model.eval()
    device = next(model.parameters()).device
    order = np.argsort([len(x) for x in sample.ids], kind="stable")  # less padding
    hit1 = hit5 = 0
    for start in range(0, len(order), batch_size):
        idx = order[start : start + batch_size]
        width = max(len(sample.ids[i]) for i in idx)
        ids = torch.zeros((len(idx), width), dtype=torch.long)
        att = torch.zeros_like(ids)
        sel = torch.zeros_like(ids, dtype=torch.bool)
        targets = []
        for row, i in enumerate(idx):
            ids[row, : len(sample.ids[i])] = torch.from_numpy(sample.ids[i])
            att[row, : len(sample.ids[i])] = 1
            sel[row, torch.from_numpy(sample.positions[i])] = True
            targets.append(torch.from_numpy(sample.targets[i]))
        hidden = model.bert(input_ids=ids.to(device), attention_mask=att.to(device))[0]
        # The vocab projection only at masked positions: it costs ~6x an encoder layer per piece.
        logits = model.cls(hidden[sel.to(device)])  # (n masked, vocab)
        # sel's row-major order matches positions sorted within each row (np.nonzero sorts).
        gold = torch.cat(targets).to(device)
        top5 = logits.topk(5, dim=-1).indices
        hit1 += int((top5[:, 0] == gold).sum())
        hit5 += int((top5 == gold[:, None]).any(dim=-1).sum())
    model.train(was_training)
    n = sample.n
    return {"top1": hit1 / max(n, 1), "top5": hit5 / max(n, 1), "n": n}


def evaluate_mlm(
    model,
    tokenizer,
    sentences: Iterable[Sequence[str]],
    n_masks: int = EVAL_MASKS,
    seed: int = EVAL_SEED,
) -> dict[str, float]:
    """Held-out masked-piece accuracy: ``{"top1", "top5", "n"}`` (fractions, n masked pieces)."""
    return evaluate_sample(model, masked_sample(tokenizer, sentences, n_masks, seed))


def unigram_guess(counts: np.ndarray | Sequence[int], k: int = 5) -> list[int]:
    """The ``k`` most frequent training pieces (ids), most frequent first."""
    counts = np.asarray(counts)
    return [int(i) for i in np.argsort(-counts, kind="stable")[:k]]


def unigram_baseline(
    tokenizer,
    sentences: Iterable[Sequence[str]],
    guess: Sequence[int],
    n_masks: int = EVAL_MASKS,
    seed: int = EVAL_SEED,
) -> dict[str, float]:
    """Accuracy of always guessing ``guess`` (top-5 ids, e.g. :func:`unigram_guess`) on the
    same masked sample :func:`evaluate_mlm` uses: ``{"top1", "top5", "n"}``."""
    return sample_unigram(masked_sample(tokenizer, sentences, n_masks, seed), guess)


def sample_unigram(sample: MaskedSample, guess: Sequence[int]) -> dict[str, float]:
    gold = np.concatenate(sample.targets) if sample.targets else np.zeros(0, np.int64)
    n = len(gold)
    top1 = float((gold == guess[0]).sum()) / max(n, 1)
    top5 = float(np.isin(gold, list(guess[:5])).sum()) / max(n, 1)
    return {"top1": top1, "top5": top5, "n": n}
