"""Where a `transformers` encoder keeps the parts that analyses hook: one adapter per family.

This is the only place that knows module names. Hidden state ``l`` (0: the embeddings'
output, ``l``: block ``l``'s output) is the output of ``layers[l]``; a block's heads are
concatenated in the input of its attention output projection (where Michel et al. 2019 put
the head gate ξ_h), and its value projection's output holds every head's value vectors
(Kobayashi et al. 2020's norms).

Families: BERT, RoBERTa / XLM-R / CamemBERT, ELECTRA, MiniLM (all BERT-laid),
DeBERTa-v2/v3 (same layout; its value projection is ``value_proj`` — the disentangled
position terms change the attention weights α, not the value path, so ``Σ_j α_ij f(x_j)``
and the norms hold as for BERT), DistilBERT, MPNet. ALBERT is refused: its one block is
applied at every layer, so a layer has no module of its own to hook.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass

import torch

from probing.encoders import call_hooks
from probing.errors import UnsupportedArchitectureError


@dataclass(frozen=True)
class ModelParts:
    """The hook points of one bare encoder.

    Attributes:
        architecture: the model class's name (for messages).
        layers: modules whose outputs are hidden states 0 … L (embeddings, then blocks).
        head_inputs: per block, the attention output projection (its input: the heads'
            concatenated outputs (B, T, H·dh)).
        values: per block, the value projection (output (B, T, H·dh)).
        n_heads: heads per block. head_dim: dims per head.
    """

    architecture: str
    layers: list[torch.nn.Module]
    head_inputs: list[torch.nn.Linear]
    values: list[torch.nn.Linear]
    n_heads: int
    head_dim: int

    @property
    def n_layers(self) -> int:
        return len(self.layers) - 1

    def hookable(self) -> list[torch.nn.Module]:
        """Every module an analysis may hook."""
        return [*self.layers, *self.head_inputs, *self.values]


Adapter = Callable[[torch.nn.Module], "tuple[list, list, list] | None"]


def _bert_laid(model: torch.nn.Module) -> tuple[list, list, list] | None:
    blocks = getattr(getattr(model, "encoder", None), "layer", None)
    if blocks is None or not all(hasattr(b, "attention") for b in blocks):
        return None
    # ELECTRA with embedding_size != hidden_size projects the embeddings up before block 1:
    # hidden state 0 is the projection's output.
    embeddings = getattr(model, "embeddings_project", None) or model.embeddings
    att = [b.attention for b in blocks]
    if all(hasattr(a, "self") and hasattr(a, "output") for a in att):
        values = [
            getattr(a.self, "value", None) or getattr(a.self, "value_proj", None) for a in att
        ]
        if all(v is not None for v in values):  # BERT, RoBERTa, ELECTRA, DeBERTa-v2
            return [embeddings, *blocks], [a.output.dense for a in att], values
    if all(hasattr(a, "attn") and hasattr(a.attn, "o") for a in att):  # MPNet
        return [embeddings, *blocks], [a.attn.o for a in att], [a.attn.v for a in att]
    return None


def _distilbert(model: torch.nn.Module) -> tuple[list, list, list] | None:
    blocks = getattr(getattr(model, "transformer", None), "layer", None)
    if blocks is None or not all(hasattr(b.attention, "out_lin") for b in blocks):
        return None
    att = [b.attention for b in blocks]
    return [model.embeddings, *blocks], [a.out_lin for a in att], [a.v_lin for a in att]


_ADAPTERS: tuple[Adapter, ...] = (_bert_laid, _distilbert)


def _refusal(model: torch.nn.Module) -> str:
    name = type(model).__name__
    if getattr(getattr(model, "encoder", None), "albert_layer_groups", None) is not None:
        return (
            f"{name} (ALBERT) applies one shared block at every layer, so no layer has a "
            "module of its own to hook: per-layer hooks, head gates and value norms are not "
            "available for it. Hidden states, attention and fill-mask still work."
        )
    return (
        f"ContextLens does not know where {name} keeps its layers and attention parts "
        "(known: BERT, RoBERTa, XLM-R, ELECTRA, DeBERTa-v2/v3, DistilBERT, MPNet). Hidden "
        "states, attention and fill-mask still work."
    )


def model_parts(model: torch.nn.Module) -> ModelParts:
    """The hook points of the bare encoder ``model`` (``BertModel``, ``MPNetModel``…), with
    :mod:`call_hooks` dispatchers installed on each.

    Raises:
        UnsupportedArchitectureError: an architecture with no adapter here (ALBERT), naming
            it and what is missing.
    """
    cached = model.__dict__.get("_contextlens_parts")
    if cached is not None:
        return cached
    found = next((f for f in (a(model) for a in _ADAPTERS) if f is not None), None)
    if found is None:
        raise UnsupportedArchitectureError(_refusal(model))
    layers, heads, values = found
    cfg = model.config
    n_heads = int(getattr(cfg, "num_attention_heads", None) or getattr(cfg, "n_heads", 0))
    dim = int(getattr(cfg, "hidden_size", None) or getattr(cfg, "dim", 0))
    parts = ModelParts(type(model).__name__, layers, heads, values, n_heads, dim // max(n_heads, 1))
    call_hooks.install_all(parts.hookable())
    model.__dict__["_contextlens_parts"] = parts
    return parts


def install_dispatchers(model: torch.nn.Module) -> None:
    """Install the call-local hook dispatchers on ``model``'s parts now (at load time, before
    threads share it); nothing for an architecture without an adapter."""
    with contextlib.suppress(UnsupportedArchitectureError):
        model_parts(model)
