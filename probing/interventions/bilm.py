"""ELMo's language models under interventions: bi-LM loss on held-out words, forward-LM
agreement (Linzen et al. 2016's left-context setting) and activation patching.

Needs an ELMo whose folder ships ``softmax.safetensors`` (:func:`hooks.require_bilm`).
Positions are those of ``<S> w1 … wn </S>``: word ``i`` sits at ``i + 1``; the forward LM
predicts it from its top layer at ``i``, the backward LM from its top layer at ``i + 2``.

- **Loss / top-1** (erasure's LM effect): every alphabetic word in the LM vocabulary is
  scored in both directions in one pass (no masking: neither direction sees the word it
  predicts); a word's loss is the mean of the two directions' cross-entropies (the training
  objective), its top-1 the mean of the two directions' hits (0, ½ or 1).
- **Agreement**: the sentence up to the verb, read by the forward LM only; right when
  ``log P(correct form) > log P(wrong form)`` at the verb's position. Both forms must be in
  the LM vocabulary (the word-level analogue of Goldberg's single-piece rule).
- **Patching**: on minimal pairs the forward states at (layer, role positions) are copied
  from the source run (layer 0: the token vectors; layer ``l``: the forward LSTM's output,
  the only half the forward LM reads). Roles: subject, attractor, the last word before the
  verb (where the prediction is read; only when it is neither of those), other.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import torch

from probing.interventions.agreement import AgreementCase
from probing.interventions.erasure import Eraser
from probing.interventions.hooks import require_bilm
from probing.interventions.lm_effect import MaskedLMEffect, any_field
from probing.interventions.masked_words import WordScores
from probing.interventions.recompute import LayerHook, elmo_states, replacing, word_mask

if TYPE_CHECKING:
    from probing.encoders.elmo import ElmoEncoder
    from probing.interventions.erasure_run import ErasureSpec

HookFactory = Callable[[torch.Tensor], LayerHook]  # (B, T) word mask -> hook
ROLES_LM = ("subject", "attractor", "last word", "other")


def _ids(encoder: ElmoEncoder, chunk: Sequence[Sequence[str]]) -> torch.Tensor:
    from probing.encoders.elmo import batch_to_char_ids

    cfg = encoder.model.config
    return batch_to_char_ids([list(s) for s in chunk], cfg.max_characters_per_token).to(
        encoder.device
    )


@torch.inference_mode()
def next_word_log_probs(
    encoder: ElmoEncoder, words: Sequence[str]
) -> tuple[torch.Tensor, torch.Tensor]:
    """The two LMs' log-probabilities over the vocabulary for one sentence: forward
    (n + 1, V), row ``i`` = P(word ``i`` | words before it), the last row P(``</S>`` | all);
    backward (n + 1, V), row ``i`` = P(word ``i - 1`` | words after it), row 0 P(``<S>`` | all)
    (words outside the vocabulary are ``<UNK>``, id :attr:`ElmoSoftmax.unk`)."""
    softmax = require_bilm(encoder, "Next-word probabilities")
    states, _ = elmo_states(encoder, _ids(encoder, [list(words)]))
    top_f, top_b = states[-1]
    n = len(words)
    return softmax.log_prob(top_f[0, : n + 1]), softmax.log_prob(top_b[0, 1 : n + 2])


# -- loss and top-1 on held-out words -------------------------------------------------------


@torch.inference_mode()
def score_words(
    encoder: ElmoEncoder,  # with a softmax
    sentences: Sequence[Sequence[str]],
    intervention: HookFactory | None = None,
    batch_size: int = 32,
) -> WordScores:
    """Bi-LM cross-entropy (nats, mean of both directions) and top-1 (mean of both) at every
    alphabetic in-vocabulary word, with ``intervention(word_mask)``'s hook active."""
    softmax = require_bilm(encoder, "The bi-LM effect")
    losses, correct, sent = [], [], []
    for start in range(0, len(sentences), batch_size):
        chunk = [list(s) for s in sentences[start : start + batch_size]]
        ids = _ids(encoder, chunk)
        hook = intervention(word_mask(chunk, ids.shape[1], ids.device)) if intervention else None
        states, _ = elmo_states(encoder, ids, hook)
        top_f, top_b = states[-1]
        rows, cols, tgt = [], [], []
        for b, words in enumerate(chunk):
            for i, w in enumerate(words):
                if w.isalpha() and softmax.in_vocab(w):
                    rows.append(b)
                    cols.append(i + 1)
                    tgt.append(softmax.word_id(w))
                    sent.append(start + b)
        if not rows:
            continue
        r, c, t = torch.tensor(rows), torch.tensor(cols), torch.tensor(tgt)
        nll, hit = 0.0, 0.0
        for states_at in (top_f[r, c - 1], top_b[r, c + 1]):
            logp = softmax.log_prob(states_at, chunk=256)
            nll = nll - logp.gather(1, t[:, None].to(logp.device)).squeeze(1).cpu().numpy() / 2
            hit = hit + (logp.argmax(-1).cpu() == t).numpy() / 2
        losses.append(nll)
        correct.append(hit)
    if not losses:
        return WordScores(np.zeros(0), np.zeros(0), np.zeros(0, int))
    return WordScores(np.concatenate(losses), np.concatenate(correct), np.asarray(sent))


