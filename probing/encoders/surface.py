"""Where a `transformers` encoder keeps the parts that analyses hook: one adapter per family.

This is the only place that knows module names. Hidden state ``l`` (0: the embeddings'
output, ``l``: block ``l``'s output) is the output of ``layers[l]``; a block's heads are
concatenated in the input of its attention output projection (where Michel et al. 2019 put
the head gate ξ_h), and its value projection's output holds every head's value vectors
(Kobayashi et al. 2020's norms).

Families: BERT, RoBERTa / XLM-R / CamemBERT, ELECTRA, MiniLM (all BERT-laid),
DeBERTa-v2/v3 (same layout; its value projection is ``value_proj`` — the disentangled
position terms change the attention weights α, not the value path, so ``Σ_j α_ij f(x_j)``
and the norms hold as for BERT), DistilBERT, MPNet, and ALBERT.

ALBERT shares one block (per layer group; published checkpoints have one group) across
all its layers: there a *layer* is one application of the shared block, exactly what
``transformers`` reports as that layer's hidden state. Its parts appear once per layer in
the lists below (the same module ``L`` times); a hook on layer ``l`` counts the shared
module's applications within each forward pass and acts on the ``l``-th only
(:meth:`ModelParts.hidden_hook` and its siblings). Groups of several inner layers
(``inner_group_num > 1``, in no published checkpoint) are refused.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
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

    In ALBERT one module stands at several places of a list (its shared block); hook a
    layer's part through :meth:`hidden_hook` and its siblings, never through the module
    itself, so that the hook acts on that layer's application only.
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

    @property
    def shared(self) -> bool:
        """One module serves several layers (ALBERT): hooks count its applications."""
        return len({id(m) for m in self.layers}) < len(self.layers)

    def hookable(self) -> list[torch.nn.Module]:
        """Every module an analysis may hook (each once)."""
        seen: dict[int, torch.nn.Module] = {}
        for m in (*self.layers, *self.head_inputs, *self.values):
            seen.setdefault(id(m), m)
        return list(seen.values())

    # Hooks on one layer's part, for the calling thread and the ``with`` block only
    # (:mod:`call_hooks`). Each returns a context manager.

    def hidden_hook(self, layer: int, fn: call_hooks.PostFn) -> contextlib.AbstractContextManager:
        """``fn`` sees (and may replace) the output holding hidden state ``layer`` (0 … L)."""
        return self._site(self.layers, layer, fn, pre=False)

    def block_pre_hook(self, layer: int, fn: call_hooks.PreFn) -> contextlib.AbstractContextManager:
        """``fn`` sees (and may replace) the arguments of the block whose output is hidden
        state ``layer`` (1 … L)."""
        if layer < 1:
            raise ValueError("layer 0 is the embeddings' output, not a block's")
        return self._site(self.layers, layer, fn, pre=True)

    def head_input_pre_hook(
        self, block: int, fn: call_hooks.PreFn
    ) -> contextlib.AbstractContextManager:
        """``fn`` sees (and may replace) block ``block``'s (0-based) attention output
        projection's arguments: the heads' concatenated outputs (B, T, H·dh) first."""
        return self._site(self.head_inputs, block, fn, pre=True)

    def value_hook(self, block: int, fn: call_hooks.PostFn) -> contextlib.AbstractContextManager:
        """``fn`` sees (and may replace) block ``block``'s value projection output (B, T, H·dh)."""
        return self._site(self.values, block, fn, pre=False)

    def _site(
        self, modules: list[torch.nn.Module], i: int, fn: Callable, *, pre: bool
    ) -> contextlib.AbstractContextManager:
        attach = call_hooks.forward_pre_hook if pre else call_hooks.forward_hook
        module = modules[i]
        if sum(m is module for m in modules) == 1:
            return attach(module, fn)
        # A shared module: act on its nth application within each forward pass. The count
        # restarts when a pass starts (hidden state 0's module runs first, once per pass).
        nth = sum(m is module for m in modules[:i])
        return _counted(attach, module, fn, nth, self.layers[0])


@contextlib.contextmanager
def _counted(
    attach: Callable, module: torch.nn.Module, fn: Callable, nth: int, start: torch.nn.Module
) -> Iterator[None]:
    count = [0]

    def restart(_m: torch.nn.Module, _a: tuple, _k: dict) -> None:
        count[0] = 0

    def on_nth(*args: object) -> object:
        n = count[0]
        count[0] += 1
        return fn(*args) if n == nth else None

    with call_hooks.forward_pre_hook(start, restart), attach(module, on_nth):
        yield


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


def _albert(model: torch.nn.Module) -> tuple[list, list, list] | None:
    encoder = getattr(model, "encoder", None)
    groups = getattr(encoder, "albert_layer_groups", None)
    if groups is None or any(len(g.albert_layers) != 1 for g in groups):
        return None
    n, n_groups = model.config.num_hidden_layers, model.config.num_hidden_groups
    # transformers' own schedule (AlbertTransformer.forward): layer i runs group
    # int(i / (n / n_groups)).
    blocks = [groups[int(i / (n / n_groups))].albert_layers[0] for i in range(n)]
    att = [b.attention for b in blocks]
    layers = [encoder.embedding_hidden_mapping_in, *blocks]
    return layers, [a.dense for a in att], [a.value for a in att]


_ADAPTERS: tuple[Adapter, ...] = (_bert_laid, _distilbert, _albert)


def _refusal(model: torch.nn.Module) -> str:
    name = type(model).__name__
    if getattr(getattr(model, "encoder", None), "albert_layer_groups", None) is not None:
        return (
            f"{name} (ALBERT) has layer groups of {model.config.inner_group_num} inner "
            "layers: a layer's hidden state is then the output of several attention blocks, "
            "so per-layer hooks, head gates and value norms are not defined for it (only "
            "inner_group_num = 1, as in every published ALBERT, is). Hidden states, attention "
            "and fill-mask still work."
        )
    return (
        f"ContextLens does not know where {name} keeps its layers and attention parts "
        "(known: BERT, RoBERTa, XLM-R, ELECTRA, DeBERTa-v2/v3, DistilBERT, MPNet, ALBERT). "
        "Hidden states, attention and fill-mask still work."
    )


def model_parts(model: torch.nn.Module) -> ModelParts:
    """The hook points of the bare encoder ``model`` (``BertModel``, ``MPNetModel``…), with
    :mod:`call_hooks` dispatchers installed on each.

    Raises:
        UnsupportedArchitectureError: an architecture with no adapter here, naming it and
            what is missing.
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


def refusal(model: torch.nn.Module) -> str:
    """Install the call-local hook dispatchers on ``model``'s parts now (at load time, before
    threads share it) and return ""; for an architecture without an adapter, install nothing
    and return why (the :class:`UnsupportedArchitectureError` message)."""
    try:
        model_parts(model)
    except UnsupportedArchitectureError as exc:
        return str(exc)
    return ""
