"""Fill-mask: what a masked-language model guesses for each ``[MASK]`` in a sentence.

Two views of the same forward pass:

- :func:`fill_mask` gives the model's own prediction: the top-k word pieces and their
  probabilities at every mask, from the ``…ForMaskedLM`` model's logits.
- :func:`fill_mask_by_layer` applies the same MLM head to every layer's hidden state at the
  mask positions (a "logit lens" for masked LMs): which word the model would guess if it
  stopped after layer ℓ, and where the final answer ranks at each layer. Its last layer is
  exactly :func:`fill_mask`'s output.

The raw text goes through the model's own tokenizer (not through a word list), so that the
mask survives as the model's single mask token. Users type ``[MASK]`` (any case) or ``<mask>``;
each is mapped to the model's own mask token (``[MASK]`` for BERT, ``<mask>`` for RoBERTa).
All masks stay masked in one forward pass, so each mask's distribution is conditioned on the
other masks being unknown too.
"""

from __future__ import annotations

import json
import re
import threading
import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np
import torch

from probing.errors import (
    EmptyInputError,
    InputTooLongError,
    InvalidArgumentError,
    NoMaskError,
    NoMLMHeadError,
    TooManyMasksError,
)

DEFAULT_MAX_MASKS = 4
EXAMPLE = "The doctor picked up her [MASK] and left the [MASK]."

# What users may type for a mask: [MASK] / [mask] / [ Mask ] and RoBERTa's <mask>.
MASK_RE = re.compile(r"\[\s*mask\s*\]|<\s*mask\s*>", re.IGNORECASE)
# The whitespace before a mask is swallowed with it. Byte-level BPE (RoBERTa) and
# SentencePiece vocabularies fold a word's leading space into the word's piece ("Ġcat",
# "▁cat"): the mask has to stand for that whole piece, or the tokenizer emits a lone "Ġ"
# before it. RoBERTa's own <mask> is declared lstrip=True for exactly this reason; not every
# checkpoint's is, so we do it ourselves. WordPiece (BERT) ignores the space either way.
_MASK_WITH_SPACE_RE = re.compile(r"\s*(?:" + MASK_RE.pattern + ")", re.IGNORECASE)
# Words as split_words() sees them (probing.encoders.base), with a mask as one word.
_WORD_OR_MASK_RE = re.compile(
    "(" + MASK_RE.pattern + r")|\w+(?:['’\-]\w+)*|[^\w\s]", re.IGNORECASE | re.UNICODE
)
_CONTROL_RE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_FORWARD_KEYS = ("input_ids", "attention_mask", "token_type_ids")


class Candidate(NamedTuple):
    """One guess at a mask: a vocabulary piece (``##ing`` = continues a word) and its probability."""

    token: str
    probability: float


@dataclass(frozen=True)
class MaskPrediction:
    """The model's top-k guesses at one mask.

    Attributes:
        mask_index: which mask this is, 0-based, in reading order.
        position: index of the mask among the model's pieces (special tokens included).
        word_index: index of the mask among the text's words (punctuation counts as a word,
            as in ``split_words``), or None when the mask is glued to letters ("un[MASK]").
        candidates: top-k (token, probability), most probable first. Probabilities are over
            the whole vocabulary, so they sum to at most 1.
        token_ids: vocabulary ids of ``candidates`` (k,).
    """

    mask_index: int
    position: int
    word_index: int | None
    candidates: list[Candidate]
    token_ids: list[int]

    @property
    def tokens(self) -> list[str]:
        return [c.token for c in self.candidates]

    @property
    def probabilities(self) -> list[float]:
        return [c.probability for c in self.candidates]


@dataclass(frozen=True)
class MaskedInput:
    """A fill-mask input as the model sees it.

    Attributes:
        text: the text fed to the tokenizer (user masks replaced by the model's own token).
        pieces: the model's pieces, special tokens included (n_pieces,).
        input_ids: their vocabulary ids (n_pieces,).
        mask_positions: piece index of each mask, in reading order (n_masks,).
        word_indices: word index of each mask, or None (see MaskPrediction) (n_masks,).
        encoding: the tokenizer's output as tensors (``input_ids``, ``attention_mask``, …), each (1, n_pieces).
    """

    text: str
    pieces: list[str]
    input_ids: list[int]
    mask_positions: list[int]
    word_indices: list[int | None]
    encoding: dict[str, torch.Tensor] = field(repr=False)


