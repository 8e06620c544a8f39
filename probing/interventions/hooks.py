"""One tensor replaced in a forward pass: a layer's hidden states, or attention heads' outputs.

Every intervention here (erasure, patching, head ablation) is a forward hook on the model the
encoder already holds, never a copy of it: later layers are recomputed by the model itself.
Only BERT-family masked LMs (:class:`~probing.encoders.bert.TransformersMaskedLM`) have the
parts these hooks need; ELMo's layers are recomputed by :mod:`probing.interventions.recompute`
and its LM (when its folder ships a softmax) is scored by :mod:`probing.interventions.bilm`.

Layer numbers are the Encoding's: 0 is the embedding output, ``l`` the output of block
``l``. A head's output is its slice of the attention context, the input of the attention's
output projection (``attention.output.dense``), which is where Michel et al. (2019) put the
mask ξ_h.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import torch

from probing.errors import LayerOutOfRangeError, NoLMHeadError

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


def require_mlm(encoder, what: str = "This intervention"):  # noqa: ANN001, ANN201
    """The encoder itself when it is a BERT-family masked LM, else NoLMHeadError."""
    from probing.encoders.bert import TransformersMaskedLM

    if not isinstance(encoder, TransformersMaskedLM):
        if getattr(encoder, "softmax", None) is not None:
            why = f"{encoder.name} has a bi-LM softmax (next-word LMs), not a masked-LM head"
        else:
            why = f"{encoder.name} has none here"
        raise NoLMHeadError(f"{what} needs a masked-LM head, and {why}. {_heads_text()}")
    return encoder


def require_bilm(encoder, what: str = "This intervention"):  # noqa: ANN001, ANN201
    """``encoder``'s bi-LM softmax (:class:`probing.encoders.elmo_softmax.ElmoSoftmax`) when it
    is an ELMo whose folder ships one, else NoLMHeadError."""
    from probing.encoders.elmo import ElmoEncoder

    softmax = getattr(encoder, "softmax", None) if isinstance(encoder, ElmoEncoder) else None
    if softmax is None:
        why = (
            f"{encoder.name}'s folder has no softmax.safetensors (an encoder only)"
            if isinstance(encoder, ElmoEncoder)
            else f"{encoder.name} is not an ELMo"
        )
        raise NoLMHeadError(f"{what} needs ELMo's bi-LM softmax, and {why}. {_heads_text()}")
    return softmax


@dataclass(frozen=True)
class ModelParts:
    """Where to hook a BERT-family model.

    Attributes:
        layers: the modules whose outputs are hidden states 0 … L (embeddings, then blocks).
        head_inputs: per block, the module whose input is the heads' concatenated outputs.
        n_heads: heads per block. head_dim: dims per head.
    """

    layers: list[torch.nn.Module]
    head_inputs: list[torch.nn.Module]
    n_heads: int
    head_dim: int

    @property
    def n_layers(self) -> int:
        return len(self.layers) - 1


def model_parts(encoder) -> ModelParts:  # noqa: ANN001 - TransformersMaskedLM
    """The hook points of ``encoder``'s base model (BERT, RoBERTa, ELECTRA, DistilBERT).

    Raises:
        NoLMHeadError: not a masked LM, or an architecture whose blocks are not laid out as
            these (ALBERT shares one block across layers, so a layer cannot be hooked alone).
    """
    require_mlm(encoder)
    base = encoder.model
    cfg = base.config
    blocks = getattr(getattr(base, "encoder", None), "layer", None)
    if blocks is not None:  # BERT, RoBERTa, ELECTRA, MiniLM
        heads = [b.attention.output.dense for b in blocks]
        emb = base.embeddings
    elif getattr(getattr(base, "transformer", None), "layer", None) is not None:  # DistilBERT
        blocks = base.transformer.layer
        heads = [b.attention.out_lin for b in blocks]
        emb = base.embeddings
    else:
        raise NoLMHeadError(f"Interventions do not know the layers of {type(base).__name__}.")
    n_heads = int(getattr(cfg, "num_attention_heads", getattr(cfg, "n_heads", 0)))
    dim = int(getattr(cfg, "hidden_size", getattr(cfg, "dim", 0)))
    return ModelParts([emb, *blocks], heads, n_heads, dim // max(n_heads, 1))


def check_layer(layer: int, n_layers: int) -> int:
    """``layer`` when it is 0 … ``n_layers``; LayerOutOfRangeError otherwise."""
    if not 0 <= int(layer) <= n_layers:
        raise LayerOutOfRangeError(
            f"Layer {layer} is out of range: this model has layers 0 (input) to {n_layers}."
        )
    return int(layer)


def _replace_output(out, fn: HiddenFn):  # noqa: ANN001, ANN202 - tensor or tuple
    if isinstance(out, tuple):
        return (fn(out[0]), *out[1:])
    return fn(out)


@contextlib.contextmanager
def replaced_hidden(parts: ModelParts, layer: int, fn: HiddenFn) -> Iterator[None]:
    """Within the block, hidden state ``layer`` is ``fn(h)`` wherever the model reads it."""
    check_layer(layer, parts.n_layers)
    handle = parts.layers[layer].register_forward_hook(lambda _m, _a, out: _replace_output(out, fn))
    try:
        yield
    finally:
        handle.remove()


@contextlib.contextmanager
def recorded_hidden(parts: ModelParts) -> Iterator[list[torch.Tensor]]:
    """Collects hidden states 0 … L (each (B, T, D)) of the passes run within the block."""
    store: list[torch.Tensor] = []
    handles = [
        m.register_forward_hook(
            lambda _m, _a, out: store.append((out[0] if isinstance(out, tuple) else out).detach())
        )
        for m in parts.layers
    ]
    try:
        yield store
    finally:
        for h in handles:
            h.remove()


HeadFn = Callable[[int, torch.Tensor], torch.Tensor]  # (block, (B, T, H, dh)) -> same


@contextlib.contextmanager
def head_outputs(parts: ModelParts, fn: HeadFn, blocks: list[int] | None = None) -> Iterator[None]:
    """Within the block, block ``b``'s head outputs (B, T, H, dh) become ``fn(b, heads)``
    before the attention's output projection (blocks numbered from 0)."""
    handles = []
    for b, module in enumerate(parts.head_inputs):
        if blocks is not None and b not in blocks:
            continue

        def pre(_m, args, b=b):  # noqa: ANN001, ANN202
            x = args[0]
            heads = x.reshape(*x.shape[:-1], parts.n_heads, parts.head_dim)
            return (fn(b, heads).reshape(x.shape), *args[1:])

        handles.append(module.register_forward_pre_hook(pre))
    try:
        yield
    finally:
        for h in handles:
            h.remove()


@contextlib.contextmanager
def head_mask(parts: ModelParts, mask: torch.Tensor) -> Iterator[None]:
    """Michel et al.'s ξ: head ``h`` of block ``b`` is multiplied by ``mask[b, h]`` (L, H);
    a mask that requires grad gives the importance ``|∂L/∂ξ|`` by backprop."""
    with head_outputs(parts, lambda b, heads: heads * mask[b].to(heads.dtype)[:, None]):
        yield


def mlm_logits(
    encoder,  # noqa: ANN001 - TransformersMaskedLM
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
