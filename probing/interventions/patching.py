"""Activation patching on minimal pairs (causal mediation, Vig et al. 2020; Finlayson et al.
2021 for agreement).

A pair is two sentences that differ only in the subject's number (templated: the attractor
is kept), the verb masked in both.
The *base* run reads one; the *source* run the other. Copying the source's hidden state at
(layer, positions of one role) into the base run moves the base's logit difference
``d = logit(source's verb form) - logit(base's verb form)`` at the mask towards the
source's. Reported
per cell: the fraction moved, ``Σ (d_patched - d_base) / Σ (d_source - d_base)`` over pairs
(both directions), with a pair-bootstrap CI; per attention head, the same with the head's
output (all positions) copied. Where this differs from Vig et al.: their indirect effect is a
ratio of probability ratios per item, averaged; the ratio of summed logit differences here
does not blow up on pairs whose total effect is near zero, and 1 means the patch carries the
whole effect.

An encoder whose LM is next-word LMs (``info.lm_directions``: ELMo) is patched in Linzen et
al.'s setting (:class:`LeftContextPairBatch`): the base and source runs read the words
before the verb with the forward LM only, and ``d`` is the difference of its
log-probabilities of the two forms at the verb. Its roles are subject, attractor, the last
word before the verb (where the prediction is read; only when it is neither of those) and
other (``<S>`` included); layer 0 is the token layer, layer ``l`` the forward LSTM's output,
the only half the forward LM reads. There are no heads (an LSTM has none).

A pair typed by a user (:func:`user_pair`) has its attractor marked by the user
(:meth:`TypedPair.suggested_attractor` presets a word that differs between the sentences too).
Its fractions are drawn only when the total effect is clearly positive (:func:`pair_grid`):
for a pair the model gets wrong, ``d_source - d_base`` is negative or near zero and a
fraction of it flips signs or blows up, so the change itself is shown instead; one pair has
no bootstrap interval.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import torch

from probing.errors import InputTooLongError, MinimalPairLengthError, VerbFormError
from probing.interventions.agreement import (
    NOUNS,
    AgreementCase,
    forward_lm_log_probs,
    single_piece_id,
)
from probing.interventions.hooks import (
    head_outputs,
    mlm_logits,
    model_parts,
    recorded_hidden,
    replaced_hidden,
)

if TYPE_CHECKING:
    import numpy as np
    from transformers import BatchEncoding

    from probing.encoders.base import Encoder
    from probing.encoders.bert import TransformersMaskedLM
    from probing.interventions.stats import PairedBootstrap

ROLES = ("subject", "attractor", "verb", "other")
ROLES_LM = ("subject", "attractor", "last word", "other")
LM_SETTING = "forward LM, left context only; log-probabilities of the two verb forms"


@dataclass(frozen=True)
class PairBatch:
    """Pairs of one shape: ``base``/``source`` inputs (B, T); ``mask`` position (B,);
    ``ids`` (B, 2) the base's and the source's verb form ids; ``roles`` role -> (B, T) bool."""

    base: dict[str, torch.Tensor]
    source: dict[str, torch.Tensor]
    mask: torch.Tensor
    ids: torch.Tensor
    roles: dict[str, torch.Tensor]
    groups: list[str]


@dataclass(frozen=True)
class LeftContextPairBatch:
    """Pairs of one length for a forward LM: ``base``/``source`` char ids (B, T, C) of the
    words before the verb; ``mask`` where the verb goes (B,); ``ids`` (B, 2) the base's and
    the source's verb form; ``roles`` role -> (B, T) bool over the ``<S> w1 … wn </S>``
    positions (:data:`ROLES_LM`)."""

    base: torch.Tensor
    source: torch.Tensor
    mask: torch.Tensor
    ids: torch.Tensor
    roles: dict[str, torch.Tensor]
    groups: list[str]


def _tokenise(
    encoder: TransformersMaskedLM, words: list[list[str]]
) -> tuple[BatchEncoding, dict[str, torch.Tensor]]:
    enc = encoder.tokenizer(words, is_split_into_words=True, padding=True, return_tensors="pt")
    keys = ("input_ids", "attention_mask", "token_type_ids")
    return enc, {k: enc[k] for k in keys if k in enc}


def pair_batches(
    encoder: TransformersMaskedLM, cases: Sequence[AgreementCase], batch_size: int = 64
) -> list[PairBatch]:
    """Minimal pairs from templated cases: each case is a base, and its source is the same
    sentence with only the subject's number changed (the attractor stays as it is), so that
    both numbers of every instance give the two directions. Batched by piece length.

    Raises:
        MinimalPairLengthError: a pair whose sentences tokenize to different lengths.
    """
    return make_batches(encoder, templated_pairs(cases), batch_size)


def templated_pairs(cases: Sequence[AgreementCase]) -> list[tuple]:
    """(base, source, group) per templated case: the source is the same sentence with only
    the subject's number changed (the attractor stays as it is)."""
    other = {sg: pl for sg, pl in NOUNS} | {pl: sg for sg, pl in NOUNS}
    pairs = []
    for c in cases:
        words = list(c.words)
        if words[c.subject] not in other:
            continue
        words[c.subject] = other[words[c.subject]]
        number = "Plur" if c.number == "Sing" else "Sing"
        source = replace(c, words=tuple(words), number=number, correct=c.wrong, wrong=c.correct)
        pairs.append((c, source, c.group))
    return pairs