@dataclass(frozen=True)
class MaskLayers:
    """One mask, seen through the MLM head at every layer.

    Attributes:
        mask_index, position, word_index: as in MaskPrediction.
        tokens: top-k tokens per layer, (n_layers + 1) lists of k.
        probabilities: float32 (n_layers + 1, k), row ℓ = top-k probabilities at layer ℓ.
        final_token: the model's final top-1 token (last layer's first candidate).
        final_rank: int (n_layers + 1,), rank of ``final_token`` at each layer (1 = top).
        final_probability: float32 (n_layers + 1,), its probability at each layer.
    """

    mask_index: int
    position: int
    word_index: int | None
    tokens: list[list[str]]
    probabilities: np.ndarray
    final_token: str
    final_rank: np.ndarray
    final_probability: np.ndarray


@dataclass(frozen=True)
class LayerPredictions:
    """Layer-wise predictions for every mask of one input.

    Attributes:
        model: the encoder's name.
        layer_names: (n_layers + 1,) names; 0 is the embedding layer.
        pieces: the model's pieces for the input.
        masks: one MaskLayers per mask, in reading order.
    """

    model: str
    layer_names: tuple[str, ...]
    pieces: list[str]
    masks: list[MaskLayers]

    @property
    def n_layers(self) -> int:
        """Number of rows per mask (contextual layers + 1)."""
        return len(self.layer_names)


# -- input -----------------------------------------------------------------------------


def count_masks(text: str) -> int:
    """How many masks (``[MASK]``, ``[mask]``, ``<mask>``…) the user typed."""
    return len(MASK_RE.findall(text))


def check_text(text: str, max_masks: int = DEFAULT_MAX_MASKS) -> int:
    """Validate a fill-mask text without a model; returns its number of masks.

    Raises:
        EmptyInputError: empty or whitespace-only text.
        NoMaskError: no mask in the text (this includes punctuation-only text like "?!.").
        TooManyMasksError: more than ``max_masks`` masks.
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a string, not {type(text).__name__}")
    text = _CONTROL_RE.sub(" ", text)
    if not text.strip():
        raise EmptyInputError(
            "The text is empty. Type a sentence with [MASK] where a word is missing, "
            f"e.g. “{EXAMPLE}”"
        )
    n = count_masks(text)
    if n == 0:
        raise NoMaskError(
            "There is no [MASK] in the text. Put [MASK] where the model should guess a word, "
            "e.g. “The [MASK] sat on the mat.”"
        )
    if n > max_masks:
        raise TooManyMasksError(
            f"The text has {n} masks; at most {max_masks} are allowed at once. Every mask "
            "hides context from the others, so remove some (or fill them in) and try again."
        )
    return n


def _mask_word_indices(text: str) -> list[int | None]:
    """Word index of each mask, or None when it is glued to letters/digits ("un[MASK]able")."""
    out: list[int | None] = []
    for k, m in enumerate(_WORD_OR_MASK_RE.finditer(text)):
        if m.group(1) is None:
            continue
        before = text[m.start() - 1] if m.start() > 0 else " "
        after = text[m.end()] if m.end() < len(text) else " "
        glued = bool(re.match(r"\w", before)) or bool(re.match(r"\w", after))
        out.append(None if glued else k)
    return out


def _mlm_of(encoder: Any) -> torch.nn.Module:
    """The encoder's ``…ForMaskedLM`` model, or NoMLMHeadError saying what to pick instead."""
    mlm = getattr(encoder, "mlm", None)
    if mlm is None or getattr(encoder, "tokenizer", None) is None:
        name = getattr(getattr(encoder, "info", None), "name", type(encoder).__name__)
        raise NoMLMHeadError(
            f"{name} has no masked-language-model head, so it cannot fill masks. "
            "Pick a model with one (e.g. minilm-l6-mlm, bert-base-uncased)."
        )
    return mlm