class BiLMEffect(MaskedLMEffect):
    """Erasure's LM effect for ELMo: bi-LM loss / top-1 on the held-out sentences' words with
    layer ``l`` erased (later layers recomputed) or randomly erased."""

    def __init__(self, encoder: ElmoEncoder, dataset: str, spec: ErasureSpec) -> None:
        from probing.interventions.data import labelled_sample
        from probing.interventions.stats import PairedBootstrap

        held = labelled_sample(dataset, "test", any_field(dataset), spec.heldout_sentences)
        self.encoder = encoder
        self.sentences = held.sentences
        self.clean = score_words(encoder, self.sentences)
        self.boot = PairedBootstrap(self.clean.sentence, n_boot=spec.n_boot, seed=1)
        self.n_words = int(self.clean.loss.size)

    def _scores(self, layer: int, eraser: Eraser) -> WordScores:
        return score_words(
            self.encoder, self.sentences, lambda words: replacing(layer, eraser.torch_apply, words)
        )


# -- agreement with the forward LM ------------------------------------------------------------


def scorable(encoder: ElmoEncoder, cases: Sequence[AgreementCase]) -> list[int]:
    """Indices of the cases whose two verb forms are distinct LM-vocabulary words."""
    softmax = require_bilm(encoder, "Agreement with the forward LM")
    return [
        i
        for i, c in enumerate(cases)
        if softmax.in_vocab(c.correct) and softmax.in_vocab(c.wrong) and c.correct != c.wrong
    ]


def _last_states(
    encoder: ElmoEncoder, contexts: list[list[str]], hook: LayerHook | None
) -> torch.Tensor:
    ids = _ids(encoder, contexts)
    states, _ = elmo_states(encoder, ids, hook, forward_only=True)
    top = states[-1][0]
    return top[torch.arange(len(contexts)), torch.tensor([len(c) for c in contexts])]


@torch.inference_mode()
def forward_margins(
    encoder: ElmoEncoder,
    cases: Sequence[AgreementCase],
    kept: Sequence[int],
    batch_size: int = 128,
) -> np.ndarray:
    """log P(correct) − log P(wrong) of the forward LM at each kept case's verb, given the
    words before it only (n_kept,)."""
    softmax = require_bilm(encoder, "Agreement with the forward LM")
    out = []
    for start in range(0, len(kept), batch_size):
        chunk = [cases[i] for i in kept[start : start + batch_size]]
        at = _last_states(encoder, [list(c.words[: c.verb]) for c in chunk], None)
        pair = torch.tensor([[softmax.word_id(c.correct), softmax.word_id(c.wrong)] for c in chunk])
        logp = softmax.log_prob(at, chunk=256)
        out.append((logp.gather(1, pair[:, :1]) - logp.gather(1, pair[:, 1:])).squeeze(1).numpy())
    return np.concatenate(out) if out else np.zeros(0)


# -- activation patching ----------------------------------------------------------------------


@dataclass(frozen=True)
class LMPairBatch:
    """Pairs of one length: ``base``/``source`` left contexts (word lists), ``ids`` (B, 2)
    the base's and the source's verb form, ``roles`` role -> (B, T) bool over the
    ``<S> w1 … wn </S>`` positions, ``groups`` (bootstrap units)."""

    base: list[list[str]]
    source: list[list[str]]
    ids: torch.Tensor
    roles: dict[str, torch.Tensor]
    groups: list[str]


def _lm_role(case: AgreementCase, word: int) -> str:
    from probing.interventions.patching import _role

    role = _role(case, word, False)
    if role == "other" and word == case.verb - 1:
        return "last word"
    return role