def make_batches(
    encoder: Encoder,
    pairs: Sequence[tuple[AgreementCase, AgreementCase, str]],
    batch_size: int = 64,
) -> list[PairBatch] | list[LeftContextPairBatch]:
    """(base case, source case, group) triples -> batches of equal piece length (next-word
    LMs: :func:`left_context_batches`, their own batch size)."""
    if encoder.info.lm_directions:
        return left_context_batches(encoder, pairs)
    tok = encoder.tokenizer
    shaped: dict[int, list] = {}
    for base, source, group in pairs:
        # (the base's form, the source's form): d = logit(source's) - logit(base's) moves
        # up in both directions of a pair
        own, other = single_piece_id(encoder, base.correct), single_piece_id(encoder, base.wrong)
        if own is None or other is None:
            continue
        words_b = _masked_words(base, tok.mask_token)
        words_s = _masked_words(source, tok.mask_token)
        nb = len(tok(words_b, is_split_into_words=True)["input_ids"])
        ns = len(tok(words_s, is_split_into_words=True)["input_ids"])
        limit = encoder.info.max_pieces
        if limit is not None and max(nb, ns) > limit:
            raise InputTooLongError(max(nb, ns), limit)
        if nb != ns:  # the lengths, not the sentences: the user has them, and they may be long
            raise MinimalPairLengthError(
                f"The two sentences are {nb} and {ns} word pieces long: patching copies states "
                "position by position, so both must be as long (pick subjects the model reads "
                "as the same number of pieces)."
            )
        shaped.setdefault(nb, []).append((base, words_b, words_s, (own, other), group))
    batches = []
    for items in shaped.values():
        for start in range(0, len(items), batch_size):
            chunk = items[start : start + batch_size]
            enc_b, base = _tokenise(encoder, [w for _, w, _, _, _ in chunk])
            _, source = _tokenise(encoder, [w for _, _, w, _, _ in chunk])
            mask_id = tok.mask_token_id
            mask = (base["input_ids"] == mask_id).int().argmax(1)
            roles = {r: torch.zeros_like(base["input_ids"], dtype=torch.bool) for r in ROLES}
            for b, (case, *_rest) in enumerate(chunk):
                for p, w in enumerate(enc_b.word_ids(b)):
                    role = _role(case, w, p == int(mask[b]))
                    roles[role][b, p] = True
            batches.append(
                PairBatch(
                    base,
                    source,
                    mask,
                    torch.tensor([c[3] for c in chunk]),
                    roles,
                    [c[4] for c in chunk],
                )
            )
    return batches