def prepare(encoder: Any, text: str, max_masks: int = DEFAULT_MAX_MASKS) -> MaskedInput:
    """Tokenise ``text`` for ``encoder``'s MLM, with every user mask as the model's mask token.

    Raises:
        NoMLMHeadError: the encoder has no MLM head (or its tokenizer has no mask token).
        EmptyInputError, NoMaskError, TooManyMasksError: see :func:`check_text`.
        InputTooLongError: more pieces than the model takes (``encoder.max_pieces``).
    """
    _mlm_of(encoder)
    n_masks = check_text(text, max_masks)
    tokenizer = encoder.tokenizer
    mask_token = tokenizer.mask_token
    if not mask_token or tokenizer.mask_token_id is None:
        raise NoMLMHeadError(f"The tokenizer of {encoder.info.name} has no mask token.")
    clean = _CONTROL_RE.sub(" ", text)
    word_indices = _mask_word_indices(clean)
    no_prefix = _no_prefix_backend(tokenizer)
    if no_prefix is None:  # WordPiece & co: the tokenizer takes the text as it is
        fed = _MASK_WITH_SPACE_RE.sub(lambda _: mask_token, clean).strip()
        # No truncation: an over-long text is an error the user should see, not a silent cut.
        enc = tokenizer(fed, return_tensors="pt", truncation=False)
        ids = enc["input_ids"][0].tolist()
        encoding = {k: enc[k] for k in _FORWARD_KEYS if k in enc}
    else:
        # The leading space the tokenizer would add, given once to the whole text; a mask
        # at the very start then swallows it like any other.
        fed = _MASK_WITH_SPACE_RE.sub(lambda _: mask_token, " " + clean.strip())
        out = no_prefix.encode(fed)
        ids = list(out.ids)
        encoding = {
            "input_ids": torch.tensor([ids]),
            "attention_mask": torch.tensor([list(out.attention_mask)]),
        }
        if "token_type_ids" in tokenizer.model_input_names:
            encoding["token_type_ids"] = torch.tensor([list(out.type_ids)])
    limit = getattr(encoder, "max_pieces", None)
    if limit is not None and len(ids) > limit:
        raise InputTooLongError(len(ids), limit)
    positions = [i for i, t in enumerate(ids) if t == tokenizer.mask_token_id]
    if len(positions) != n_masks:  # would mean the tokenizer split or merged a mask token
        raise NoMLMHeadError(
            f"{encoder.info.name}'s tokenizer turned {n_masks} masks into {len(positions)}; "
            "fill-mask cannot line them up."
        )
    return MaskedInput(
        text=fed,
        pieces=tokenizer.convert_ids_to_tokens(ids),
        input_ids=ids,
        mask_positions=positions,
        word_indices=word_indices,
        encoding=encoding,
    )


_no_prefix_cache: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()
_NOT_NEEDED = object()
_no_prefix_lock = threading.Lock()


def _no_prefix_backend(tokenizer: Any) -> Any | None:
    """A copy of ``tokenizer``'s backend that adds no prefix space, or None if it never does.

    Byte-level BPE loaded with ``add_prefix_space=True`` (as the registry loads RoBERTa, so
    that the first word is "Ġword" like all others) and SentencePiece with
    ``prepend_scheme="always"`` add that space to every stretch of text between special
    tokens, so "the <mask>." would read "." as " ." (a different piece). The copy adds none;
    :func:`prepare` adds the one leading space itself. The shared tokenizer is not touched
    (pages share one encoder across sessions). Copies are made once per tokenizer.
    """
    with _no_prefix_lock:
        cached = _no_prefix_cache.get(tokenizer)
        if cached is None:
            cached = _make_no_prefix_backend(tokenizer) or _NOT_NEEDED
            _no_prefix_cache[tokenizer] = cached
    return None if cached is _NOT_NEEDED else cached


def _make_no_prefix_backend(tokenizer: Any) -> Any | None:
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is None:
        return None
    spec = json.loads(backend.to_str())
    changed = False

    def fix(node: Any) -> None:
        nonlocal changed
        if isinstance(node, list):
            for item in node:
                fix(item)
        elif isinstance(node, dict):
            if node.get("type") == "ByteLevel" and node.get("add_prefix_space"):
                node["add_prefix_space"] = False
                changed = True
            if node.get("type") == "Metaspace" and node.get("prepend_scheme") == "always":
                node["prepend_scheme"] = "never"
                changed = True
            for value in node.values():
                fix(value)

    fix(spec.get("pre_tokenizer"))
    if not changed:
        return None
    from tokenizers import Tokenizer

    copy = Tokenizer.from_str(json.dumps(spec))
    copy.no_truncation()
    copy.no_padding()
    return copy


# -- the MLM head ----------------------------------------------------------------------


