"""Held-out words to predict: sentences in batches, and the LM's loss / top-1 at the scored
words under any intervention (a hook on the encoder's layer surface).

- **Masked LM**: which words are masked is a fixed rule, not a draw (so no seed enters):
  every alphabetic word that is one piece and whose position ``i`` in sentence ``s`` has
  ``(i + s) % every == 0`` (default every 6th: about BERT's 15 % of words, spread over
  positions). Loss and top-1 at the mask.
- **Next-word LMs** (``info.lm_directions``, ELMo's forward and backward LM): every
  alphabetic word in the LM vocabulary is scored, unmasked (neither direction sees the word
  it predicts), in one pass of both directions; a word's loss is the mean of the
  directions' cross-entropies (the training objective), its top-1 the mean of their hits
  (0, ½ or 1).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from probing.interventions.hooks import (
    HiddenFn,
    mlm_logits,
    model_parts,
    recorded_hidden,
    require_mlm,
)

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase

    from probing.encoders.base import Encoder
    from probing.encoders.bert import TransformersMaskedLM

InterventionFn = Callable[[], contextlib.AbstractContextManager]


@dataclass
class MaskedBatch:
    """One padded batch: ``inputs`` (B, T) tensors with masks put in; ``rows``/``cols`` the
    masked positions; ``targets`` their true piece ids; ``sentence`` each one's sentence
    index; ``word_pos`` (B, T) bool, pieces that belong to a word (no special tokens, no
    padding)."""

    inputs: dict[str, torch.Tensor]
    rows: torch.Tensor
    cols: torch.Tensor
    targets: torch.Tensor
    sentence: np.ndarray
    word_pos: torch.Tensor


def masked_batches(
    encoder: TransformersMaskedLM,
    sentences: Sequence[Sequence[str]],
    *,
    every: int = 6,
    batch_size: int = 32,
    max_pieces: int = 128,
    by_length: bool = False,
) -> list[MaskedBatch]:
    """The held-out set as batches (sentences over ``max_pieces`` pieces are left out).

    A sentence's number ``s`` (the masking rule's, and ``MaskedBatch.sentence``) is the start
    of its block of ``batch_size`` input sentences plus its place among the block's kept
    ones. ``by_length``: the same numbered sentences batched in order of piece count (stable),
    so that a batch is little padding (held-out UD-EWT test in data-set order is about 2/3
    padding); the masked words and their numbers are the same, in another order
    (:func:`word_order` gives the permutation back)."""
    require_mlm(encoder, "The masked-LM effect")
    tok = encoder.tokenizer
    groups: list[list[tuple[int, list[str], int]]] = []  # (s, words, pieces) per batch
    for start in range(0, len(sentences), batch_size):
        chunk = [list(s) for s in sentences[start : start + batch_size]]
        pieces = [len(ids) for ids in tok(chunk, is_split_into_words=True)["input_ids"]]
        kept = [(w, n) for w, n in zip(chunk, pieces, strict=True) if n <= max_pieces]
        groups.append([(start + b, w, n) for b, (w, n) in enumerate(kept)])
    if by_length:
        numbered = sorted((x for g in groups for x in g), key=lambda x: x[2])
        groups = [numbered[i : i + batch_size] for i in range(0, len(numbered), batch_size)]
    batches = [_masked_batch(tok, g, every) for g in groups if g]
    return [b for b in batches if b is not None]


def _masked_batch(
    tok: PreTrainedTokenizerBase, group: list[tuple[int, list[str], int]], every: int
) -> MaskedBatch | None:
    """One batch of numbered sentences with the rule's words masked (None: no word masked)."""
    chunk = [words for _, words, _ in group]
    enc = tok(chunk, is_split_into_words=True, padding=True, return_tensors="pt")
    ids = enc["input_ids"].clone()
    rows, cols, targets, sent = [], [], [], []
    word_pos = torch.zeros_like(ids, dtype=torch.bool)
    for b, (s, words, _) in enumerate(group):
        wids = enc.word_ids(b)
        count: dict[int, int] = {}
        for p, w in enumerate(wids):
            if w is not None:
                count[w] = count.get(w, 0) + 1
                word_pos[b, p] = True
        for p, w in enumerate(wids):
            if w is None or count[w] != 1 or not words[w].isalpha() or (w + s) % every:
                continue
            rows.append(b)
            cols.append(p)
            targets.append(int(ids[b, p]))
            sent.append(s)
    if not rows:
        return None
    r, c = torch.tensor(rows), torch.tensor(cols)
    ids[r, c] = tok.mask_token_id
    inputs = {k: enc[k] for k in ("input_ids", "attention_mask", "token_type_ids") if k in enc}
    inputs["input_ids"] = ids
    return MaskedBatch(inputs, r, c, torch.tensor(targets), np.asarray(sent), word_pos)


