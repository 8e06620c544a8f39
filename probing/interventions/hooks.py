"""One tensor replaced in a forward pass: a layer's hidden states, or attention heads' outputs.

Every intervention here (erasure, patching, head ablation) is a forward hook on the model the
encoder already holds, never a copy of it: later layers are recomputed by the model itself.
The hooks belong to the call (:mod:`probing.encoders.call_hooks`): they act on the calling
thread's forward passes only, so other sessions running the same shared model at the same
moment see none of them.
Every encoder whose info says ``has_layer_hooks`` gives its layer surface
(:meth:`Encoder.layer_parts`): BERT-family models a :mod:`~probing.encoders.surface` adapter,
ELMo :mod:`~probing.encoders.elmo_surface` (its LSTM layers re-run from the replaced one, its
softmax read as forward and backward next-word LMs, ``info.lm_directions``). The hooks below
(:func:`replaced_hidden`, :func:`recorded_hidden`) take either.

Layer numbers are the Encoding's: 0 is the embedding output, ``l`` the output of block
``l``. A head's output is its slice of the attention context, the input of the attention's
output projection (``attention.output.dense``), which is where Michel et al. (2019) put the
mask ξ_h.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

import torch

from probing.encoders import surface
from probing.encoders.surface import ModelParts
from probing.errors import LayerOutOfRangeError, NoLMHeadError

if TYPE_CHECKING:
    from probing.encoders.base import Encoder
    from probing.encoders.bert import TransformersMaskedLM
    from probing.encoders.elmo_softmax import ElmoSoftmax
    from probing.encoders.elmo_surface import ElmoParts

HiddenFn = Callable[[torch.Tensor], torch.Tensor]  # (B, T, D) -> (B, T, D)


def models_with_lm_head() -> dict[str, list[str]]:
    """Registry models with a language-model head, by kind, for error messages:
    ``"masked LM"`` (BERT-family MLM heads) and ``"bi-LM softmax"`` (ELMo folders that ship
    ``softmax.safetensors``: forward and backward next-word LMs; the published AllenNLP
    ELMo files have none)."""
    from probing.models.registry import ELMO_MINI_DIR, available_models, entry

    masked = []
    for name in available_models(include_downloads=True):
        e = entry(name)
        if e is not None and getattr(e, "has_mlm_head", False):
            masked.append(name)
    from probing.encoders.elmo_softmax import SOFTMAX_FILE

    bilm = ["elmo-mini"] if (ELMO_MINI_DIR / SOFTMAX_FILE).is_file() else []
    return {"masked LM": masked or ["minilm-l6-mlm"], "bi-LM softmax": bilm}


def _heads_text() -> str:
    have = models_with_lm_head()
    bilm = ", ".join(have["bi-LM softmax"]) or "none here (no ELMo folder ships a softmax)"
    return (
        f"Models with a masked-LM head: {', '.join(have['masked LM'])}, or any hub …ForMaskedLM "
        f"checkpoint. Models with a bi-LM softmax (forward/backward next-word LM): {bilm}."
    )


def require_mlm(encoder: Encoder, what: str = "This intervention") -> TransformersMaskedLM:
    """The encoder itself when it has a masked-LM head (``info.lm_kind == "masked"``), else
    NoLMHeadError."""
    if encoder.info.lm_kind != "masked":
        if encoder.info.lm_kind == "bidirectional-lm":
            why = f"{encoder.name} has a bi-LM softmax (next-word LMs), not a masked-LM head"
        else:
            why = f"{encoder.name} has none here"
        raise NoLMHeadError(f"{what} needs a masked-LM head, and {why}. {_heads_text()}")
    return encoder


def require_bilm(encoder: Encoder, what: str = "This intervention") -> ElmoSoftmax:
    """``encoder``'s bi-LM softmax (:class:`probing.encoders.elmo_softmax.ElmoSoftmax`) when it
    is an ELMo whose folder ships one, else NoLMHeadError."""
    info = encoder.info
    if info.lm_kind != "bidirectional-lm":
        why = (
            f"{encoder.name}'s folder has no softmax.safetensors (an encoder only)"
            if info.objective == "bidirectional-lm"
            else f"{encoder.name} is not an ELMo"
        )
        raise NoLMHeadError(f"{what} needs ELMo's bi-LM softmax, and {why}. {_heads_text()}")
    return encoder.softmax


def next_word_parts(encoder: Encoder, what: str = "This intervention") -> ElmoParts:
    """The layer surface of an encoder whose LM is read as next-word LMs
    (``info.lm_directions``: ELMo with its softmax), else NoLMHeadError."""
    require_bilm(encoder, what)
    return encoder.layer_parts()


def model_parts(encoder: TransformersMaskedLM) -> ModelParts:
    """The hook points of ``encoder``'s base model (:mod:`probing.encoders.surface`).

    Raises:
        NoLMHeadError: not a masked LM.
        UnsupportedArchitectureError: an architecture whose parts the surface does not know
            (``info.no_hooks_reason`` says which and why).
    """
    require_mlm(encoder)
    return surface.model_parts(encoder.model)


def check_layer(layer: int, n_layers: int) -> int:
    """``layer`` when it is 0 … ``n_layers``; LayerOutOfRangeError otherwise."""
    if not 0 <= int(layer) <= n_layers:
        raise LayerOutOfRangeError(
            f"Layer {layer} is out of range: this model has layers 0 (input) to {n_layers}."
        )
    return int(layer)


def _replace_output(out: torch.Tensor | tuple, fn: HiddenFn) -> torch.Tensor | tuple:
    if isinstance(out, tuple):
        return (fn(out[0]), *out[1:])
    return fn(out)


@contextlib.contextmanager
def replaced_hidden(parts: ModelParts | ElmoParts, layer: int, fn: HiddenFn) -> Iterator[None]:
    """Within the block, hidden state ``layer`` is ``fn(h)`` wherever the model reads it."""
    check_layer(layer, parts.n_layers)
    with parts.hidden_hook(layer, lambda _m, _a, out: _replace_output(out, fn)):
        yield


@contextlib.contextmanager
def recorded_hidden(parts: ModelParts | ElmoParts) -> Iterator[list[torch.Tensor]]:
    """Collects hidden states 0 … L (each (B, T, D)) of the passes run within the block."""
    store: list[torch.Tensor] = []

    def keep(_m: torch.nn.Module, _a: tuple, out: object) -> None:
        store.append((out[0] if isinstance(out, tuple) else out).detach())

    with contextlib.ExitStack() as stack:
        for layer in range(parts.n_layers + 1):
            stack.enter_context(parts.hidden_hook(layer, keep))
        yield store


HeadFn = Callable[[int, torch.Tensor], torch.Tensor]  # (block, (B, T, H, dh)) -> same


@contextlib.contextmanager
def head_outputs(parts: ModelParts, fn: HeadFn, blocks: list[int] | None = None) -> Iterator[None]:
    """Within the block, block ``b``'s head outputs (B, T, H, dh) become ``fn(b, heads)``
    before the attention's output projection (blocks numbered from 0)."""
    with contextlib.ExitStack() as stack:
        for b in range(parts.n_layers):
            if blocks is not None and b not in blocks:
                continue

            def pre(_m: torch.nn.Module, args: tuple, kwargs: dict, b: int = b) -> tuple:
                x = args[0]
                heads = x.reshape(*x.shape[:-1], parts.n_heads, parts.head_dim)
                return (fn(b, heads).reshape(x.shape), *args[1:]), kwargs

            stack.enter_context(parts.head_input_pre_hook(b, pre))
        yield


@contextlib.contextmanager
def head_mask(parts: ModelParts, mask: torch.Tensor) -> Iterator[None]:
    """Michel et al.'s ξ: head ``h`` of block ``b`` is multiplied by ``mask[b, h]`` (L, H);
    a mask that requires grad gives the importance ``|∂L/∂ξ|`` by backprop."""
    with head_outputs(parts, lambda b, heads: heads * mask[b].to(heads.dtype)[:, None]):
        yield


def mlm_logits(
    encoder: TransformersMaskedLM,
    inputs: dict[str, torch.Tensor],
    rows: torch.Tensor,
    cols: torch.Tensor,
) -> torch.Tensor:
    """The masked LM's logits (n, vocab), float32, at positions (rows[i], cols[i]) of the
    batch: the base model runs on every position, the head only where it is read (the head
    over every position of a 64 x 60 batch is a 470 MB tensor)."""
    from probing.encoders.bert_mlm import mlm_head_logits

    out = encoder.model(**{k: v.to(encoder.device) for k, v in inputs.items()})
    hidden = out.last_hidden_state[rows.to(encoder.device), cols.to(encoder.device)]
    return mlm_head_logits(encoder.mlm, hidden).float()