def left_context_batches(
    encoder: Encoder,
    pairs: Sequence[tuple[AgreementCase, AgreementCase, str]],
    batch_size: int = 128,
) -> list[LeftContextPairBatch]:
    """(base case, source case, group) triples -> batches of left contexts of equal length;
    pairs whose forms are not both in the LM vocabulary are left out.

    Raises:
        MinimalPairLengthError: a pair whose verbs are at different places.
        NoLMHeadError: no next-word LM.
    """
    from probing.interventions.hooks import next_word_parts

    parts = next_word_parts(encoder, "Patching the forward LM")
    lm = parts.lm()
    shaped: dict[int, list] = {}
    for base, source, group in pairs:
        if not (lm.in_vocab(base.correct) and lm.in_vocab(base.wrong)):
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
            batches.append(
                LeftContextPairBatch(
                    parts.char_ids([list(c.words[:n]) for c, _s, _g in chunk]),
                    parts.char_ids([list(s.words[:n]) for _c, s, _g in chunk]),
                    torch.full((len(chunk),), n + 1),
                    torch.tensor(
                        [[lm.word_id(c.correct), lm.word_id(c.wrong)] for c, _s, _g in chunk]
                    ),
                    roles,
                    [g for *_x, g in chunk],
                )
            )
    return batches


def _lm_role(case: AgreementCase, word: int) -> str:
    role = _role(case, word, False)
    return "last word" if role == "other" and word == case.verb - 1 else role


def _masked_words(case: AgreementCase, mask_token: str) -> list[str]:
    words = list(case.words)
    words[case.verb] = mask_token
    return words


def _role(case: AgreementCase, word: int | None, is_mask: bool) -> str:
    if is_mask:
        return "verb"
    if word == case.subject:
        return "subject"
    if word is not None and word == attractor_index(case):
        return "attractor"
    return "other"


def attractor_index(case: AgreementCase) -> int | None:
    """The attractor's word index: a typed pair's marked word (:class:`TypedCase`), or the
    templates' place for it; None when the case has none."""
    if isinstance(case, TypedCase):
        return case.attractor
    if not case.attractors:
        return None
    return case.verb - 1 - _attractor_offset(case)


def _attractor_offset(case: AgreementCase) -> int:
    """Templated attractors sit right before the verb ('near the A V') or before 'like(s)'."""
    return 1 if case.source == "across object relative" else 0