@dataclass
class NextWordBatch:
    """One padded batch for next-word LMs: ``ids`` (B, T, C) the char ids of
    ``<S> w1 … wn </S>``; ``rows``/``cols`` the scored words' positions (word ``i`` at
    ``i + 1``); ``targets`` their vocabulary ids; ``sentence`` each one's sentence index;
    ``word_pos`` (B, T) bool, the words (no boundary tokens, no padding)."""

    ids: torch.Tensor
    rows: torch.Tensor
    cols: torch.Tensor
    targets: torch.Tensor
    sentence: np.ndarray
    word_pos: torch.Tensor


def next_word_batches(
    encoder: Encoder, sentences: Sequence[Sequence[str]], batch_size: int = 32
) -> list[NextWordBatch]:
    """The held-out set in batches of ``batch_size`` sentences (in order) for an encoder
    whose LM is next-word LMs; batches without a scorable word are left out.

    Raises:
        NoLMHeadError: no next-word LM (``info.lm_directions`` empty).
    """
    from probing.encoders.elmo_surface import word_mask
    from probing.interventions.hooks import next_word_parts

    parts = next_word_parts(encoder, "The bi-LM effect")
    lm = parts.lm()
    batches = []
    for start in range(0, len(sentences), batch_size):
        chunk = [list(s) for s in sentences[start : start + batch_size]]
        rows, cols, tgt, sent = [], [], [], []
        for b, words in enumerate(chunk):
            for i, w in enumerate(words):
                if w.isalpha() and lm.in_vocab(w):
                    rows.append(b)
                    cols.append(i + 1)
                    tgt.append(lm.word_id(w))
                    sent.append(start + b)
        if not rows:
            continue
        ids = parts.char_ids(chunk)
        batches.append(
            NextWordBatch(
                ids,
                torch.tensor(rows),
                torch.tensor(cols),
                torch.tensor(tgt),
                np.asarray(sent),
                word_mask(chunk, ids.shape[1], ids.device),
            )
        )
    return batches


def word_order(batches: Sequence[MaskedBatch | NextWordBatch]) -> np.ndarray:
    """The permutation that puts the batches' masked words (concatenated) in sentence, then
    position order: the order of unsorted batches (identity for them)."""
    if not batches:
        return np.zeros(0, int)
    sent = np.concatenate([b.sentence for b in batches])
    cols = np.concatenate([b.cols.numpy() for b in batches])
    return np.lexsort((cols, sent))


@dataclass(frozen=True)
class WordScores:
    """Per masked word: ``loss`` (nats), ``correct`` (top-1), ``sentence`` index."""

    loss: np.ndarray
    correct: np.ndarray
    sentence: np.ndarray

    @property
    def mean_loss(self) -> float:
        return float(self.loss.mean()) if self.loss.size else float("nan")

    @property
    def top1(self) -> float:
        return float(self.correct.mean()) if self.correct.size else float("nan")

    def take(self, order: np.ndarray) -> WordScores:
        """The words in ``order`` (e.g. :func:`word_order`)."""
        return WordScores(self.loss[order], self.correct[order], self.sentence[order])


