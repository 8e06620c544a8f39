"""ELMo's model surface: where its layers are, how one layer's states are read or replaced
with the layers above recomputed, and its language model (the forward/backward softmax).

The ELMo counterpart of :mod:`probing.encoders.surface` (the only other place that knows
ELMo's module names is :mod:`probing.encoders.elmo`). Positions are those of
``<S> w1 … wn </S>``: word ``i`` sits at ``i + 1``.

- **Layers** (the Encoding's numbering): 0 is the char-CNN token layer, the one vector
  ``x`` that both directions read (shown as ``[x; x]``); ``l`` (1 … L) is the ``l``-th LSTM
  layer of each direction, ``[forward_l; backward_l]`` (B, T, 2P) in sentence order. The
  directions are two separate stacks: the forward stack reads left to right, so its state
  at ``t`` has seen positions ``0 … t`` only; the backward stack reads the reversed
  sentence.
- **Hooks**: hidden state ``l`` passes through an identity *site* module (one per layer,
  :attr:`ElmoParts.layers`), so :meth:`ElmoParts.hidden_hook` takes the same call-local
  hooks (:mod:`call_hooks`) as a `transformers` layer: ``fn`` sees (B, T, 2P) and may
  return a replacement. The replacement's halves go on into their own direction's next
  LSTM layer (layer 0: each direction reads its own half of ``[x; x]``), with the residual
  connection, as in :class:`probing.encoders.elmo.ElmoBiLm`: the forward stack never reads
  the backward half. A forward-only run (:meth:`ElmoParts.run` with ``forward_only``)
  computes no backward stack; its hooks see the forward half alone (B, T, P).
- **LM**: the folder's softmax (:mod:`probing.encoders.elmo_softmax`) shared by both
  directions: the forward LM predicts the token at ``t`` from its top layer at ``t - 1``,
  the backward LM from its top layer at ``t + 1`` (:meth:`ElmoParts.next_word_log_probs`).
- An LSTM has no attention heads: the head hooks raise
  :class:`~probing.errors.UnsupportedArchitectureError` naming what is missing.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import torch
from torch import Tensor, nn

from probing.encoders import call_hooks
from probing.encoders.elmo_chars import batch_to_char_ids, reverse_padded
from probing.errors import NoLMHeadError, UnsupportedArchitectureError

if TYPE_CHECKING:
    from probing.encoders.elmo import ElmoBiLm
    from probing.encoders.elmo_softmax import ElmoSoftmax

ARCHITECTURE = "ELMo (char-CNN token layer, forward and backward LSTM stacks)"
DIRECTIONS = ("forward", "backward")

LayerStates = list[tuple[Tensor, "Tensor | None"]]
"""Per layer 0 … L, (forward (B, T, P), backward (B, T, P) or None in a forward-only run),
both in sentence order, ``<S>``/``</S>`` included."""


@dataclass(frozen=True)
class ElmoParts:
    """The hook points and LM of one ELMo.

    Attributes:
        architecture: what it is (for messages).
        model: the biLM (char-CNN and LSTM stacks).
        softmax: the folder's LM softmax, None for an encoder only.
        layers: identity site modules, one per hidden state 0 … L (hook them through
            :meth:`hidden_hook`).
    """

    architecture: str
    model: ElmoBiLm
    softmax: ElmoSoftmax | None
    layers: list[nn.Module]

    @property
    def n_layers(self) -> int:
        return len(self.layers) - 1

    @property
    def dim(self) -> int:
        """P: dims per direction."""
        return int(self.model.config.projection_dim)

    n_heads = 0
    shared = False

    # -- hooks ----------------------------------------------------------------------------

    def hidden_hook(self, layer: int, fn: call_hooks.PostFn) -> contextlib.AbstractContextManager:
        """``fn`` sees (and may replace) hidden state ``layer`` (0 … L) as the layers above
        read it: (B, T, 2P) ``[forward; backward]`` (a forward-only run: (B, T, P))."""
        return call_hooks.forward_hook(self.layers[layer], fn)

    def block_pre_hook(self, layer: int, fn: call_hooks.PreFn) -> contextlib.AbstractContextManager:
        raise UnsupportedArchitectureError(
            f"{ARCHITECTURE}: its layers are LSTM stacks, not blocks with separate arguments; "
            "replace a layer's states with hidden_hook instead."
        )

    def head_input_pre_hook(
        self, block: int, fn: call_hooks.PreFn
    ) -> contextlib.AbstractContextManager:
        raise UnsupportedArchitectureError(f"{ARCHITECTURE} is an LSTM: it has no attention heads.")

    value_hook = head_input_pre_hook

    # -- running the model ------------------------------------------------------------------

    def char_ids(self, sentences: Sequence[Sequence[str]]) -> Tensor:
        """int64 (B, max_len + 2, C) char ids of the sentences with ``<S>``/``</S>``."""
        cfg = self.model.config
        ids = batch_to_char_ids([list(s) for s in sentences], cfg.max_characters_per_token)
        return ids.to(self.model.token_encoder.projection.weight.device)

    def run(self, ids: Tensor, forward_only: bool = False) -> tuple[LayerStates, Tensor]:
        """Every layer's (forward, backward) states for char ids (B, T, C) from
        :meth:`char_ids`, as :class:`ElmoBiLm` computes them (zero initial state), with the
        hooks attached in this context free to replace each layer before the next reads it.
        ``forward_only``: no backward stack (the forward LM needs none; its entries are None).
        Returns the per-layer states after the hooks and the (B, T) token mask."""
        model = self.model
        cfg = model.config
        B, T, _ = ids.shape
        mask = (ids > 0).any(dim=-1)
        lengths = mask.sum(dim=1)
        token = torch.zeros(B, T, cfg.projection_dim, device=ids.device)
        unique, inverse = torch.unique(ids[mask], dim=0, return_inverse=True)
        token[mask] = model.token_encoder(unique)[inverse].float()
        state = model.zero_state(B, token)
        f, b = self._site(0, token, None if forward_only else token)
        states = [(f, b)]
        x = [f, None if b is None else reverse_padded(b, lengths)]  # backward reads reversed
        for li in range(cfg.n_layers):
            outs = []
            for direction in range(1 if forward_only else 2):
                out, _ = model.lstms[direction][li](x[direction], mask, state[direction][li])
                if cfg.use_skip_connections and li > 0:
                    out = out + x[direction]
                outs.append(out)
            f, b = self._site(
                li + 1, outs[0], None if forward_only else reverse_padded(outs[1], lengths)
            )
            states.append((f, b))
            x = [f, None if b is None else reverse_padded(b, lengths)]
        return states, mask

    def _site(self, layer: int, f: Tensor, b: Tensor | None) -> tuple[Tensor, Tensor | None]:
        """Layer ``layer``'s states through its site module (only when this context has hooks
        attached: otherwise nothing is concatenated or copied)."""
        if not call_hooks.active():
            return f, b
        both = f if b is None else torch.cat([f, b], dim=-1)
        out = self.layers[layer](both)
        if out is both:
            return f, b
        P = f.shape[-1]
        return out[..., :P], (None if b is None else out[..., P:])

    # -- the LM ---------------------------------------------------------------------------

    def lm(self, what: str = "This analysis") -> ElmoSoftmax:
        """The softmax, or NoLMHeadError saying that this folder ships none."""
        if self.softmax is None:
            raise NoLMHeadError(
                f"{what} needs ELMo's bi-LM softmax, and this ELMo's folder has no "
                "softmax.safetensors (an encoder only)."
            )
        return self.softmax

    def next_word_log_probs(
        self, states: LayerStates, rows: Tensor, cols: Tensor, direction: str, chunk: int = 256
    ) -> Tensor:
        """(n, V) float32 log-probabilities of the token at positions (rows[i], cols[i]) from
        the ``direction`` LM: the forward LM reads its top layer at ``cols - 1``, the backward
        LM at ``cols + 1``."""
        top_f, top_b = states[-1]
        if direction == "forward":
            at = top_f[rows, cols - 1]
        elif direction == "backward" and top_b is not None:
            at = top_b[rows, cols + 1]
        else:
            raise ValueError(f"no {direction!r} LM states in this run")
        return self.lm().log_prob(at, chunk=chunk)


def word_mask(sentences: Sequence[Sequence[str]], T: int, device: torch.device) -> Tensor:
    """(B, T) True at the words of each sentence (not ``<S>``, ``</S>`` or padding)."""
    words = torch.zeros(len(sentences), T, dtype=torch.bool, device=device)
    for b, s in enumerate(sentences):
        words[b, 1 : len(s) + 1] = True
    return words


def elmo_parts(model: ElmoBiLm, softmax: ElmoSoftmax | None) -> ElmoParts:
    """The surface of ``model`` (with its folder's ``softmax`` or None), its site modules'
    :mod:`call_hooks` dispatchers installed (at load time, before threads share it)."""
    sites: list[nn.Module] = [nn.Identity() for _ in range(model.config.n_layers + 1)]
    call_hooks.install_all(sites)
    return ElmoParts(ARCHITECTURE, model, softmax, sites)