def _at_mask(encoder: Encoder, inputs: dict | torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """(B, V) scores of the verb's position ``mask``: masked-LM logits for tokenised
    ``inputs``; for char ids, the forward LM's log-probabilities given the left context."""
    if isinstance(inputs, torch.Tensor):
        return forward_lm_log_probs(encoder, inputs, mask)
    return mlm_logits(encoder, inputs, torch.arange(len(mask)), mask)


def _diff(at: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
    """logit(source's form) - logit(base's form) from (B, V) logits at the mask."""
    ids = ids.to(at.device)
    return at.gather(1, ids[:, 1:2]).squeeze(1) - at.gather(1, ids[:, :1]).squeeze(1)


@torch.inference_mode()
def patch_pairs(
    encoder: Encoder,
    batches: Sequence[PairBatch] | Sequence[LeftContextPairBatch],
    n_boot: int = 1000,
    heads: bool = True,
) -> dict:
    """Fractions moved per (layer, role) and, with ``heads`` (where the encoder has head
    hooks), per (layer, head), with CIs (module doc). Without heads: (L + 1) x 4 forward
    passes per batch instead of also L x H. For a forward LM (:class:`LeftContextPairBatch`)
    ``heads`` is None and ``setting`` says what was read."""
    from probing.interventions.stats import PairedBootstrap

    lm = bool(batches) and isinstance(batches[0], LeftContextPairBatch)
    parts = encoder.layer_parts() if lm else model_parts(encoder)
    heads = heads and not lm and bool(encoder.info.has_head_hooks)
    role_names = ROLES_LM if lm else ROLES
    L, H = parts.n_layers, parts.n_heads
    base_d, src_d, groups = [], [], []
    cell: dict[tuple, list] = {}
    for batch in batches:
        src_heads: dict[int, torch.Tensor] = {}

        def keep(
            b: int, heads: torch.Tensor, store: dict[int, torch.Tensor] = src_heads
        ) -> torch.Tensor:
            store[b] = heads.clone()
            return heads

        with contextlib.ExitStack() as stack:
            src_hidden = stack.enter_context(recorded_hidden(parts))
            if heads:
                stack.enter_context(head_outputs(parts, keep))
            src_logits = _at_mask(encoder, batch.source, batch.mask)
        d_base = _diff(_at_mask(encoder, batch.base, batch.mask), batch.ids)
        base_d.append(d_base)
        src_d.append(_diff(src_logits, batch.ids))
        groups.extend(batch.groups)
        for layer in range(L + 1):
            for role in role_names:
                where = batch.roles[role][..., None].to(encoder.device)
                src = src_hidden[layer]
                with replaced_hidden(parts, layer, lambda h, w=where, s=src: torch.where(w, s, h)):
                    d = _diff(_at_mask(encoder, batch.base, batch.mask), batch.ids)
                cell.setdefault(("role", layer, role), []).append(d - d_base)
        for b in range(L if heads else 0):
            for h in range(H):

                def put(
                    _blk: int, heads: torch.Tensor, h: int = h, src: torch.Tensor = src_heads[b]
                ) -> torch.Tensor:
                    out = heads.clone()
                    out[:, :, h] = src[:, :, h]
                    return out

                with head_outputs(parts, put, blocks=[b]):
                    d = _diff(_at_mask(encoder, batch.base, batch.mask), batch.ids)
                cell.setdefault(("head", b, h), []).append(d - d_base)
    total = (torch.cat(src_d) - torch.cat(base_d)).cpu().numpy()
    boot = PairedBootstrap(groups, n_boot=n_boot, seed=0)
    te = boot.mean(total)

    def grid(kind: str, ys: list, xs: list) -> dict:
        return effect_grid(
            boot, [[torch.cat(cell[(kind, y, x)]).cpu().numpy() for x in xs] for y in ys], total
        )

    roles = grid("role", list(range(L + 1)), list(role_names))
    x_title = "position role (forward LM, left context)" if lm else "position role"
    roles.update(x=list(role_names), y=[str(layer) for layer in range(L + 1)], x_title=x_title)
    head_grid = None
    if heads:
        head_grid = grid("head", list(range(L)), list(range(H)))
        head_grid.update(
            x=[f"head {h}" for h in range(H)],
            y=[str(b + 1) for b in range(L)],
            x_title="attention head (output patched at every position)",
        )
    out = {
        "roles": roles,
        "heads": head_grid,
        "total_effect": te.as_dict(),
        "n_pairs": int(len(total)),
        "n_groups": len(set(groups)),
    }
    return {**out, "setting": LM_SETTING} if lm else out


def effect_grid(boot: PairedBootstrap, moved: list[list], total: np.ndarray) -> dict:
    """Per cell of ``moved`` (rows × columns of per-pair ``d_patched - d_base`` arrays) the
    fraction ``Σ moved / Σ total`` (``z``, ``lo``, ``hi``) and the mean change itself, in the
    unit of ``d`` (``moved``, ``moved_lo``, ``moved_hi``), with pair-bootstrap intervals."""
    out: dict[str, list] = {k: [] for k in ("z", "lo", "hi", "moved", "moved_lo", "moved_hi")}
    for row in moved:
        frac = [boot.ratio(num, total) for num in row]
        mean = [boot.mean(num) for num in row]
        for key, ests in (("", frac), ("moved", mean)):
            for part, attr in (("", "value"), ("lo", "ci_low"), ("hi", "ci_high")):
                name = "_".join(x for x in (key, part) if x) or "z"
                out[name].append([getattr(e, attr) for e in ests])
    return out


# A typed pair's total effect (the two margins added) below this, in logits (nats for the
# forward LM), is too small to divide by: one logit moved would read as two "wholes".
MIN_TOTAL_EFFECT = 0.5


@dataclass(frozen=True)
class TypedCase(AgreementCase):
    """A sentence of a typed pair; ``attractor``: the word the user marked as the attractor
    (a noun between subject and verb), None when none is marked."""

    attractor: int | None = None


@dataclass(frozen=True)
class TypedPair:
    """Two typed sentences read as a minimal pair: their words (``[MASK]`` as
    :data:`MASK_WORD`), the subject (the first word that differs), the verb (the mask) and
    every word that differs."""

    a: tuple[str, ...]
    b: tuple[str, ...]
    subject: int
    verb: int
    differing: tuple[int, ...]

    @property
    def between(self) -> list[int]:
        """The words strictly between subject and verb: where an attractor can be."""
        lo, hi = sorted((self.subject, self.verb))
        return list(range(lo + 1, hi))

    def suggested_attractor(self) -> int | None:
        """The rule for a typed pair: a word between subject and verb that also differs
        between the two sentences (its number swapped, as in 'the key to the cabinets' /
        'the keys to the cabinet'); None otherwise: without a tagger the page cannot tell
        a noun, so the user marks it (or leaves the column out)."""
        return next((i for i in self.differing[1:] if i in self.between), None)


MASK_WORD = "MASKTOKEN"


def read_pair(sentence_a: str, sentence_b: str) -> TypedPair:
    """Two sentences with ``[MASK]`` at the verb, differing in the subject, as a
    :class:`TypedPair`.

    Raises:
        MinimalPairLengthError: different numbers of words, or no word differs.
        InvalidArgumentError: no ``[MASK]`` in sentence A, or not in the same place in B.
    """
    from probing.encoders.base import split_words
    from probing.errors import InvalidArgumentError

    a = split_words(sentence_a.replace("[MASK]", f" {MASK_WORD} "))
    b = split_words(sentence_b.replace("[MASK]", f" {MASK_WORD} "))
    if len(a) != len(b):
        raise MinimalPairLengthError(
            f"The two sentences have {len(a)} and {len(b)} words; a minimal pair differs in "
            "the subject's form only."
        )
    if MASK_WORD not in a or a.index(MASK_WORD) != (b.index(MASK_WORD) if MASK_WORD in b else -1):
        raise InvalidArgumentError("Put [MASK] where the verb goes, at the same place in both.")
    diff = tuple(i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y)
    if not diff:
        raise MinimalPairLengthError("The two sentences are the same; change the subject's number.")
    return TypedPair(tuple(a), tuple(b), diff[0], a.index(MASK_WORD), diff)


def user_pair(
    sentence_a: str,
    sentence_b: str,
    forms: tuple[str, str],
    attractor: int | None = None,
) -> list:
    """Both directions of a pair typed by a user: two sentences with ``[MASK]`` at the verb,
    differing in the subject; ``forms`` = (singular, plural); ``attractor``: the attractor's
    word index (see :meth:`TypedPair.suggested_attractor`), None for none. The subject is
    taken to be the first word that differs; sentence A is read as the singular one.

    Raises:
        MinimalPairLengthError: different numbers of words, or no word differs.
        InvalidArgumentError: no ``[MASK]`` in sentence A, or not in the same place in B;
            an attractor that is not between subject and verb.
        VerbFormError: a form that is empty, not one word, or has control characters, or
            the same form twice (nothing to compare).
    """
    from probing.errors import InvalidArgumentError

    forms = _verb_forms(forms)
    pair = read_pair(sentence_a, sentence_b)
    if attractor is not None and attractor not in pair.between:
        raise InvalidArgumentError(
            f"The attractor must be a word between the subject ({pair.a[pair.subject]!r}) "
            "and [MASK]."
        )
    verb, subject = pair.verb, pair.subject
    sg, pl = forms
    cases = [
        TypedCase(
            tuple(w if w != MASK_WORD else own for w in words),
            verb,
            subject,
            number,
            own,
            other,
            int(attractor is not None),
            verb - subject,
            "yours",
            "yours",
            attractor,
        )
        for words, number, own, other in ((pair.a, "Sing", sg, pl), (pair.b, "Plur", pl, sg))
    ]
    ca, cb = cases
    return [(ca, cb, "yours"), (cb, ca, "yours")]


def pair_grid(
    out: dict,
    drop: Sequence[str] = (),
    min_total: float = MIN_TOTAL_EFFECT,
    d_unit: str = "logits",
) -> dict:
    """The roles grid of a patching result (:func:`patch_pairs`, or the forward LM's) as it
    may honestly be drawn.

    - Fractions (``unit`` "fraction moved") only when the total effect, the mean of
      ``d_source - d_base``, is at least ``min_total``: a negative total (the model prefers
      the wrong forms) flips every sign, a near-zero one blows the fractions up. Otherwise
      the change itself, ``d_patched - d_base`` in the unit of ``d`` (``unit`` "moved";
      ``d_unit``: "logits", or "nats" for the forward LM's log-probabilities).
    - Columns named in ``drop`` are left out (a typed pair with no attractor marked).
    - With one bootstrap group (a typed pair: its two directions) ``lo``/``hi`` are None:
      one pair has no interval.

    Returns the grid for :func:`probing.figures.interventions.patching_figure` with
    ``normalised`` (bool), ``total`` (the mean total effect) and ``intervals`` (bool).
    """
    roles = out["roles"]
    total = float(out["total_effect"]["value"])
    normalised = bool(total >= min_total)
    keep = [j for j, x in enumerate(roles["x"]) if x not in set(drop)]
    pick = ("z", "lo", "hi") if normalised else ("moved", "moved_lo", "moved_hi")
    intervals = int(out.get("n_groups", 0)) > 1
    grid = {k: v for k, v in roles.items() if k not in ("z", "lo", "hi") and "moved" not in k}
    grid["x"] = [roles["x"][j] for j in keep]
    for name, key in zip(("z", "lo", "hi"), pick, strict=True):
        grid[name] = [[row[j] for j in keep] for row in roles[key]]
    if not intervals:
        grid["lo"] = grid["hi"] = None
    grid.update(
        normalised=normalised,
        total=total,
        intervals=intervals,
        unit="fraction moved" if normalised else "moved",
        d_unit=d_unit,
    )
    return grid


def _verb_forms(forms: tuple[str, str]) -> tuple[str, str]:
    """(singular, plural) stripped, each one plain word, the two different.

    Raises:
        VerbFormError: naming the form and what is wrong with it.
    """
    from probing.encoders.base import CONTROL_RE

    sg, pl = (str(f).strip() for f in forms)
    for name, form in (("singular", sg), ("plural", pl)):
        if not form:
            raise VerbFormError(f"Type the {name} verb form (e.g. is / are).")
        if CONTROL_RE.search(form):
            raise VerbFormError(
                f"The {name} verb form {form!r} has control characters; type a plain word."
            )
        if len(form.split()) != 1:
            raise VerbFormError(f"The {name} verb form {form!r} is not one word; type one word.")
    if sg == pl:
        raise VerbFormError(
            f"Both verb forms are {sg!r}: give the singular and the plural (e.g. is / are), so "
            "that there is a preference to measure."
        )
    return sg, pl


def patch_all_positions(
    encoder: Encoder, batch: PairBatch | LeftContextPairBatch, layer: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """(patched base scores, source scores) at the verb (B, V), with every position of
    ``layer`` copied from the source run: at the last layer the two must be equal (a check of
    the hooks)."""
    lm = isinstance(batch, LeftContextPairBatch)
    parts = encoder.layer_parts() if lm else model_parts(encoder)
    with torch.inference_mode():
        with recorded_hidden(parts) as src_hidden:
            src_logits = _at_mask(encoder, batch.source, batch.mask)
        with replaced_hidden(parts, layer, lambda h: src_hidden[layer]):
            patched = _at_mask(encoder, batch.base, batch.mask)
    return patched, src_logits