@torch.inference_mode()
def score_masked(
    encoder: Encoder,
    batches: Sequence[MaskedBatch] | Sequence[NextWordBatch],
    intervention: Callable[[Any], contextlib.AbstractContextManager] | None = None,
) -> WordScores:
    """Cross-entropy and top-1 at every scored word (masked LM: at the masks; next-word LMs:
    the mean over directions), with ``intervention(batch)`` (a context manager, e.g. a hook
    on the layer surface) active during each batch's forward pass."""
    losses, correct, sent = [], [], []
    for batch in batches:
        ctx = intervention(batch) if intervention is not None else contextlib.nullcontext()
        with ctx:
            if isinstance(batch, NextWordBatch):
                loss, hit = _next_word_scores(encoder, batch)
            else:
                at = mlm_logits(encoder, batch.inputs, batch.rows, batch.cols)  # (n, V)
                tgt = batch.targets.to(at.device)
                loss = torch.nn.functional.cross_entropy(at, tgt, reduction="none").cpu().numpy()
                hit = (at.argmax(-1) == tgt).cpu().numpy()
        losses.append(loss)
        correct.append(hit)
        sent.append(batch.sentence)
    if not losses:
        return WordScores(np.zeros(0), np.zeros(0, bool), np.zeros(0, int))
    return WordScores(np.concatenate(losses), np.concatenate(correct), np.concatenate(sent))


def _next_word_scores(encoder: Encoder, batch: NextWordBatch) -> tuple[np.ndarray, np.ndarray]:
    """(loss, top-1) per scored word: the mean over the encoder's LM directions."""
    parts = encoder.layer_parts()
    directions = encoder.info.lm_directions
    states, _ = parts.run(batch.ids)
    r, c, t = batch.rows, batch.cols, batch.targets
    nll, hit, n = 0.0, 0.0, len(directions)
    for direction in directions:
        logp = parts.next_word_log_probs(states, r, c, direction)
        nll = nll - logp.gather(1, t[:, None].to(logp.device)).squeeze(1).cpu().numpy() / n
        hit = hit + (logp.argmax(-1).cpu() == t).numpy() / n
    return np.asarray(nll), np.asarray(hit)


def _head_scores(
    encoder: TransformersMaskedLM,
    hidden: Sequence[torch.Tensor],
    batches: Sequence[MaskedBatch],
    chunk: int = 512,
) -> WordScores:
    """Masked-LM loss and top-1 of the head at the masked words' last hidden states
    (``hidden``: per batch (n_i, D)), as :func:`score_masked` computes them. The head runs
    on ``chunk`` words at a time across batches: its vocabulary matrix (30,522 × 384 for
    MiniLM, 47 MB) is then read once per chunk instead of once per batch, which made the
    head of a 32-sentence batch (about 45 masked words) cost about a block of the model."""
    from probing.encoders.bert_mlm import mlm_head_logits

    if not batches:
        return WordScores(np.zeros(0), np.zeros(0, bool), np.zeros(0, int))
    h = torch.cat(list(hidden))
    tgt = torch.cat([b.targets for b in batches]).to(h.device)
    losses, correct = [], []
    for start in range(0, len(h), chunk):
        at = mlm_head_logits(encoder.mlm, h[start : start + chunk]).float()
        t = tgt[start : start + chunk]
        losses.append(torch.nn.functional.cross_entropy(at, t, reduction="none").cpu().numpy())
        correct.append((at.argmax(-1) == t).cpu().numpy())
    sent = np.concatenate([b.sentence for b in batches])
    return WordScores(np.concatenate(losses), np.concatenate(correct), sent)


def _at_masks(last: torch.Tensor, batch: MaskedBatch) -> torch.Tensor:
    """(n, D): the batch's (B, T, D) states at its masked positions."""
    return last[batch.rows.to(last.device), batch.cols.to(last.device)]


