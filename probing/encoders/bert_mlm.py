"""The masked-LM side of BERT-family encoders: tokenising text around masks, the MLM head
applied to any layer, and readable labels for vocabulary pieces.

Helpers over a `transformers` tokenizer and ``…ForMaskedLM`` model; the encoder class that
uses them is :class:`probing.encoders.bert.TransformersMaskedLM`.
"""

from __future__ import annotations

import json
import threading
import weakref
from collections.abc import Sequence
from typing import Any

import torch
from tokenizers import Tokenizer

from probing.encoders.base import MaskedPieces
from probing.errors import InputTooLongError, NoMLMHeadError

_FORWARD_KEYS = ("input_ids", "attention_mask", "token_type_ids")


def tokenize_masked(
    tokenizer: Any, parts: Sequence[str], max_pieces: int | None, name: str
) -> MaskedPieces:
    """Join ``parts`` (n_masks + 1 texts between masks) with the tokenizer's mask token.

    ``parts`` come from splitting ``" " + text.strip()`` at each mask together with the
    whitespace before it (see :mod:`probing.analyses.fill_mask`), so a mask stands for a
    whole space-led piece ("Ġcat", "▁cat"), never a lone "Ġ" and a mask.

    Raises:
        NoMLMHeadError: the tokenizer has no mask token, or it split/merged a mask token.
        InputTooLongError: more pieces than ``max_pieces``.
    """
    mask_token = tokenizer.mask_token
    if not mask_token or tokenizer.mask_token_id is None:
        raise NoMLMHeadError(f"The tokenizer of {name} has no mask token.")
    n_masks = len(parts) - 1
    no_prefix = no_prefix_backend(tokenizer)
    if no_prefix is None:  # WordPiece & co: the tokenizer takes the text as it is
        fed = mask_token.join(parts).strip()
        # No truncation: an over-long text is an error the user should see, not a silent cut.
        enc = tokenizer(fed, return_tensors="pt", truncation=False)
        ids = enc["input_ids"][0].tolist()
        inputs = {k: enc[k] for k in _FORWARD_KEYS if k in enc}
    else:
        # The leading space the tokenizer would add is already in parts[0]; a mask at the
        # very start swallowed it like any other.
        fed = mask_token.join(parts)
        out = no_prefix.encode(fed)
        ids = list(out.ids)
        inputs = {
            "input_ids": torch.tensor([ids]),
            "attention_mask": torch.tensor([list(out.attention_mask)]),
        }
        if "token_type_ids" in tokenizer.model_input_names:
            inputs["token_type_ids"] = torch.tensor([list(out.type_ids)])
    if max_pieces is not None and len(ids) > max_pieces:
        raise InputTooLongError(len(ids), max_pieces)
    positions = [i for i, t in enumerate(ids) if t == tokenizer.mask_token_id]
    if len(positions) != n_masks:  # would mean the tokenizer split or merged a mask token
        raise NoMLMHeadError(
            f"{name}'s tokenizer turned {n_masks} masks into {len(positions)}; "
            "fill-mask cannot line them up."
        )
    return MaskedPieces(
        text=fed,
        pieces=tokenizer.convert_ids_to_tokens(ids),
        input_ids=ids,
        mask_positions=positions,
        inputs=inputs,
    )


_no_prefix_cache: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()
_NOT_NEEDED = object()
_no_prefix_lock = threading.Lock()


def no_prefix_backend(tokenizer: Any) -> Tokenizer | None:
    """A copy of ``tokenizer``'s backend that adds no prefix space, or None if it never does.

    Byte-level BPE loaded with ``add_prefix_space=True`` (as the registry loads RoBERTa, so
    that the first word is "Ġword" like all others) and SentencePiece with
    ``prepend_scheme="always"`` add that space to every stretch of text between special
    tokens, so "the <mask>." would read "." as " ." (a different piece). The copy adds none;
    the caller adds the one leading space itself. The shared tokenizer is not touched
    (pages share one encoder across sessions). Copies are made once per tokenizer.
    """
    with _no_prefix_lock:
        cached = _no_prefix_cache.get(tokenizer)
        if cached is None:
            cached = _make_no_prefix_backend(tokenizer) or _NOT_NEEDED
            _no_prefix_cache[tokenizer] = cached
    return None if cached is _NOT_NEEDED else cached