def lm_pair_batches(
    encoder: ElmoEncoder,
    pairs: Sequence[tuple[AgreementCase, AgreementCase, str]],
    batch_size: int = 128,
) -> list[LMPairBatch]:
    """(base case, source case, group) triples (as :func:`patching.make_batches` takes) ->
    batches of left contexts of equal length; pairs whose forms are not both in the LM
    vocabulary are left out.

    Raises:
        MinimalPairLengthError: a pair whose left contexts differ in length.
    """
    from probing.errors import MinimalPairLengthError

    softmax = require_bilm(encoder, "Patching the forward LM")
    shaped: dict[int, list] = {}
    for base, source, group in pairs:
        if not (softmax.in_vocab(base.correct) and softmax.in_vocab(base.wrong)):
            continue
        if base.verb != source.verb:
            raise MinimalPairLengthError(
                f"{' '.join(base.words)!r} and {' '.join(source.words)!r} have their verbs at "
                "different places: patching copies states position by position."
            )
        shaped.setdefault(base.verb, []).append((base, source, group))
    batches = []
    for n, items in shaped.items():
        for start in range(0, len(items), batch_size):
            chunk = items[start : start + batch_size]
            roles = {r: torch.zeros(len(chunk), n + 2, dtype=torch.bool) for r in ROLES_LM}
            for b, (case, _s, _g) in enumerate(chunk):
                roles["other"][b, 0] = True  # <S>
                for w in range(n):
                    roles[_lm_role(case, w)][b, w + 1] = True
            ids = torch.tensor(
                [[softmax.word_id(c.correct), softmax.word_id(c.wrong)] for c, _s, _g in chunk]
            )
            batches.append(
                LMPairBatch(
                    [list(c.words[: c.verb]) for c, _s, _g in chunk],
                    [list(s.words[: s.verb]) for _c, s, _g in chunk],
                    ids,
                    roles,
                    [g for *_x, g in chunk],
                )
            )
    return batches


def _copy_hook(layer: int, src: torch.Tensor, where: torch.Tensor) -> LayerHook:
    def hook(at: int, f: torch.Tensor, b: torch.Tensor | None) -> tuple:
        if at != layer:
            return f, b
        return torch.where(where[..., None].to(f.device), src[:, : f.shape[1]], f), b

    return hook


def _diff(
    encoder: ElmoEncoder, words: list[list[str]], ids: torch.Tensor, hook: LayerHook | None
) -> torch.Tensor:
    """log P(source's form) − log P(base's form) at the verb."""
    softmax = encoder.softmax
    logp = softmax.log_prob(_last_states(encoder, words, hook), chunk=256)
    return logp.gather(1, ids[:, 1:2]).squeeze(1) - logp.gather(1, ids[:, :1]).squeeze(1)


def _source_states(encoder: ElmoEncoder, batch: LMPairBatch) -> list[torch.Tensor]:
    states, _ = elmo_states(encoder, _ids(encoder, batch.source), forward_only=True)
    return [f for f, _b in states]


@torch.inference_mode()
def patch_pairs_lm(
    encoder: ElmoEncoder, batches: Sequence[LMPairBatch], n_boot: int = 1000
) -> dict:
    """Fraction of the forward LM's log-probability difference between the two verb forms
    moved per (layer, role), with pair-bootstrap CIs; the same layout as
    :func:`probing.interventions.patching.patch_pairs` (``heads`` None: an LSTM has none)."""
    from probing.interventions.stats import PairedBootstrap

    L = int(encoder.info.n_contextual_layers)
    base_d, src_d, groups = [], [], []
    cell: dict[tuple, list] = {}
    for batch in batches:
        src = _source_states(encoder, batch)
        d_base = _diff(encoder, batch.base, batch.ids, None)
        base_d.append(d_base)
        src_d.append(_diff(encoder, batch.source, batch.ids, None))
        groups.extend(batch.groups)
        for layer in range(L + 1):
            for role in ROLES_LM:
                hook = _copy_hook(layer, src[layer], batch.roles[role])
                d = _diff(encoder, batch.base, batch.ids, hook)
                cell.setdefault((layer, role), []).append(d - d_base)
    total = (torch.cat(src_d) - torch.cat(base_d)).numpy()
    boot = PairedBootstrap(groups, n_boot=n_boot, seed=0)
    from probing.interventions.patching import effect_grid

    moved = [[torch.cat(cell[(layer, r)]).numpy() for r in ROLES_LM] for layer in range(L + 1)]
    roles = {
        **effect_grid(boot, moved, total),  # fractions (z, lo, hi) and the change itself
        "x": list(ROLES_LM),
        "y": [str(x) for x in range(L + 1)],
        "x_title": "position role (forward LM, left context)",
    }
    return {
        "roles": roles,
        "heads": None,
        "total_effect": boot.mean(total).as_dict(),
        "n_pairs": int(len(total)),
        "n_groups": len(set(groups)),
        "setting": "forward LM, left context only; log-probabilities of the two verb forms",
    }


def patch_all_positions_lm(
    encoder: ElmoEncoder, batch: LMPairBatch, layer: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """(patched base, source) log-probability differences with every position of ``layer``
    copied from the source run: at the last layer the two must be equal."""
    with torch.inference_mode():
        src = _source_states(encoder, batch)
        every = torch.ones_like(batch.roles["other"])
        patched = _diff(encoder, batch.base, batch.ids, _copy_hook(layer, src[layer], every))
        source = _diff(encoder, batch.source, batch.ids, None)
    return patched, source