@dataclass
class CleanStates:
    """A clean pass's hidden states and block calls, per batch, so that the blocks above a
    layer can be run again on replaced states without re-running the layers below (they are
    unchanged: a replacement at layer ``l`` reaches only blocks ``l + 1 …``).

    ``hidden[i][l]``: batch ``i``'s hidden state ``l`` (B, T, D), 0 … L. ``calls[i][j]``:
    what block ``j + 1`` was called with besides its input state (the model's own attention
    mask & co., positional and keyword), reused as they are."""

    hidden: list[list[torch.Tensor]]
    calls: list[list[tuple[tuple, dict]]]


@torch.inference_mode()
def score_clean(
    encoder: TransformersMaskedLM,
    batches: Sequence[MaskedBatch],
) -> tuple[WordScores, CleanStates | None]:
    """:func:`score_masked` without intervention, and the pass's :class:`CleanStates`; None
    for them when the blocks' outputs do not add up to the model's (a model whose last
    hidden state is not its last block's output, e.g. a final norm): callers then run full
    passes with a hook."""
    parts = model_parts(encoder)
    blocks = parts.layers[1:]
    at_masks, hidden, calls = [], [], []
    ok = True
    for batch in batches:
        seen: list[tuple[tuple, dict]] = []

        def keep(_m: torch.nn.Module, args: tuple, kwargs: dict, seen: list = seen) -> None:
            seen.append((tuple(args[1:]), dict(kwargs)))

        with contextlib.ExitStack() as hooks:
            for layer in range(1, parts.n_layers + 1):
                hooks.enter_context(parts.block_pre_hook(layer, keep))
            with recorded_hidden(parts) as store:
                out = encoder.model(**{k: v.to(encoder.device) for k, v in batch.inputs.items()})
        last = out.last_hidden_state
        ok = ok and len(store) == len(parts.layers) and len(seen) == len(blocks)
        ok = ok and torch.equal(store[-1], last)
        at_masks.append(_at_masks(last, batch))
        hidden.append(list(store))
        calls.append(seen)
    scores = _head_scores(encoder, at_masks, batches)
    return scores, (CleanStates(hidden, calls) if ok else None)


def _tiled(x: Any, k: int, B: int) -> Any:  # Any: whatever a block takes (tensor, cache, None)
    """A block argument for ``k`` copies of a batch of ``B`` stacked on the batch dim."""
    if isinstance(x, torch.Tensor) and x.dim() > 0 and x.shape[0] == B and k > 1:
        return x.repeat(k, *([1] * (x.dim() - 1)))
    return x


@torch.inference_mode()
def score_above(
    encoder: TransformersMaskedLM,
    batches: Sequence[MaskedBatch],
    states: CleanStates,
    layer: int,
    fns: Sequence[HiddenFn],
    stack: bool = True,
) -> list[WordScores]:
    """Per ``fn``: :func:`score_masked` with hidden state ``layer`` replaced by ``fn(h)`` at
    every word piece (later layers recomputed), run from ``states`` (the clean pass of the same
    ``batches``): only blocks ``layer + 1 …`` run. ``stack``: the ``fns``' states go through
    the blocks as one batch (``len(fns)`` × B); the same computation in larger matrix
    products, equal up to float32 round-off."""
    parts = model_parts(encoder)
    blocks = parts.layers[layer + 1 :]
    at_masks: list[list[torch.Tensor]] = [[] for _ in fns]
    for i, batch in enumerate(batches):
        h = states.hidden[i][layer]
        pos = batch.word_pos.to(h.device)[..., None]
        replaced = [torch.where(pos, fn(h), h) for fn in fns]
        groups = [torch.cat(replaced)] if stack else replaced
        lasts = []
        for x in groups:
            k = x.shape[0] // h.shape[0]
            for j, block in enumerate(blocks):
                args, kwargs = states.calls[i][layer + j]
                y = block(
                    x,
                    *(_tiled(a, k, h.shape[0]) for a in args),
                    **{n: _tiled(v, k, h.shape[0]) for n, v in kwargs.items()},
                )
                x = y[0] if isinstance(y, tuple) else y
            lasts.extend(x.split(h.shape[0]))
        for f, last in enumerate(lasts):
            at_masks[f].append(_at_masks(last, batch))
    return [_head_scores(encoder, a, batches) for a in at_masks]