def _make_no_prefix_backend(tokenizer: Any) -> Tokenizer | None:
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
    copy = Tokenizer.from_str(json.dumps(spec))
    copy.no_truncation()
    copy.no_padding()
    return copy


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


@torch.inference_mode()
def logits_by_layer(
    mlm: torch.nn.Module, hidden: torch.Tensor, final: torch.Tensor
) -> torch.Tensor:
    """The head applied to every layer's states: float32 (L+1, n, vocab).

    ``hidden`` (L+1, n, dim) and ``final`` (n, vocab) come from one forward pass with
    ``output_hidden_states`` (the states and the model's own logits at the same positions).
    The last row is the model's own logits; the head applied to the last hidden state is
    checked against them, which catches an architecture whose head the adapter gets wrong.

    Raises:
        NoMLMHeadError: the head cannot be applied per layer, or does not reproduce the
            model's output.
    """
    try:
        logits = mlm_head_logits(mlm, hidden).float()  # (L+1, n, vocab)
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
    return logits


def piece_convention(tokenizer: Any) -> str:
    """How ``tokenizer`` marks word boundaries in its pieces: ``"wordpiece"`` (``##ing``
    continues a word), ``"bpe"`` (byte-level BPE: ``Ġcat`` starts a word, the marker being
    its leading space), ``"sentencepiece"`` (``▁cat`` starts a word), or ``""`` when the
    backend is not one of these (its pieces are shown as they are)."""
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is None:
        return ""
    if type(backend.model).__name__ == "WordPiece":
        return "wordpiece"
    spec = json.loads(backend.to_str())
    splitting = json.dumps([spec.get("pre_tokenizer"), spec.get("decoder")])
    if '"Metaspace"' in splitting:
        return "sentencepiece"
    if '"ByteLevel"' in splitting:
        return "bpe"
    return ""


def token_labels(tokenizer: Any, ids: Sequence[int]) -> list[str]:
    """Readable labels for vocabulary ids, each in its tokenizer's own convention
    (:func:`piece_convention`).

    WordPiece pieces stay as they are ("cat", "##ing": ``##`` continues a word).
    SentencePiece pieces too ("▁cat" starts a word, "ing" continues one). Byte-level BPE
    pieces keep their word-start marker but have their bytes decoded ("Ġcafé", not
    "ĠcafÃ©"; "ing" continues a word); a piece holding only part of a character's bytes
    stays as the tokenizer writes it. ``##`` is never added to a BPE or SentencePiece
    piece. Ids the tokenizer has no piece for (a model vocabulary padded past the
    tokenizer's) are shown as "<id N>".
    """
    pieces = tokenizer.convert_ids_to_tokens(list(ids))
    special = set(tokenizer.all_special_tokens)
    bpe = piece_convention(tokenizer) == "bpe"
    labels = []
    for i, piece in zip(ids, pieces, strict=True):
        if piece is None:  # embedding rows past the tokenizer's vocabulary (padded vocabularies)
            labels.append(f"<id {i}>")
        elif not bpe or piece in special:
            labels.append(piece)
        else:
            marker = "Ġ" if piece.startswith("Ġ") else ""
            text = tokenizer.convert_tokens_to_string([piece])
            text = text[1:] if marker and text.startswith(" ") else text
            # A piece holding part of a character's bytes decodes to U+FFFD: shown as it is.
            readable = text.strip() and "\ufffd" not in text
            labels.append(marker + text if readable else piece)
    return labels