def mlm_head_logits(mlm_model: torch.nn.Module, hidden: torch.Tensor) -> torch.Tensor:
    """Apply a ``…ForMaskedLM`` model's head alone to hidden states.

    Args:
        mlm_model: BertForMaskedLM (``cls``), RobertaForMaskedLM and its relatives
            (``lm_head``), DistilBertForMaskedLM (``vocab_transform`` → activation →
            ``vocab_layer_norm`` → ``vocab_projector``), ElectraForMaskedLM
            (``generator_predictions`` → ``generator_lm_head``) or AlbertForMaskedLM
            (``predictions``).
        hidden: (..., dim) hidden states of the model's base encoder.

    Returns:
        (..., vocab_size) logits, what the model's forward would give for the same states.

    Raises:
        NoMLMHeadError: an architecture whose head this adapter does not know.
    """
    m = mlm_model
    if hasattr(m, "vocab_projector"):  # DistilBERT: the head is spread over four attributes
        x = m.vocab_layer_norm(m.activation(m.vocab_transform(hidden)))
        return m.vocab_projector(x)
    if hasattr(m, "generator_lm_head"):  # ELECTRA generator
        return m.generator_lm_head(m.generator_predictions(hidden))
    for name in ("cls", "lm_head", "predictions"):  # BERT; RoBERTa family; ALBERT
        head = getattr(m, name, None)
        if isinstance(head, torch.nn.Module):
            return head(hidden)
    raise NoMLMHeadError(
        f"Layer-wise predictions do not know where the MLM head of {type(m).__name__} is."
    )


def _forward_inputs(encoder: Any, masked: MaskedInput) -> dict[str, torch.Tensor]:
    return {k: v.to(encoder.device) for k, v in masked.encoding.items()}


def _token_labels(tokenizer: Any, ids: Sequence[int]) -> list[str]:
    """Readable labels for vocabulary ids, with WordPiece's convention for all families.

    WordPiece pieces stay as they are ("cat", "##ing"). Byte-level BPE and SentencePiece mark
    a word *start* instead ("Ġcat", "▁cat"): those become "cat", and pieces without the
    marker (which continue a word) get "##" so that every model's chart reads the same way.
    Ids the tokenizer has no piece for (a model vocabulary padded past the tokenizer's) are
    shown as "<id N>".
    """
    pieces = tokenizer.convert_ids_to_tokens(list(ids))
    special = set(tokenizer.all_special_tokens)
    backend = getattr(tokenizer, "backend_tokenizer", None)
    wordpiece = backend is not None and type(backend.model).__name__ == "WordPiece"
    labels = []
    for i, piece in zip(ids, pieces, strict=True):
        if piece is None:  # embedding rows past the tokenizer's vocabulary (padded vocabularies)
            labels.append(f"<id {i}>")
        elif wordpiece or piece in special:
            labels.append(piece)
        elif piece.startswith(("Ġ", "▁")):
            labels.append(tokenizer.convert_tokens_to_string([piece]).strip() or piece)
        else:
            labels.append("##" + tokenizer.convert_tokens_to_string([piece]))
    return labels


# -- predictions -----------------------------------------------------------------------


@torch.inference_mode()
def fill_mask(
    encoder: Any, text: str, top_k: int = 10, max_masks: int = DEFAULT_MAX_MASKS
) -> list[MaskPrediction]:
    """Top-k guesses at every mask in ``text``, all masks masked in one forward pass.

    Args:
        encoder: a TransformersEncoder whose ``mlm`` is a ``…ForMaskedLM`` model.
        text: raw text with one to ``max_masks`` ``[MASK]`` (any case, or ``<mask>``).
        top_k: candidates per mask (1 … vocabulary size).
        max_masks: the most masks allowed.

    Returns:
        One MaskPrediction per mask, in reading order.

    Raises:
        NoMLMHeadError, EmptyInputError, NoMaskError, TooManyMasksError, InputTooLongError.
    """
    mlm = _mlm_of(encoder)
    masked = prepare(encoder, text, max_masks)
    logits = mlm(**_forward_inputs(encoder, masked)).logits[0]  # (n_pieces, vocab)
    return _predictions(encoder, masked, logits[masked.mask_positions], top_k)


def _check_top_k(top_k: int, vocab: int) -> int:
    if not 1 <= int(top_k) <= vocab:
        raise InvalidArgumentError(f"top_k must be between 1 and {vocab}, not {top_k}.")
    return int(top_k)


def _predictions(
    encoder: Any, masked: MaskedInput, mask_logits: torch.Tensor, top_k: int
) -> list[MaskPrediction]:
    """Top-k per mask from (n_masks, vocab) logits."""
    top_k = _check_top_k(top_k, mask_logits.shape[-1])
    probs = torch.softmax(mask_logits.float(), dim=-1)
    top_p, top_i = probs.topk(top_k, dim=-1)  # sorted, most probable first
    out = []
    for m, (pos, word) in enumerate(zip(masked.mask_positions, masked.word_indices, strict=True)):
        ids = top_i[m].tolist()
        labels = _token_labels(encoder.tokenizer, ids)
        out.append(
            MaskPrediction(
                mask_index=m,
                position=pos,
                word_index=word,
                candidates=[
                    Candidate(t, float(p)) for t, p in zip(labels, top_p[m].tolist(), strict=True)
                ],
                token_ids=ids,
            )
        )
    return out


@torch.inference_mode()
def fill_mask_by_layer(
    encoder: Any, text: str, top_k: int = 5, max_masks: int = DEFAULT_MAX_MASKS
) -> LayerPredictions:
    """The MLM head applied to every layer's hidden state at each mask ("logit lens").

    One forward pass with ``output_hidden_states``; the head maps each layer's
    (n_masks, dim) states to (n_masks, vocab) logits. Layer 0 is the embedding layer (the
    head there mostly echoes the mask token's own embedding). The last row uses the model's
    own logits from the same pass, so it equals :func:`fill_mask`'s output exactly; the
    head applied to the last hidden state is checked against them, which catches an
    architecture whose head the adapter gets wrong.

    Returns:
        LayerPredictions with, per mask, the top-k per layer and the rank/probability of
        the final top-1 token per layer.

    Raises:
        as :func:`fill_mask`; NoMLMHeadError also when the head cannot be applied per layer.
    """
    mlm = _mlm_of(encoder)
    masked = prepare(encoder, text, max_masks)
    out = mlm(**_forward_inputs(encoder, masked), output_hidden_states=True)
    pos = masked.mask_positions
    hidden = torch.stack([h[0, pos] for h in out.hidden_states])  # (L+1, n_masks, dim)
    final = out.logits[0, pos].float()  # (n_masks, vocab)
    try:
        logits = mlm_head_logits(mlm, hidden).float()  # (L+1, n_masks, vocab)
    except (TypeError, RuntimeError, AttributeError) as exc:
        raise NoMLMHeadError(
            f"The MLM head of {type(mlm).__name__} cannot be applied layer by layer: {exc}"
        ) from exc
    if not torch.allclose(logits[-1], final, rtol=1e-3, atol=1e-3):
        raise NoMLMHeadError(
            f"Layer-wise predictions are not available for {type(mlm).__name__}: its head "
            "applied to the last hidden state does not reproduce the model's own output."
        )
    logits[-1] = final
    probs = torch.softmax(logits, dim=-1)  # (L+1, n_masks, vocab)
    top_p, top_i = probs.topk(_check_top_k(top_k, probs.shape[-1]), dim=-1)  # (L+1, n_masks, k)
    final_ids = top_i[-1, :, 0]  # (n_masks,)
    final_p = probs.gather(-1, final_ids[None, :, None].expand(probs.shape[0], -1, 1))[..., 0]
    # Rank = 1 + how many tokens the layer finds strictly more probable than the final answer.
    final_rank = (probs > final_p[..., None]).sum(-1) + 1  # (L+1, n_masks)
    masks = []
    for m, (p, word) in enumerate(zip(pos, masked.word_indices, strict=True)):
        tokens = [
            _token_labels(encoder.tokenizer, top_i[layer, m].tolist())
            for layer in range(probs.shape[0])
        ]
        masks.append(
            MaskLayers(
                mask_index=m,
                position=p,
                word_index=word,
                tokens=tokens,
                probabilities=top_p[:, m].cpu().numpy().astype(np.float32),
                final_token=tokens[-1][0],
                final_rank=final_rank[:, m].cpu().numpy().astype(np.int64),
                final_probability=final_p[:, m].cpu().numpy().astype(np.float32),
            )
        )
    n_rows = len(out.hidden_states)
    names = tuple(getattr(encoder.info, "layer_names", ()) or ())
    if len(names) != n_rows:
        names = ("embeddings",) + tuple(f"layer {i}" for i in range(1, n_rows))
    return LayerPredictions(
        model=encoder.info.name, layer_names=names, pieces=masked.pieces, masks=masks
    )
